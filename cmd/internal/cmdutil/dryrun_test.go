package cmdutil

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestPlanLine(t *testing.T) {
	gid, _ := rdma.ParseGID("fe80::2:c903:0:1492")
	v := uint64(3)
	tests := []struct {
		plan madrpc.Plan
		want string
	}{
		{madrpc.Plan{Request: "SubnSet(PortInfo)", Device: "mlx5_0", Port: 1, LID: 4, DR: []int{0, 3}, AttrMod: 3,
			Fields: []madrpc.PlannedField{{Name: "LinkWidthEnabled", Value: &v, Text: "1X or 4X"}, {Name: "Data", Text: ""}, {Name: "S", Text: `a"b`}}},
			`dry-run: SubnSet(PortInfo) from=mlx5_0/1 lid=4 dr=0,3 attrmod=0x3 LinkWidthEnabled="1X or 4X" Data="" S="a\"b"` + "\n"},
		{madrpc.Plan{Request: "PerfSet(PortCounters)", Device: "ibsim0", GID: &gid}, "dry-run: PerfSet(PortCounters) from=ibsim0/0 gid=fe80::2:c903:0:1492 attrmod=0x0\n"},
		// A vendor class's request is one word on the line.
		{madrpc.Plan{Request: "Vendor1(0x0a) Set(ConfigSpaceAccess)", Device: "mlx5_0", Port: 1, LID: 6, AttrMod: 0x810000,
			Fields: []madrpc.PlannedField{{Name: "Data", Text: "0010013c"}}},
			"dry-run: Vendor1(0x0a)Set(ConfigSpaceAccess) from=mlx5_0/1 lid=6 attrmod=0x810000 Data=0010013c\n"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, string(appendPlanLine(nil, &tt.plan))); diff != "" {
			t.Errorf("unexpected line (-want +got):\n%s", diff)
		}
	}
}
