package mad_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// record returns n bytes: the head, then the byte pattern 1, 2, 3, ...
// from offset at on.
func record(n, at int, head ...byte) []byte {
	b := make([]byte, n)
	copy(b, head)
	for i := at; i < n; i++ {
		b[i] = byte(i - at + 1)
	}
	return b
}

func TestSARecordValues(t *testing.T) {
	var sl2vl mad.SLtoVLMappingTableRecord
	if err := sl2vl.UnmarshalBinary(record(16, 8)); err != nil {
		t.Fatal(err)
	}
	var vla mad.VLArbitrationTableRecord
	if err := vla.UnmarshalBinary(record(72, 8)); err != nil {
		t.Fatal(err)
	}
	var pk mad.PKeyTableRecord
	if err := pk.UnmarshalBinary(record(72, 8, 0, 1, 0x01, 0x02)); err != nil {
		t.Fatal(err)
	}
	var mft mad.MulticastForwardingTableRecord
	if err := mft.UnmarshalBinary(record(72, 8)); err != nil {
		t.Fatal(err)
	}
	var gir mad.GUIDInfoRecord
	if err := gir.UnmarshalBinary(record(72, 8)); err != nil {
		t.Fatal(err)
	}
	var sr mad.ServiceRecord
	if err := sr.UnmarshalBinary(record(176, 112)); err != nil {
		t.Fatal(err)
	}
	vls, weights := vla.Entries()
	pks, masks := pk.PKeys(), mft.PortMasks()
	type got struct {
		SLVLs          [16]uint8
		VL0, W0, VL31  uint8
		PKey0, PKey31  uint16
		Mask0          uint16
		Block, Swapped uint16
		GUID0, GUID7   rdma.GUID
		Data8          []uint64
		Data16, Data64 uint64
	}
	g := got{SLVLs: sl2vl.VLs(), VL0: vls[0], W0: weights[0], VL31: vls[31], PKey0: pks[0], PKey31: pks[31],
		Mask0: masks[0], Block: pk.BlockNum, Swapped: pk.SwappedBlockNum(), GUID0: gir.GUIDs()[0], GUID7: gir.GUIDs()[7],
		Data8: sr.ServiceData(8)[:2], Data16: sr.ServiceData(16)[0], Data64: sr.ServiceData(64)[1]}
	want := got{SLVLs: [16]uint8{0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8}, VL0: 1, W0: 2, VL31: 63,
		PKey0: 0x0102, PKey31: 0x3f40, Mask0: 0x0102, Block: 0x0102, Swapped: 0x0201,
		GUID0: 0x0102030405060708, GUID7: 0x393a3b3c3d3e3f40,
		Data8: []uint64{1, 2}, Data16: 0x1112, Data64: 0x393a3b3c3d3e3f40}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("record values (-want +got):\n%s", diff)
	}
	if n := []int{len(sr.ServiceData(8)), len(sr.ServiceData(16)), len(sr.ServiceData(32)), len(sr.ServiceData(64))}; !cmp.Equal(n, []int{16, 8, 4, 2}) {
		t.Errorf("ServiceData counts %v, want [16 8 4 2]", n)
	}
}
