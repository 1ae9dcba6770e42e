package mad

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// MaxGUIDSlot is the last entry of a port's GUIDInfo table: 32 blocks of
// 8 GUIDs (IBA 14.2.5.5).
const MaxGUIDSlot = 255

// AliasGUIDRecord returns the GUIDInfoRecord and component mask that set
// GUID in entry slot of the GUID table of the port at lid (an alias GUID
// the SA programs): LID, the slot's block and that one GUID of it
// selected, as python-rdma's set_guid builds its SubnAdmSet.
func AliasGUIDRecord(lid rdma.LID, slot int, guid rdma.GUID) (*GUIDInfoRecord, uint64, error) {
	if slot < 0 || slot > MaxGUIDSlot {
		return nil, 0, fmt.Errorf("GUID slot %d: want 0 to %d", slot, MaxGUIDSlot)
	}
	r := &GUIDInfoRecord{LID: uint16(lid), BlockNum: uint8(slot / 8)}
	g := &r.GUIDInfo
	*[8]*rdma.GUID{&g.GUID0, &g.GUID1, &g.GUID2, &g.GUID3, &g.GUID4, &g.GUID5, &g.GUID6, &g.GUID7}[slot%8] = guid
	mask := layoutGUIDInfoRecord.ComponentMask("LID", "BlockNum", fmt.Sprintf("GUIDInfo.GUID%d", slot%8))
	return r, mask, nil
}
