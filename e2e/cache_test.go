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

// writeCaches has infiniband-diags and ibtool write the fabric's cache
// from host; it fails t unless both succeed and returns the two paths.
func writeCaches(t *testing.T, f *simfabric.Fabric, host string) (ref, ours string) {
	t.Helper()
	dir := t.TempDir()
	ref, ours = filepath.Join(dir, "ref.cache"), filepath.Join(dir, "ours.cache")
	ctx := context.Background()
	if _, errOut, exit, err := f.RunReference(ctx, host, "ibnetdiscover", "--cache", ref); err != nil || exit != 0 {
		t.Fatalf("reference --cache: exit %d, %v, %s", exit, err, errOut)
	}
	if _, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, host, "ibnetdiscover", "--cache", ours); err != nil || exit != 0 {
		t.Fatalf("ibtool --cache: exit %d, %v, %s", exit, err, errOut)
	}
	return ref, ours
}

// TestCacheMatchesReference: both tools write the same cache file, and
// each tool's file loads in the other with the same output.
func TestCacheMatchesReference(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(t *testing.T) *simfabric.Fabric
		host string
	}{{"small", smallFabric, "Hca4"}, {"fat tree", fatTree, "H-0001"}} {
		t.Run(c.name, func(t *testing.T) {
			f := c.f(t)
			ref, ours := writeCaches(t, f, c.host)
			a, _ := os.ReadFile(ref)
			b, _ := os.ReadFile(ours)
			if !bytes.Equal(a, b) {
				t.Errorf("cache files differ: %d bytes from infiniband-diags, %d from ibtool", len(a), len(b))
			}
			for _, file := range []string{ref, ours} {
				for _, args := range [][]string{{"ibnetdiscover"}, {"ibnetdiscover", "-p"}, {"ibnetdiscover", "-g"}, {"ibnetdiscover", "-l"}, {"iblinkinfo"}} {
					args := append(args, "--load-cache", file)
					t.Run(filepath.Base(file)+" "+strings.Join(args, " "), func(t *testing.T) {
						sameAsReferenceMasked(t, f, maskTopology, c.host, args[0], args[1:]...)
					})
				}
			}
		})
	}
	t.Run("bad cache", func(t *testing.T) {
		f := smallFabric(t)
		bad := filepath.Join(t.TempDir(), "bad.cache")
		os.WriteFile(bad, []byte("not a cache"), 0o644)
		ibtoolFails(t, f, "Hca1", 3, "loading cached fabric "+bad+": ", "ibnetdiscover", "--load-cache", bad)
		ibtoolFails(t, f, "Hca1", 3, "loading cached fabric "+bad+": ", "iblinkinfo", "--diff", bad)
	})
}

// TestDiffMatchesReference caches a fabric, cuts two links and compares
// ibnetdiscover's and iblinkinfo's --diff, --diffcheck and
// --filterdownports with infiniband-diags'.
func TestDiffMatchesReference(t *testing.T) {
	// Its own fabric (opensm on Switch2), since the test cuts links.
	f := simfabric.ForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca, SMNode: "Switch2"})
	before, _ := writeCaches(t, f, "Hca1")
	ctx := context.Background()
	for _, p := range []simfabric.PortRef{simfabric.Port("Hca2", 1), simfabric.Port("Switch1", 5)} {
		if err := f.Unlink(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"ibnetdiscover", "--diff", before},
		{"ibnetdiscover", "--diff", before, "--diffcheck", "sw,port"},
		{"ibnetdiscover", "--diff", before, "--diffcheck", "ca,port,lid,nodedesc"},
		{"iblinkinfo", "--diff", before},
		{"iblinkinfo", "--diff", before, "--diffcheck", "port,lid,nodedesc"},
		{"iblinkinfo", "--diff", before, "-l"},
		{"iblinkinfo", "--filterdownports", before},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			sameAsReference(t, f, "Hca1", args[0], args[1:]...)
		})
	}
	// With -D, infiniband-diags compares the node with itself and prints
	// nothing; ibtool compares it with the cached fabric's.
	t.Run("iblinkinfo --diff -D", func(t *testing.T) {
		out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "iblinkinfo", "--diff", before, "-D", "0,1,3")
		// opensm on Switch2 gives it LID 1 and Switch1 LID 2 here.
		want := "Switch: 0x0000000000200001 Switch2:\n" +
			"<            1    1[  ] ==( 4X           2.5 Gbps Active/  LinkUp)==>       4    1[  ] \"Hca2\" (Could be 12X Could be 10.0 Gbps)\n" +
			">            1    1[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )\n" +
			"<            1    5[  ] ==( 4X           2.5 Gbps Active/  LinkUp)==>       2    5[  ] \"Switch1\" (Could be 12X Could be 10.0 Gbps)\n" +
			">            1    5[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )\n"
		if err != nil || exit != 0 || len(errOut) != 0 || string(out) != want {
			t.Errorf("exit %d, %v, stderr %q; output (-want +got):\n%s", exit, err, errOut, simfabric.Diff([]byte(want), out))
		}
	})
	// python-rdma's subnet_diff: the cached fabric against the live one.
	t.Run("subnet_diff", func(t *testing.T) {
		out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "subnet_diff", before)
		if err != nil || exit != 0 {
			t.Fatalf("exit %d, %v, %s", exit, err, errOut)
		}
		for _, want := range []string{
			"Current subnet has 5 end ports, reference subnet has 6 end ports\n",
			"Reference subnet has 2 more links than the current subnet:\n",
			"   0000:0000:0020:0001[5] <=> 0000:0000:0020:0000[5]\n",
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("bad diffcheck", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, "invalid diff check key: bogus", "ibnetdiscover", "--diff", before, "--diffcheck", "sw,bogus")
	})
}
