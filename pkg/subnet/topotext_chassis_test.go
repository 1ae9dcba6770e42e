package subnet_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// TestTopologyWriterChassis groups the two switches, given one system
// image GUID, into a chassis and checks -g's chassis section.
func TestTopologyWriterChassis(t *testing.T) {
	fab := twoSwitchFabric(t, func(ff *subnettest.Fabric) {
		ff.Node("Switch1").SystemImageGUID = 0x2000ff
		ff.Node("Switch2").SystemImageGUID = 0x2000ff
	})
	out := string(subnet.TopologyText(fab, true, generated))
	i := strings.Index(out, "\nChassis 1")
	if i < 0 {
		t.Fatalf("no chassis section in:\n%s", out)
	}
	want := "\nChassis 1 (guid 0x2000ff)\n\n# Spine Nodes\n# Line Nodes\n# Chassis Switches\n"
	if got := out[i:min(len(out), i+len(want))]; got != want {
		t.Errorf("chassis section (-want +got):\n%s", cmp.Diff(want, got))
	}
	if !strings.Contains(out[i:], "\nSwitch\t8 \"S-0000000000200001\"\t\t# \"Switch2\" base port 0 lid 2 lmc 0\n") {
		t.Errorf("Switch2 not in the chassis section:\n%s", out[i:])
	}
}
