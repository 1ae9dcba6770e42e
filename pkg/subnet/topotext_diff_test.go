package subnet_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// downHca2 is the two-switch fabric with Hca2's cable down: Hca2 is gone
// and Switch2's port 1 is down.
func downHca2(ff *subnettest.Fabric) { ff.Node("Hca2").Ports[1].Down = true }

func TestTopologyWriterDiff(t *testing.T) {
	orig := twoSwitchFabric(t, nil)
	cur := twoSwitchFabric(t, downHca2)
	all := subnet.DiffSwitches | subnet.DiffCAs | subnet.DiffRouters
	tests := []struct {
		name     string
		from, to *subnet.Fabric
		checks   subnet.DiffCheck
		want     string
	}{
		{"lost CA", orig, cur, all | subnet.DiffPorts, "\nvendid=0x0\ndevid=0x0\nsysimgguid=0x200001\nswitchguid=0x200001(200001)\n" +
			"Switch\t8 \"S-0000000000200001\"\t\t# \"Switch2\" base port 0 lid 2 lmc 0\n" +
			"< [1]\t\"H-0000000000100003\"[1](100004) \t\t# \"Hca2\" lid 5 4xSDR\n" +
			"\n< vendid=0x0\n< devid=0x0\n< sysimgguid=0x100003\n< caguid=0x100003\n< Ca\t2 \"H-0000000000100003\"\t\t# \"Hca2\"\n" +
			"< [1](100004) \t\"S-0000000000200001\"[1]\t\t# lid 5 lmc 0 \"Switch2\" lid 2 4xSDR\n"},
		{"new CA", cur, orig, subnet.DiffCAs, "\n> vendid=0x0\n> devid=0x0\n> sysimgguid=0x100003\n> caguid=0x100003\n" +
			"> Ca\t2 \"H-0000000000100003\"\t\t# \"Hca2\"\n" +
			"> [1](100004) \t\"S-0000000000200001\"[1]\t\t# lid 5 lmc 0 \"Switch2\" lid 2 4xSDR\n"},
		// Switches only, without ports: nothing changed there.
		{"switches", orig, cur, subnet.DiffSwitches | subnet.DiffLIDs | subnet.DiffNodeDescs, ""},
		{"same", orig, orig, all | subnet.DiffPorts | subnet.DiffLIDs | subnet.DiffNodeDescs, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := topologyOutput(t, tt.to, func(w *subnet.TopologyWriter) { w.Diff(tt.from, tt.checks) })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected diff (-want +got):\n%s", diff)
			}
		})
	}
}
