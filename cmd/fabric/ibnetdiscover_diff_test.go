package fabric

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// savedFabric writes fab to a cache file and returns its path.
func savedFabric(t *testing.T, fab *subnet.Fabric) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fabric.cache")
	if err := cmdutil.SaveFabric(path, fab); err != nil {
		t.Fatal(err)
	}
	return path
}

// downHca2 is the two-switch fabric with Hca2's cable down: Hca2 is gone
// and Switch2's port 1 is down.
func downHca2(ff *subnettest.Fabric) { ff.Node("Hca2").Ports[1].Down = true }

// TestIbnetdiscoverDiff checks that --diff reads the cached fabric and
// --diffcheck picks the checks; subnet's TopologyWriter tests the text.
func TestIbnetdiscoverDiff(t *testing.T) {
	origFab := fakeTwoSwitches(t, nil)
	orig := savedFabric(t, origFab)
	cur := fakeTwoSwitches(t, downHca2)
	tests := []struct {
		args   []string
		checks subnet.DiffCheck
	}{
		{[]string{"--diff", orig}, subnet.DiffSwitches | subnet.DiffCAs | subnet.DiffRouters | subnet.DiffPorts},
		{[]string{"--diff", orig, "--diffcheck", "CA,lid"}, subnet.DiffCAs | subnet.DiffLIDs},
		{[]string{"--diff", orig, "--diffcheck", "sw,router,port,nodedesc"},
			subnet.DiffSwitches | subnet.DiffRouters | subnet.DiffPorts | subnet.DiffNodeDescs},
	}
	for _, tt := range tests {
		out, _, err := runIbnetdiscover(t, cur, tt.args...)
		if err != nil {
			t.Fatal(err)
		}
		want := topologyWriterOutput(cur, func(w *subnet.TopologyWriter) { w.Diff(origFab, tt.checks) })
		if diff := cmp.Diff(want, out); diff != "" || out == "" {
			t.Errorf("ibnetdiscover %v (-want +got):\n%s", tt.args[2:], diff)
		}
	}
}
