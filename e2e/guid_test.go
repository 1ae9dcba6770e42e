package e2e

import (
	"regexp"
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

// perfTrafficLines matches the packet and data counters' values.
var perfTrafficLines = regexp.MustCompile(`(Port(?:Xmit|Rcv)(?:Data|Pkts):\.+)\d+`)

// TestGIDTargets: a port GID target is resolved through the SA's
// PathRecord to a LID route; the output is infiniband-diags' for that LID
// (infiniband-diags' tools take no GID targets).
func TestGIDTargets(t *testing.T) {
	f := smallFabric(t)
	for _, c := range []struct {
		tool      string
		ref, ours []string
	}{
		{"smpquery", []string{"nodeinfo", "4"}, []string{"nodeinfo", "fe80::10:4"}},
		{"smpquery", []string{"portinfo", "1", "3"}, []string{"portinfo", "fe80::20:0", "3"}},
		{"perfquery", []string{"6", "1"}, []string{"fe80::10:a", "1"}},
		{"ibaddr", []string{"5"}, []string{"fe80::10:7"}},
		{"ibtracert", []string{"2", "6"}, []string{"fe80::10:1", "fe80::10:a"}},
	} {
		t.Run(c.tool+" "+strings.Join(c.ours, " "), func(t *testing.T) {
			// ibsim counts the MADs themselves in the traffic counters.
			mask := func(b []byte) []byte { return perfTrafficLines.ReplaceAll(b, []byte("$1N")) }
			sameOutput(t, f, "Hca1", mask, append([]string{c.tool}, c.ref...), append([]string{c.tool}, c.ours...))
		})
	}
	t.Run("unknown GID", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 3, "resolving GID fe80::99:1 through the SA", "perfquery", "fe80::99:1")
	})
}
