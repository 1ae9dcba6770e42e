package e2e

import (
	"slices"
	"strings"
	"testing"
)

// TestSmpqueryMatchesReference compares smpquery NodeInfo and NodeDesc by
// LID and by direct route, from an HCA and from a switch.
func TestSmpqueryMatchesReference(t *testing.T) {
	f := smallFabric(t)
	hosts := []string{"Hca1", "Switch2"}
	args := [][]string{
		{"nodeinfo", "1"}, {"NI", "2"}, {"NodeInfo", "0x3"},
		{"-D", "nodeinfo", "0"}, {"-D", "ni", "0,1"}, {"-D", "nodeinfo", "0,1,3"},
		{"nodedesc", "1"}, {"ND", "2"}, {"-D", "nd", "0"}, {"-D", "nodedesc", "0,1,3"},
		{"-t", "500", "--Lid", "nodeinfo", "3"},
		{"portinfo", "1"}, {"PI", "2", "1"}, {"pi", "3", "0"}, {"pi", "3", "2"}, {"-x", "pi", "3", "1"},
		{"-K", "pi", "2"}, {"-D", "pi", "0,1", "3"},
		{"switchinfo", "1"}, {"SI", "3"}, {"-D", "si", "0,1"},
		{"pkeys", "2"}, {"PKeyTable", "3", "1"}, {"pkeys", "1", "0"},
		{"sl2vl", "2"}, {"SL2VLTable", "3"}, {"sl2vl", "3", "2"},
		{"vlarb", "2"}, {"VLArbitration", "3"}, {"vlarb", "3", "1"},
		{"guidinfo", "2"}, {"GI", "3"},
		{"mepi", "2", "1"},
	}
	for _, h := range hosts {
		for _, a := range args {
			if h != "Hca1" && slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "0,") }) {
				continue // routes from Hca1; from a switch they lead elsewhere
			}
			t.Run(h+" "+strings.Join(a, " "), func(t *testing.T) {
				t.Parallel()
				sameAsReference(t, f, h, "smpquery", a...)
			})
		}
	}
}

// TestSmpqueryErrors checks where infiniband-diags' smpquery fails with
// ibwarn/ibpanic lines and exit 255, ibtool prints one line: exit 2 for
// what the operator typed, 3 for a fabric that does not answer.
func TestSmpqueryErrors(t *testing.T) {
	f := smallFabric(t)
	tests := []struct {
		exit int
		msg  string
		args []string
	}{
		{3, "SubnGet(NodeInfo) to Lid 200: no response after 3 tries", []string{"-t", "100", "nodeinfo", "200"}},
		{3, "SubnGet(NodeInfo) to DR path slid 65535; dlid 65535; 0,1,7: no response after 2 tries", []string{"-t", "100", "--retries", "1", "-D", "nodedesc", "0,1,7"}},
		{2, `operation 'nosuch' not supported`, []string{"nosuch", "1"}},
		{2, `invalid LID or GUID "0x"`, []string{"nodeinfo", "0x"}},
		{2, `invalid LID "49152"`, []string{"nodeinfo", "49152"}},
		{2, `invalid DR path "1,2"`, []string{"-D", "nodeinfo", "1,2"}},
		{2, `-G given but "12" is a LID`, []string{"-G", "nodeinfo", "12"}},
		{2, `invalid port number "256": out of range 0 to 255`, []string{"pi", "2", "256"}},
		// A combined route (LID-routed to 3, then DR): ibsim does not route them.
		{3, "to Lid 3 DR path slid 2; dlid 65535; 0,1: ibsim drops directed-route SMPs with DrSLID 2", []string{"-c", "nodeinfo", "3", "0,1"}},
		{3, "operation PortInfoExtended: port info extended not supported: CapabilityMask2 0x30 does not indicate PortInfoExtended", []string{"pie", "2"}},
		{3, "operation PKeyTable: invalid port number 9: the node has 8 ports", []string{"pkeys", "3", "9"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			failsCleanly(t, f, "Hca1", tt.exit, tt.msg, "smpquery", tt.args...)
		})
	}
}
