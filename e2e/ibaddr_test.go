package e2e

import (
	"slices"
	"strings"
	"testing"
)

func TestIbaddrMatchesReference(t *testing.T) {
	f := smallFabric(t)
	args := [][]string{
		nil, {"1"}, {"3"}, {"-l", "3"}, {"-L", "3"}, {"-g", "3"}, {"-g", "-l", "2"},
		{"3", "2"}, // a switch port without a GID prefix: ::0.32.0.1
		{"-L", "0x3", "1"}, {"-D", "0,1"}, {"-D", "0,1", "3"},
	}
	for _, h := range []string{"Hca1", "Switch2"} {
		for _, a := range args {
			if h != "Hca1" && slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "0,") }) {
				continue // DR paths from Hca1
			}
			t.Run(h+" "+strings.Join(a, " "), func(t *testing.T) {
				sameAsReference(t, f, h, "ibaddr", a...)
			})
		}
	}
}

func TestIbaddrErrors(t *testing.T) {
	f := smallFabric(t)
	tests := []struct {
		exit int
		msg  string
		args []string
	}{
		{3, "SubnGet(NodeInfo) to Lid 9: no response after 3 tries", []string{"9"}},
		{2, `-G given but "0x3" is a LID`, []string{"-G", "0x3"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			failsCleanly(t, f, "Hca1", tt.exit, tt.msg, "ibaddr", tt.args...)
		})
	}
}
