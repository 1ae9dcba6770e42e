package e2e

import (
	"strings"
	"testing"
)

// TestGUIDTargetsMatchReference: port GUID targets are resolved through
// the SA's PathRecord, as infiniband-diags does, and give its output.
func TestGUIDTargetsMatchReference(t *testing.T) {
	f := smallFabric(t)
	for _, args := range [][]string{
		{"smpquery", "-G", "nodeinfo", "0x100004"},
		{"smpquery", "-G", "portinfo", "0x200001", "3"},
		{"smpquery", "-G", "nodedesc", "0x0000000000100007"},
		{"ibaddr", "-G", "0x100004"},
		{"ibroute", "-G", "0x200001"},
		{"ibccquery", "-G", "CongestionInfo", "0x200001"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			sameAsReference(t, f, "Hca1", args[0], args[1:]...)
		})
	}
	t.Run("fat tree", func(t *testing.T) {
		ft := fatTree(t)
		sameAsReference(t, ft, "H-0001", "smpquery", "-G", "nodeinfo", "0x0000000000100005")
	})
	t.Run("unknown GUID", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 3, "resolving port GUID 0x0000000000999999 through the SA", "smpquery", "-G", "nodeinfo", "0x999999")
	})
}
