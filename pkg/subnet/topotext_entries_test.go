package subnet_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// TestTopologyEntries: the node and port lines of Entries, NodeLine and
// PortLine are Dump's, in Dump's order, with and without Group, on the
// two-switch fabric and on the chassis fixture (spine and line slots,
// Xsigo nodes).
func TestTopologyEntries(t *testing.T) {
	chassisNet, err := os.ReadFile("../../internal/simfabric/testdata/net.chassis")
	if err != nil {
		t.Fatal(err)
	}
	fabrics := map[string]*subnet.Fabric{"2sw2path4hca": twoSwitchFabric(t, nil)}
	ff, err := subnettest.FromNet(string(chassisNet), "H1")
	if err != nil {
		t.Fatal(err)
	}
	fabrics["chassis"] = discover(t, ff, subnet.Options{})
	for name, fab := range fabrics {
		for _, group := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s group %v", name, group), func(t *testing.T) {
				var want []string
				for _, l := range strings.SplitAfter(string(subnet.TopologyText(fab, group, generated)), "\n") {
					for _, p := range []string{"Switch", "Ca", "Rt", "["} {
						if strings.HasPrefix(l, p) {
							want = append(want, l)
						}
					}
				}
				tw := &subnet.TopologyWriter{Fabric: fab, Group: group}
				if group {
					tw.Chassis = fab.GroupChassis()
				}
				var got []string
				for _, e := range tw.Entries() {
					got = append(got, tw.NodeLine(e))
					for _, p := range e.LinkedPorts() {
						got = append(got, tw.PortLine(e, p))
					}
				}
				if len(want) < 8 {
					t.Fatalf("only %d node and port lines", len(want))
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("unexpected lines (-want +got):\n%s", diff)
				}
			})
		}
	}
}
