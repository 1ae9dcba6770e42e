package e2e

import (
	"strings"
	"testing"
)

// TestIbfindnodesusingMatchesReference lists the nodes routed through
// switch ports on the two-switch fabric and a fat tree, with the topology
// regenerated first (-R) and then reused.
func TestIbfindnodesusingMatchesReference(t *testing.T) {
	f := smallFabric(t)
	for _, args := range [][]string{{"-R", "0x200001", "3"}, {"0x200001", "1"}, {"0x200001", "5"}, {"0x200000", "2"}, {"0x200001", "4"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			// The script runs ibroute -G on the peer's node GUID, which
			// for a CA the SA has no path to: a warning on stderr.
			compareExit(t, f, "Hca1", 0, "ibfindnodesusing", args...)
		})
	}
	t.Run("not found", func(t *testing.T) {
		compareExit(t, f, "Hca1", 1, "ibfindnodesusing", "Switch1", "5")
	})
	t.Run("fat tree", func(t *testing.T) {
		ft := fatTree(t)
		for _, args := range [][]string{{"-R", "0x0000000000200003", "19"}, {"0x0000000000200000", "1"}} {
			compareExit(t, ft, "H-0001", 0, "ibfindnodesusing", args...)
		}
	})
}
