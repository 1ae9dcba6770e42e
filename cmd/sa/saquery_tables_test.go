package sa

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
)

// marshal returns a record's encoding.
func marshal(t *testing.T, a mad.Attribute) []byte {
	t.Helper()
	b, err := a.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSaqueryTableText checks the text of the records whose fields are
// tables or packed bytes, as infiniband-diags' saquery prints them.
func TestSaqueryTableText(t *testing.T) {
	sl2vl := &mad.SLtoVLMappingTableRecord{LID: 1, InputPortNum: 2, OutputPortNum: 3,
		SLToVLMappingTable: mad.SLtoVLMappingTable{SLToVLMap: 0x0123456789abcdef}}
	vla := &mad.VLArbitrationTableRecord{LID: 1, OutputPortNum: 3, BlockNum: 1}
	vla.VLArbitrationTable.VLArbTbl[0], vla.VLArbitrationTable.VLArbTbl[1] = 1, 32
	pk := &mad.PKeyTableRecord{LID: 2, BlockNum: 1, PortNum: 1}
	pk.PKeyTable.PKeys[0], pk.PKeyTable.PKeys[1] = 0xff, 0xff
	mft := &mad.MulticastForwardingTableRecord{LID: 3, Position: 1, BlockNum: 2}
	mft.MulticastForwardingTable.MulticastForwTbl[63] = 0x0e
	swi := &mad.SwitchInfoRecord{LID: 3, SwitchInfo: mad.SwitchInfo{LinearFDBCap: 0xc000, LifeTimeValue: 18,
		PortStateChange: 1, InboundEnforcementCap: 1, EnhancedPort0: 1, MulticastFDBTop: 0xc001}}
	iir := &mad.InformInfoRecord{Enumeration: 2, InformInfo: mad.InformInfo{LIDRangeBegin: 0xffff, Type: 4,
		TrapNumber: 0x1234, QPN: 0x12, ProducerType: 0x2c9}}
	text := &saText{cpi: &classPortInfo{CapMask2: saCapMask2McastTop}}
	tests := []struct {
		name string
		rec  saTextRecord
		want string
	}{
		{"SL2VL", newSL2VLRecord(marshal(t, sl2vl)), "SL2VLTableRecord dump:\n\t\tLID........................1\n" +
			"\t\tInPort.....................2\n\t\tOutPort....................3\n" +
			"\t\tSL: 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n" +
			"\t\tVL: 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n"},
		{"VLAR", newVLArbRecord(marshal(t, vla)), "VLArbTableRecord dump:\n\t\tLID........................1\n" +
			"\t\tPort.......................3\n\t\tBlock......................1\n" +
			"\t\tVL    : 1| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0|\n" +
			"\t\tWeight:32| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0|\n" +
			"\t\tVL    : 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0|\n" +
			"\t\tWeight: 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0|\n"},
		// The block as the C tool prints it: its bytes swapped.
		{"PKTR", newPKeyTableRecord(marshal(t, pk)), "PKeyTableRecord dump:\n\t\tLID........................2\n" +
			"\t\tPort.......................1\n\t\tBlock......................256\n\t\tPKey Table:\n" +
			"\t\t0xffff 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n" +
			strings.Repeat("\t\t0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n", 3) + "\n"},
		{"SWIR", newSwitchInfoRecord(marshal(t, swi)), "SwitchInfoRecord dump:\n\t\tRID\n" +
			"\t\tLID.....................................3\n\t\tSwitchInfo dump:\n" +
			"\t\tLinearFDBCap............................0xC000\n" +
			"\t\tRandomFDBCap............................0x0\n" +
			"\t\tMulticastFDBCap.........................0x0\n" +
			"\t\tLinearFDBTop............................0x0\n" +
			"\t\tDefaultPort.............................0\n" +
			"\t\tDefaultMulticastPrimaryPort.............0\n" +
			"\t\tDefaultMulticastNotPrimaryPort..........0\n" +
			"\t\tLifeTimeValue/PortStateChange/OpSL2VL...0x94\n" +
			"\t\tLIDsPerPort.............................0x0\n" +
			"\t\tPartitionEnforcementCap.................0x0\n" +
			"\t\tflags...................................0x88\n" +
			"\t\tMulticastFDBTop.........................0xC001\n"},
		{"IIR", newInformInfoRecord(marshal(t, iir)), "InformInfoRecord dump:\n\t\tRID\n" +
			"\t\tSubscriberGID...........::\n\t\tSubscriberEnum..........0x2\n\t\tInformInfo dump:\n" +
			"\t\tgid.....................::\n\t\tlid_range_begin.........65535\n\t\tlid_range_end...........0\n" +
			"\t\tis_generic..............0x0\n\t\tsubscribe...............0x0\n\t\ttrap_type...............0x4\n" +
			"\t\tdev_id..................0x1234\n\t\tqpn.....................<not displayed>\n" +
			"\t\tresp_time_val...........0x0\n\t\tvendor_id...............0x0002C9\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got strings.Builder
			tt.rec.writeText(&got, text)
			if diff := cmp.Diff(tt.want, got.String()); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
	var got strings.Builder
	newMFTRecord(marshal(t, mft)).writeText(&got, text)
	if want := "\t\t0xc05f\t0x000e\n\n"; !strings.HasSuffix(got.String(), want) {
		t.Errorf("MFT record's last line: %q, want it to end in %q", got.String(), want)
	}
}
