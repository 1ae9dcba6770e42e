package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiscoveryCache checks python-rdma's --cache and --refresh-cache
// (its documented use: ibnetdiscover --cache disc --refresh-cache, then
// ibcheckerrors --cache disc): every discovering tool reads the fabric from
// the cache when it is there and prints what infiniband-diags' discovery
// gives; it is renewed only with --refresh-cache.
func TestDiscoveryCache(t *testing.T) {
	f := smallFabric(t)
	dir := t.TempDir()
	disc := filepath.Join(dir, "disc")
	ibtool := func(args ...string) result {
		return run(t, "ibtool "+args[0], func(ctx context.Context) ([]byte, []byte, int, error) {
			return f.RunIbtool(ctx, ibtoolBin, "Hca1", args[0], args[1:]...)
		})
	}
	if r := ibtool("ibnetdiscover", "--cache", disc, "--refresh-cache"); r.exit != 0 {
		t.Fatalf("ibnetdiscover --cache: exit %d, %s", r.exit, r.stderr)
	}
	for _, c := range [][]string{{"ibhosts"}, {"ibswitches"}, {"iblinkinfo"}, {"ibnetdiscover", "-p"}, {"dump_lfts"}} { // not ibqueryerrors: counters other tests move
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			ours := append([]string{c[0], "--cache", disc}, c[1:]...)
			sameOutput(t, f, "Hca1", func(b []byte) []byte { return b }, c, ours)
		})
	}

	// python-rdma's example: ibcheckerrors (whose reference, the script,
	// is compared elsewhere) prints the same from the cache.
	if want, got := ibtool("ibcheckerrors"), ibtool("ibcheckerrors", "--cache", disc); want.exit != got.exit || !bytes.Equal(want.stdout, got.stdout) {
		t.Errorf("ibcheckerrors --cache: exit %d, want %d\n%s", got.exit, want.exit, got.stdout)
	}

	// The cache, not the fabric, is what a run reads: a node renamed in it
	// (its NodeDescription's bytes, "Hca4" made "Hcx4") shows, until --refresh-cache discovers and writes it anew. $A is
	// DEVICE-PORT of the local end port.
	tmpl := filepath.Join(dir, "c-$A.json")
	file := filepath.Join(dir, "c-ibsim0-1.json")
	if r := ibtool("ibhosts", "--cache", tmpl); r.exit != 0 {
		t.Fatalf("ibhosts --cache: exit %d, %s", r.exit, r.stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, bytes.Replace(b, []byte(`"48636134"`), []byte(`"48637834"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := ibtool("ibhosts", "-v", "--cache", tmpl); !bytes.Contains(r.stdout, []byte(`"Hcx4"`)) || !bytes.Contains(r.stderr, []byte("loading the discovery cache from "+file)) {
		t.Errorf("ibhosts --cache did not read the cache:\n%s%s", r.stdout, r.stderr)
	}
	if r := ibtool("ibhosts", "--cache", tmpl, "--refresh-cache"); bytes.Contains(r.stdout, []byte("Hcx4")) || r.exit != 0 {
		t.Errorf("ibhosts --refresh-cache read the cache: exit %d\n%s", r.exit, r.stdout)
	}
	if b, _ := os.ReadFile(file); !bytes.Contains(b, []byte(`"48636134"`)) {
		t.Errorf("--refresh-cache did not write the cache anew")
	}

	t.Run("errors", func(t *testing.T) {
		bad := filepath.Join(dir, "bad")
		if err := os.WriteFile(bad, []byte("not a cache\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ibtoolFails(t, f, "Hca1", 3, "--refresh-cache writes a new one", "ibhosts", "--cache", bad)
	})
}
