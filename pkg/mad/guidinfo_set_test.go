package mad_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
)

func TestAliasGUIDRecord(t *testing.T) {
	tests := []struct {
		slot      int
		wantBlock uint8
		wantMask  uint64 // LID 0x1, BlockNum 0x2, GUIDn 0x10<<n
	}{
		{0, 0, 0x13},
		{1, 0, 0x23},
		{9, 1, 0x23},
		{255, 31, 0x803},
	}
	for _, tt := range tests {
		r, mask, err := mad.AliasGUIDRecord(4, tt.slot, 0x1234)
		if err != nil {
			t.Fatal(err)
		}
		want := [8]uint64{}
		want[tt.slot%8] = 0x1234
		var got [8]uint64
		for i, g := range r.GUIDs() {
			got[i] = uint64(g)
		}
		if diff := cmp.Diff(want, got); diff != "" || r.LID != 4 || r.BlockNum != tt.wantBlock || mask != tt.wantMask {
			t.Errorf("slot %d: LID %d block %d mask %#x, want block %d mask %#x; GUIDs (-want +got):\n%s", tt.slot, r.LID, r.BlockNum, mask, tt.wantBlock, tt.wantMask, diff)
		}
	}
	for _, slot := range []int{-1, 256} {
		if _, _, err := mad.AliasGUIDRecord(4, slot, 1); err == nil {
			t.Errorf("slot %d: no error", slot)
		}
	}
}
