package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// TestIbidsverifyMatchesReference runs both tools on a fresh topology
// (nothing to report) and on a reused topology with a duplicated LID and
// node GUID; infiniband-diags' script keeps the topology in
// /var/cache/infiniband-diags, and so does ibtool.
func TestIbidsverifyMatchesReference(t *testing.T) {
	f := smallFabric(t)
	ctx := context.Background()
	check := func(t *testing.T, wantExit int, args ...string) []byte {
		t.Helper()
		ref, errOut, exit, err := f.RunReference(ctx, "Hca1", "ibidsverify", args...)
		if err != nil || exit != wantExit {
			t.Fatalf("reference: exit %d, %v, %s; want exit %d", exit, err, errOut, wantExit)
		}
		for _, form := range ibtoolForms(f, "Hca1", "ibidsverify", args) {
			got := run(t, form.name, form.do)
			if got.exit != wantExit || !bytes.Equal(got.stdout, ref) {
				t.Errorf("%s: exit %d (want %d); output (-want +got):\n%s", form.name, got.exit, wantExit, simfabric.Diff(ref, got.stdout))
			}
		}
		return ref
	}
	if out := check(t, 0, "-R"); len(out) != 0 {
		t.Errorf("clean fabric: reference printed %q", out)
	}
	cache := "/var/cache/infiniband-diags/ibnetdiscover--.topology"
	topo, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(topo), `lid 4 lmc 0 "Switch2"`, `lid 6 lmc 0 "Switch2"`, 1)
	bad = strings.Replace(bad, "caguid=0x100006", "caguid=0x100003", 1)
	if err := os.WriteFile(cache, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(cache)
	out := check(t, 1)
	if !strings.Contains(string(out), "LID 6 already defined for NodeGUID") {
		t.Errorf("duplicates not reported: %q", out)
	}
	t.Run("own cache dir", func(t *testing.T) {
		dir := t.TempDir()
		got, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibidsverify", "--cache-dir", dir)
		if err != nil || exit != 0 || len(got) != 0 {
			t.Errorf("exit %d, %v, %q %q", exit, err, got, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, "ibnetdiscover--.topology")); err != nil {
			t.Errorf("topology not kept: %v", err)
		}
	})
}
