package e2e

import (
	"context"
	"strings"
	"testing"
)

func TestIbtracertMatchesReference(t *testing.T) {
	f := smallFabric(t)
	// LIDs: Switch1 1, Hca1 2, Switch2 3, Hca2 4, Hca3 5, Hca4 6.
	for _, h := range []string{"Hca1", "Switch2"} {
		for _, a := range [][]string{
			{"2", "5"}, {"-n", "4", "6"}, {"1", "3"}, {"3", "3"}, {"5", "2"}, {"6", "1"}, {"0x4", "0x3"}, {"-n", "3", "4"},
		} {
			t.Run(h+" "+strings.Join(a, " "), func(t *testing.T) {
				sameAsReference(t, f, h, "ibtracert", a...)
			})
		}
	}
}

func TestIbtracertErrors(t *testing.T) {
	f := smallFabric(t)
	tests := []struct {
		exit int
		msg  string
		args []string
	}{
		{3, "can't reach the destination port Lid 9: SubnGet(NodeInfo) to Lid 9: no response", []string{"2", "9"}},
		{2, `invalid LID or GUID "0x"`, []string{"2", "0x"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			failsCleanly(t, f, "Hca1", tt.exit, tt.msg, "ibtracert", tt.args...)
		})
	}
}

// TestFatTreeIbtracert traces between hosts on different leaves of the
// fat tree, through a spine, with LMC 1.
func TestFatTreeIbtracert(t *testing.T) {
	f := fatTree(t)
	lid := func(args ...string) string {
		out, errOut, exit, err := f.RunIbtool(context.Background(), ibtoolBin, "H-0001", "ibaddr", append([]string{"-L"}, args...)...)
		if err != nil || exit != 0 {
			t.Fatalf("ibaddr %q: exit %d, %v: %s", args, exit, err, errOut)
		}
		// "LID start N end M"
		return strings.Fields(string(out))[2]
	}
	local := lid()
	leaf := lid("0,1")
	spine := lid("0,1,19")
	far := lid("0,1,19,2,1") // a host on S-leaf-2
	for _, a := range [][]string{{local, far}, {far, local}, {"-n", local, far}, {leaf, spine}, {spine, far}, {far, leaf}} {
		t.Run(strings.Join(a, " "), func(t *testing.T) {
			sameAsReference(t, f, "H-0001", "ibtracert", a...)
		})
	}
}
