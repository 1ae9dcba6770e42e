package e2e

import (
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// fatTree starts a 2-level fat tree of 36-port switches (two spines, three
// leaves, 48 hosts), with LMC 1 so every port has two LIDs. From H-0001,
// DR 0,1 is S-leaf-1 and 0,1,19 is S-spine-1.
func fatTree(t *testing.T) *simfabric.Fabric {
	t.Helper()
	net, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 2, Hosts: 48, Radix: 36})
	if err != nil {
		t.Fatal(err)
	}
	return simfabric.ForTest(t, simfabric.Options{Net: net, OpenSMArgs: []string{"--lmc", "1"}})
}

// TestFatTreeMatchesReference runs the single-target tools on switches
// with more than nine ports and on LIDs with an LMC.
func TestFatTreeMatchesReference(t *testing.T) {
	f := fatTree(t)
	tests := []struct {
		tool string
		args []string
	}{
		{"smpquery", []string{"-D", "nodeinfo", "0,1,19"}},
		{"smpquery", []string{"-D", "portinfo", "0,1", "19"}},
		{"smpquery", []string{"-D", "switchinfo", "0,1"}},
		{"smpquery", []string{"-D", "pkeys", "0,1,19", "1"}},
		{"smpquery", []string{"-D", "sl2vl", "0,1", "19"}},
		{"smpquery", []string{"-D", "vlarb", "0,1", "3"}},
		{"smpquery", []string{"-D", "guidinfo", "0,1"}},
		{"smpquery", []string{"-D", "nodedesc", "0,1,19,2"}},
		{"smpquery", []string{"-D", "portinfo", "0", "1"}},
		{"smpdump", []string{"-D", "0,1,19", "0x12"}},
		{"ibroute", []string{"-D", "0,1"}},
		{"ibroute", []string{"-D", "0,1,19"}},
		{"ibroute", []string{"-n", "-D", "0,1"}},
		{"ibroute", []string{"-a", "-D", "0,1", "1", "0x10"}},
		{"ibroute", []string{"-M", "-D", "0,1,19"}},
		{"ibroute", []string{"-a", "-M", "-D", "0,1", "0xc000", "0xc003"}},
		{"ibroute", []string{"-a", "-n", "-M", "-D", "0,1", "0xc000", "0xc003"}},
		{"ibaddr", nil},
		{"ibaddr", []string{"-D", "0,1,19"}},
		{"sminfo", nil},
		{"perfquery", []string{"-E", "1", "1"}}, // error details do not move with traffic
		{"perfquery", []string{"-D", "1", "2"}},
		{"ibportstate", []string{"-D", "0,1", "19"}}, // a leaf's uplink, with the spine's port
		{"ibportstate", []string{"-D", "0,1", "1"}},  // a leaf's host port, with the host's
		{"ibportstate", []string{"-D", "0,1,19", "0"}},
		{"ibportstate", []string{"-D", "0", "1"}},
		{"smpquery", []string{"-D", "portinfo", "0,1,19", "5"}},
		{"smpquery", []string{"-D", "nodedesc", "0,1,19,5"}},
		{"ibccquery", []string{"CI", "1"}},
		{"ibstat", nil},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			if tt.tool == "sminfo" {
				sameAsReferenceMasked(t, f, func(b []byte) []byte { return activityCount.ReplaceAll(b, []byte("activity count N ")) }, "H-0001", tt.tool, tt.args...)
				return
			}
			sameAsReference(t, f, "H-0001", tt.tool, tt.args...)
		})
	}
}

// TestFatTreeLMC checks the fat tree really has an LMC, so the ibroute
// comparisons above cover infiniband-diags' "path #n out of m" lines.
func TestFatTreeLMC(t *testing.T) {
	f := fatTree(t)
	out, errOut, exit, err := f.RunIbtool(t.Context(), ibtoolBin, "H-0001", "ibroute", "0,1")
	if err != nil || exit != 0 {
		t.Fatalf("ibroute: exit %d, %v: %s", exit, err, errOut)
	}
	if !strings.Contains(string(out), ": (path #2 out of 2: portguid 0x") {
		t.Errorf("no LMC path lines in ibroute's output:\n%s", out)
	}
}
