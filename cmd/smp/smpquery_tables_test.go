package smp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
)

func TestSmpqueryTables(t *testing.T) {
	zeros := func(n int) string { return strings.Repeat(" 0x0000", n) }
	tests := []struct {
		args []string
		want string
		// wantMods are the attribute modifiers of the table's Gets.
		attr     mad.AttrID
		wantMods []uint32
	}{
		// A switch port's P_Keys: SwitchInfo's enforcement capacity, 40,
		// in two blocks of the port (modifier bits 16-31).
		{[]string{"pkeys", "2", "1"}, "   0: 0xffff 0x8001 0x0002" + zeros(5) + "\n   8:" + zeros(8) + "\n  16:" + zeros(8) + "\n  24:" + zeros(8) +
			"\n  32: 0xffff 0x8001 0x0002" + zeros(5) + "\n40 pkeys capacity for this port\n",
			mad.AttrPKeyTable, []uint32{1 << 16, 1<<16 | 1}},
		{[]string{"gi", "2"}, "   0: 0x0000000000200000 0x0000000000200001\n   2: 0x0000000000000000 0x0000000000000000\n" +
			"   4: 0x0000000000200004 0x0000000000000000\n5 guids capacity for this port\n",
			mad.AttrGUIDInfo, []uint32{0}},
		// A CA has one table, input and output port 0.
		{[]string{"sl2vl", "-D", "0,1"}, "# SL2VL table: DR path slid 65535; dlid 65535; 0,1\n#                 SL: | 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n" +
			"ports: in  0, out  0: | 0| 0| 0| 0| 0| 0| 0| 0| 1| 1| 1| 1| 1| 1| 1| 1|\n",
			mad.AttrSLtoVLMappingTable, []uint32{0}},
		// High capacity 8: block 3 only.
		{[]string{"vlarb", "-D", "0", "2"}, "", mad.AttrVLArbitrationTable, []uint32{1<<16 | 2, 2<<16 | 2, 3<<16 | 2}},
		{[]string{"vlarb", "2"}, "# No VLArbitration tables (BSP0): Lid 2 port 0\n", mad.AttrVLArbitrationTable, nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f := newSMPFabric()
			got, _, err := smpToolRunners["smpquery"](t, f.handle, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); tt.want != "" && diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			var mods []uint32
			for _, r := range append(f.sw.Requests(), f.ca.Requests()...) {
				if r.AttrID == tt.attr {
					mods = append(mods, r.Mod)
				}
			}
			if diff := cmp.Diff(tt.wantMods, mods); diff != "" {
				t.Errorf("modifiers (-want +got):\n%s", diff)
			}
		})
	}
}
