package fabric

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/jsonkeys"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// execFabricCmd runs a built command with args, its errors returned
// rather than printed.
func execFabricCmd(c *cobra.Command, args []string) error {
	c.SetArgs(args)
	c.SilenceErrors, c.SilenceUsage = true, true
	return c.Execute()
}

// TestFabricJSONKeys pins the --json keys of the discovery tools on the
// two-switch fabric (one CA port narrowed to 1X, so that "could be"
// appears). Keys the fixture cannot show: iblinkinfo's notAvailable and
// externalPort, ibnetdiscover's enhancedPort0 and errors.
func TestFabricJSONKeys(t *testing.T) {
	fab := fakeTwoSwitches(t, func(ff *subnettest.Fabric) { ff.Node("Hca2").Ports[1].Width = mad.LinkWidth1X })
	topo := subnet.TopologyText(fab, true, time.Time{})
	run := map[string]func(args ...string) string{
		"ibnetdiscover": func(args ...string) string {
			out, _, err := runIbnetdiscover(t, fab, args...)
			if err != nil {
				t.Fatal(err)
			}
			return out
		},
		"iblinkinfo": func(args ...string) string { return runIblinkinfo(t, fab, args...) },
		"ibnodes":    func(args ...string) string { return runNodeList(t, nodeListKinds[3], topo, args...) },
		"ibprintca":  func(args ...string) string { return runNodePrint(t, "ibprintca", topo, args...) },
	}
	tests := []struct {
		tool string
		args []string
		want []string
	}{
		{"ibnetdiscover", []string{"--json"}, []string{
			"fromNode", "fromPort", "mads", "maxHops",
			"nodes[].description", "nodes[].deviceID", "nodes[].lid", "nodes[].nodeGUID",
			"nodes[].numPorts", "nodes[].path", "nodes[].portGUID",
			"nodes[].ports[].lid", "nodes[].ports[].linkSpeedActive", "nodes[].ports[].linkState",
			"nodes[].ports[].linkWidthActive", "nodes[].ports[].lmc", "nodes[].ports[].physLinkState",
			"nodes[].ports[].port", "nodes[].ports[].portGUID",
			"nodes[].ports[].remote.description", "nodes[].ports[].remote.nodeGUID", "nodes[].ports[].remote.port",
			"nodes[].ports[].remote.portGUID", "nodes[].systemImageGUID", "nodes[].type", "nodes[].vendorID",
		}},
		{"iblinkinfo", []string{"--json", "-p"}, []string{
			"[].description", "[].lid", "[].nodeGUID",
			"[].ports[].couldBeWidth", "[].ports[].hoqLife", "[].ports[].lid", "[].ports[].linkSpeedActive",
			"[].ports[].linkWidthActive", "[].ports[].port", "[].ports[].portGUID", "[].ports[].portPhysicalState",
			"[].ports[].portState", "[].ports[].remote.description", "[].ports[].remote.lid",
			"[].ports[].remote.nodeGUID", "[].ports[].remote.port", "[].ports[].remote.portGUID",
			"[].ports[].vlStallCount", "[].type",
		}},
		{"ibnodes", []string{"--json"}, []string{"[].description", "[].nodeGUID", "[].numPorts", "[].type"}},
		{"ibprintca", []string{"--json", "Hca2"}, []string{"lines[]", "matches"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			got, err := jsonkeys.Paths([]byte(run[tt.tool](tt.args...)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected %s --json keys (-want +got):\n%s", tt.tool, diff)
			}
		})
	}
}
