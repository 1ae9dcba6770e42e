package mad

import (
	"encoding/hex"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestSMPTables(t *testing.T) {
	var pk PKeyTable
	pk.SetPKey(0, 0xffff)
	pk.SetPKey(31, 0x8001)
	var vla VLArbitrationTable
	vla.SetEntry(1, VLArbEntry{VL: 0x1f, Weight: 200})
	sl := SLtoVLMappingTable{SLToVLMap: 0x0123456789abcdef}
	gi := GUIDInfo{GUID0: 1, GUID7: 8}
	got := []any{pk.PKey(0), pk.PKey(1), pk.PKey(31), vla.Entry(0), vla.Entry(1), sl.VL(0), sl.VL(1), sl.VL(15), gi.GUIDs()}
	want := []any{uint16(0xffff), uint16(0), uint16(0x8001), VLArbEntry{}, VLArbEntry{VL: 0xf, Weight: 200},
		uint8(0), uint8(1), uint8(0xf), [GUIDsPerBlock]rdma.GUID{1, 0, 0, 0, 0, 0, 0, 8}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if b, _ := pk.MarshalBinary(); hex.EncodeToString(b[:4]) != "ffff0000" || hex.EncodeToString(b[62:]) != "8001" {
		t.Errorf("PKeyTable encodes as %x", b)
	}
}

func TestNodeInfoFacts(t *testing.T) {
	tests := []struct {
		ni             NodeInfo
		isSwitch, mepi bool
	}{
		{NodeInfo{NodeType: 2, DeviceID: 0xcb20}, true, true},
		{NodeInfo{NodeType: 1, DeviceID: 0x1017}, false, true},
		{NodeInfo{NodeType: 1, DeviceID: 0x1b33, VendorID: 0x119f}, false, true},
		{NodeInfo{NodeType: 1, DeviceID: 0x1b33, VendorID: 0x2c9}, false, false},
		{NodeInfo{NodeType: 3}, false, false},
	}
	for _, tt := range tests {
		if got := [2]bool{tt.ni.IsSwitch(), tt.ni.HasMlnxExtPortInfo()}; got != [2]bool{tt.isSwitch, tt.mepi} {
			t.Errorf("%+v: IsSwitch, HasMlnxExtPortInfo = %v, want %v %v", tt.ni, got, tt.isSwitch, tt.mepi)
		}
	}
}

// TestNoticeDetails checks each trap's encoding against the
// ib_mad_notice_attr_t layout infiniband-diags fills.
func TestNoticeDetails(t *testing.T) {
	tests := []struct {
		details Attribute
		want    string // DataDetails in hex, up to its last byte that is not 0
	}{
		{&Trap129{LID: 0x12, PortNum: 3}, "0000001203"},
		{&Trap144{LID: 0x12, LocalChanges: 1, CapabilityMask: 0x0251084a, ChangeFlags: 1}, "0000001200010251084a0001"},
		{&Trap145{SystemImageGUID: 0x1234567812345678}, "000000000000" + "1234567812345678"},
		{&Trap256{LID: 0x12, DRSLID: 0xffff, Method: 1, AttributeID: 0x15, AttributeModifier: 0x12, MKey: 0x1234567812345678,
			DRNotice: 1, DRHopCount: 4, DRNoticeReturnPath: [30]byte{5, 6, 7, 8}},
			"0000" + "0012ffff0100001500000012123456781234567800840506070800"[:52]},
		{&Trap257{LID1: 1, LID2: 2, Key: 0x12345678, QP1: 0x010101, QP2: 0x020202,
			GID1: rdma.NewGID(0xf8c0000000000001, 0x1111222233334444), GID2: rdma.NewGID(0xf8c0000000000001, 0x5678567812341234)},
			"000000010002123456780001010100020202f8c00000000000011111222233334444f8c00000000000015678567812341234"},
	}
	for _, tt := range tests {
		t.Run(tt.details.Layout().Name, func(t *testing.T) {
			n := Notice{DataDetails: [54]byte{53: 0xff}}
			if err := n.SetDetails(tt.details); err != nil {
				t.Fatal(err)
			}
			got := hex.EncodeToString(n.DataDetails[:])
			if diff := cmp.Diff(tt.want, got[:len(tt.want)]); diff != "" || got[len(tt.want):] != hex.EncodeToString(make([]byte, 54-len(tt.want)/2)) {
				t.Errorf("DataDetails %s (-want +got):\n%s", got, diff)
			}
			back := tt.details.Layout().New()
			if err := n.Details(back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.details, back); diff != "" {
				t.Errorf("Details(SetDetails(x)) != x (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzNoticeDetails(f *testing.F) {
	f.Add(make([]byte, 64))
	seed, _ := hex.DecodeString("820000010100001200000000" + "0012ffff0100001500000012123456781234567800840506070800")
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		var n Notice
		if err := n.UnmarshalBinary(data); err != nil {
			return
		}
		for _, d := range []Attribute{&Trap129{}, &Trap144{}, &Trap145{}, &Trap256{}, &Trap257{}} {
			if err := n.Details(d); err != nil {
				t.Fatalf("%s: %v", d.Layout().Name, err)
			}
			var m Notice
			if err := m.SetDetails(d); err != nil {
				t.Fatalf("%s: %v", d.Layout().Name, err)
			}
			again := d.Layout().New()
			if err := m.Details(again); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(d, again); diff != "" {
				t.Fatalf("%s: Details(SetDetails(x)) != x (-want +got):\n%s", d.Layout().Name, diff)
			}
		}
	})
}
