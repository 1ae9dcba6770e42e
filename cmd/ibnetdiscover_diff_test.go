package cmd

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// savedFabric writes fab to a cache file and returns its path.
func savedFabric(t *testing.T, fab *subnet.Fabric) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fabric.cache")
	if err := saveFabric(path, fab); err != nil {
		t.Fatal(err)
	}
	return path
}

// downHca2 is the two-switch fabric with Hca2's cable down: Hca2 is gone
// and Switch2's port 1 is down.
func downHca2(ff *subnettest.Fabric) { ff.Node("Hca2").Ports[1].Down = true }

func TestIbnetdiscoverDiff(t *testing.T) {
	orig := savedFabric(t, fakeTwoSwitches(t, nil))
	cur := fakeTwoSwitches(t, downHca2)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--diff", orig}, "\nvendid=0x0\ndevid=0x0\nsysimgguid=0x200001\nswitchguid=0x200001(200001)\n" +
			"Switch\t8 \"S-0000000000200001\"\t\t# \"Switch2\" base port 0 lid 2 lmc 0\n" +
			"< [1]\t\"H-0000000000100003\"[1](100004) \t\t# \"Hca2\" lid 5 4xSDR\n" +
			"\n< vendid=0x0\n< devid=0x0\n< sysimgguid=0x100003\n< caguid=0x100003\n< Ca\t2 \"H-0000000000100003\"\t\t# \"Hca2\"\n" +
			"< [1](100004) \t\"S-0000000000200001\"[1]\t\t# lid 5 lmc 0 \"Switch2\" lid 2 4xSDR\n"},
		// Switches only, without ports: nothing changed there.
		{[]string{"--diff", orig, "--diffcheck", "sw,lid,nodedesc"}, ""},
	}
	for _, tt := range tests {
		out, _, err := runIbnetdiscover(t, cur, tt.args...)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, out); diff != "" {
			t.Errorf("ibnetdiscover %v (-want +got):\n%s", tt.args[2:], diff)
		}
	}
}
