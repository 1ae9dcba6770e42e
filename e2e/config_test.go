package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigFileMatchesReference gives infiniband-diags and ibtool the
// same ibdiag.conf with -z: both pick the CA, port and timeout it names and
// print the same. ibtool's default file is pointed at none, so the test
// does not depend on /etc/infiniband-diags/ibdiag.conf (the reference
// reads it; the shipped one sets nothing).
func TestConfigFileMatchesReference(t *testing.T) {
	t.Setenv("IBTOOL_IBDIAG_CONF", filepath.Join(t.TempDir(), "none.conf"))
	f := smallFabric(t)
	dir := t.TempDir()
	conf := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	site := conf("site.conf", "# site defaults\nCA=ibsim0\nPort=1\ntimeout=500\n\nMLX_EPI=true\nunknown_key=1\n")
	for _, a := range [][]string{
		{"smpquery", "-z", site, "nodeinfo", "2"},
		{"smpquery", "--config", site, "-D", "portinfo", "0,1"},
		{"ibaddr", "-z", site},
		// Flags after -z win in both.
		{"smpquery", "-z", site, "-C", "ibsim0", "-P", "1", "-t", "200", "nodedesc", "3"},
	} {
		t.Run(strings.Join(a, " "), func(t *testing.T) {
			sameAsReference(t, f, "Hca1", a[0], a[1:]...)
		})
	}
	t.Run("ibnetdiscover", func(t *testing.T) {
		sameAsReferenceMasked(t, f, maskTopology, "Hca1", "ibnetdiscover", "-z", site)
	})
	t.Run("perfquery", func(t *testing.T) {
		pf, prepare := perfFabric(t)
		sameAsReferenceAfter(t, pf, prepare, "Hca1", "perfquery", "-z", site, "2", "1")
	})
}

// TestConfigFileCA checks that the CA the file names is the one used:
// with a CA that does not exist both tools fail (ibtool with exit 2, as
// for -C).
func TestConfigFileCA(t *testing.T) {
	t.Setenv("IBTOOL_IBDIAG_CONF", filepath.Join(t.TempDir(), "none.conf"))
	f := smallFabric(t)
	p := filepath.Join(t.TempDir(), "ca.conf")
	if err := os.WriteFile(p, []byte("CA=mlx9_9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	failsCleanly(t, f, "Hca1", 2, `no RDMA device "mlx9_9"`, "smpquery", "-z", p, "nodeinfo", "2")
}

// TestConfigFileTimeout checks that the file's timeout is the one a
// query to a LID nobody answers waits: three tries of 100 ms end well
// before one try of the default would.
func TestConfigFileTimeout(t *testing.T) {
	t.Setenv("IBTOOL_IBDIAG_CONF", filepath.Join(t.TempDir(), "none.conf"))
	f := smallFabric(t)
	p := filepath.Join(t.TempDir(), "t.conf")
	if err := os.WriteFile(p, []byte("timeout=100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	failsCleanly(t, f, "Hca1", 3, "no response after 3 tries", "smpquery", "-z", p, "nodeinfo", "200")
	// The reference and two ibtool forms: 3 runs of 3 tries of 100 ms.
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("three runs with timeout=100 took %v", d)
	}
}
