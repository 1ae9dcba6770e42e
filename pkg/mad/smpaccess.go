package mad

import (
	"encoding/binary"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// Typed access to the SMP attributes whose generated struct holds a block
// of entries as bytes (PKeyTable, VLArbitrationTable), packs them into one
// number (SLtoVLMappingTable) or carries another attribute (Notice), and
// the NodeInfo and PortInfo facts the tools test.

// Entries per block of the SMP tables (IBA 14.2.5.7, 14.2.5.5, 14.2.5.9).
const (
	PKeysPerBlock        = 32
	GUIDsPerBlock        = 8
	VLArbEntriesPerBlock = 32
)

// IsSwitch reports whether the node is a switch.
func (n *NodeInfo) IsSwitch() bool { return n.NodeType == NodeTypeSwitch }

// HasMlnxExtPortInfo reports whether infiniband-diags reads Mellanox's
// extended port info (MlnxExtPortInfo) from the node: the devices its
// is_mlnx_ext_port_info_supported lists, by device ID and, for Bull's,
// vendor ID.
func (n *NodeInfo) HasMlnxExtPortInfo() bool {
	d := n.DeviceID
	bull := n.VendorID == 0x119f
	switch {
	case d >= 0xc738 && d <= 0xc73b, d == 0xc839, d == 0xcb20, d == 0xcf08, d == 0xcf09, d == 0xd2f0:
		return true
	case bull && (d == 0x1b02 || d == 0x1b50 || d == 0x1ba0 || (d >= 0x1bd0 && d <= 0x1bd5) || d == 0x1bf0):
		return true
	case d >= 0x1003 && d <= 0x101b, d == 0xa2d2:
		return true
	case bull && (d == 0x1b33 || d == 0x1b73 || d == 0x1b40 || d == 0x1b41 || d == 0x1b60 || d == 0x1b61 ||
		d == 0x1b83 || d == 0x1b93 || d == 0x1b94 || d == 0x1bb4 || d == 0x1bb5 || (d >= 0x1bc4 && d <= 0x1bc6)):
		return true
	}
	return false
}

// PKey returns entry i (0 to PKeysPerBlock-1) of the block.
func (t *PKeyTable) PKey(i int) uint16 { return binary.BigEndian.Uint16(t.PKeys[2*i:]) }

// SetPKey sets entry i (0 to PKeysPerBlock-1) of the block to k.
func (t *PKeyTable) SetPKey(i int, k uint16) { binary.BigEndian.PutUint16(t.PKeys[2*i:], k) }

// GUIDs returns the block's GUIDs in order.
func (g *GUIDInfo) GUIDs() [GUIDsPerBlock]rdma.GUID {
	return [GUIDsPerBlock]rdma.GUID{g.GUID0, g.GUID1, g.GUID2, g.GUID3, g.GUID4, g.GUID5, g.GUID6, g.GUID7}
}

// VL returns the VL that service level sl (0 to 15) maps to.
func (t *SLtoVLMappingTable) VL(sl int) uint8 { return uint8(t.SLToVLMap>>(60-4*sl)) & 0xf }

// VLArbEntry is one entry of a VL arbitration table: a VL and its weight.
type VLArbEntry struct {
	VL     uint8 `json:"vl"`
	Weight uint8 `json:"weight"`
}

// Entry returns entry i (0 to VLArbEntriesPerBlock-1) of the block.
func (t *VLArbitrationTable) Entry(i int) VLArbEntry {
	return VLArbEntry{VL: t.VLArbTbl[2*i] & 0xf, Weight: t.VLArbTbl[2*i+1]}
}

// SetEntry sets entry i (0 to VLArbEntriesPerBlock-1) of the block to e;
// the VL keeps its four bits.
func (t *VLArbitrationTable) SetEntry(i int, e VLArbEntry) {
	t.VLArbTbl[2*i], t.VLArbTbl[2*i+1] = e.VL&0xf, e.Weight
}

// Notice types (IBA 13.4.8.2, Notice:Type of a generic notice).
const (
	NoticeTypeFatal     = 0
	NoticeTypeUrgent    = 1
	NoticeTypeSecurity  = 2
	NoticeTypeSubnMgmt  = 3
	NoticeTypeInfo      = 4
	NoticeTypeEmpty     = 0x7f
	noticeDetailsLength = len(Notice{}.DataDetails)
)

// SetDetails encodes d, the data details of the notice's trap (Trap144,
// ...), into DataDetails; the bytes past d's are cleared.
func (n *Notice) SetDetails(d Attribute) error {
	b, err := d.AppendBinary(nil)
	if err != nil {
		return err
	}
	if len(b) > noticeDetailsLength {
		return &ShortDataError{Attr: "Notice", Want: len(b), Got: noticeDetailsLength}
	}
	n.DataDetails = [noticeDetailsLength]byte{}
	copy(n.DataDetails[:], b)
	return nil
}

// Details decodes DataDetails into d, the data details of the notice's
// trap.
func (n *Notice) Details(d Attribute) error { return d.UnmarshalBinary(n.DataDetails[:]) }
