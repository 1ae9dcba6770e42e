package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// topologyClock masks the time in the topology header, and the MAD count
// of -m, which differs by design (docs/differences.md).
var topologyClock = regexp.MustCompile(`(?m)^(# Topology file: generated on |# Total MADs used: ).*$`)

func maskTopology(b []byte) []byte { return topologyClock.ReplaceAll(b, []byte("${1}X")) }

// TestIbnetdiscoverMatchesReference compares every output form of
// ibnetdiscover on the two-switch fabric, from two attach points.
func TestIbnetdiscoverMatchesReference(t *testing.T) {
	f := smallFabric(t)
	m := filepath.Join(t.TempDir(), "map")
	if err := os.WriteFile(m, []byte("0x0000000000200001 \"leaf two\"\n0x0000000000100003 hca-two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"Hca1", "Hca4"} {
		for _, args := range [][]string{
			{}, {"-s"}, {"-l"}, {"-H"}, {"-S"}, {"-g"}, {"-p"}, {"-f"}, {"-m"}, {"-l", "-S"}, {"-S", "-H"},
			{"--node-name-map", m}, {"--node-name-map", m, "-l"}, {"--node-name-map", m, "-p"},
			{"-s", "-p"}, {"-o", "1"}, {"--full", "--show", "--max_hops"},
		} {
			t.Run(host+" "+strings.Join(args, " "), func(t *testing.T) {
				sameAsReferenceMasked(t, f, maskTopology, host, "ibnetdiscover", args...)
			})
		}
	}
}

// TestIbnetdiscoverFatTree compares on a 2-level fat tree of 36-port
// switches with LMC 1.
func TestIbnetdiscoverFatTree(t *testing.T) {
	f := fatTree(t)
	for _, args := range [][]string{{}, {"-p"}, {"-l"}, {"-s"}, {"-f", "-m"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			sameAsReferenceMasked(t, f, maskTopology, "H-0001", "ibnetdiscover", args...)
		})
	}
}

// TestIbnetdiscoverTopologyFile writes the topology to a file, as the
// reference does, and feeds it back to ibsim: the fabric it describes
// discovers to the same topology.
func TestIbnetdiscoverTopologyFile(t *testing.T) {
	f := smallFabric(t)
	dir := t.TempDir()
	refFile, ourFile := filepath.Join(dir, "ref.net"), filepath.Join(dir, "ours.net")
	ctx := context.Background()
	if _, errOut, exit, err := f.RunReference(ctx, "Hca1", "ibnetdiscover", refFile); err != nil || exit != 0 {
		t.Fatalf("reference: exit %d, %v, %s", exit, err, errOut)
	}
	out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibnetdiscover", ourFile)
	if err != nil || exit != 0 || len(out) != 0 || len(errOut) != 0 {
		t.Fatalf("ibtool: exit %d, %v, stdout %q, stderr %q", exit, err, out, errOut)
	}
	ref, _ := os.ReadFile(refFile)
	ours, _ := os.ReadFile(ourFile)
	if !bytes.Equal(maskTopology(ref), maskTopology(ours)) {
		t.Fatalf("topology file differs (-want +got):\n%s", simfabric.Diff(maskTopology(ref), maskTopology(ours)))
	}

	// Round trip: the topology as ibsim's net file.
	g := simfabric.ForTest(t, simfabric.Options{Net: ours})
	again, errOut, exit, err := g.RunIbtool(ctx, ibtoolBin, "H-0000000000100000", "ibnetdiscover")
	if err != nil || exit != 0 {
		t.Fatalf("discovering the round-tripped fabric: exit %d, %v, %s", exit, err, errOut)
	}
	if !bytes.Equal(maskTopology(ours), maskTopology(again)) {
		t.Errorf("round trip differs (-want +got):\n%s", simfabric.Diff(maskTopology(ours), maskTopology(again)))
	}

	t.Run("unwritable file", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 3, "can't open file "+dir+"/no/such/dir for writing", "ibnetdiscover", filepath.Join(dir, "no/such/dir"))
	})
}

// TestIbnetdiscoverFaults: dropped MADs are retried and the topology comes
// out whole; a cut link makes the discovery partial, said on stderr with
// exit 3, and the rest is printed.
func TestIbnetdiscoverFaults(t *testing.T) {
	f := smallFabric(t)
	ctx := context.Background()
	want, _, _, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibnetdiscover", "-l")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("dropped MADs", func(t *testing.T) {
		if err := f.SetErrorRate(ctx, simfabric.Port("Switch2", 1), 30, 0); err != nil {
			t.Fatal(err)
		}
		defer f.SetErrorRate(ctx, simfabric.Port("Switch2", 1), 0, 0)
		for range 3 {
			got, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibnetdiscover", "-l", "--retries", "10", "-t", "50")
			if err != nil || exit != 0 || !bytes.Equal(got, want) {
				t.Fatalf("exit %d, %v, stderr %s; output (-want +got):\n%s", exit, err, errOut, simfabric.Diff(want, got))
			}
		}
	})
}

// TestNodeListsMatchReference compares ibhosts, ibswitches, ibnodes and
// ibrouters, discovering and reading a topology file the reference wrote.
func TestNodeListsMatchReference(t *testing.T) {
	f := smallFabric(t)
	topo := filepath.Join(t.TempDir(), "topo.net")
	if _, errOut, exit, err := f.RunReference(context.Background(), "Hca1", "ibnetdiscover", topo); err != nil || exit != 0 {
		t.Fatalf("reference ibnetdiscover: exit %d, %v, %s", exit, err, errOut)
	}
	for _, tool := range []string{"ibhosts", "ibswitches", "ibnodes"} {
		for _, args := range [][]string{{}, {topo}} {
			t.Run(tool+" "+strings.Join(args, " "), func(t *testing.T) {
				sameAsReference(t, f, "Hca4", tool, args...)
			})
		}
	}
	t.Run("ibrouters", func(t *testing.T) {
		for _, form := range ibtoolForms(f, "Hca1", "ibrouters", nil) {
			got := run(t, form.name, form.do)
			if got.exit != 0 || len(got.stdout) != 0 || len(got.stderr) != 0 {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want nothing (no routers)", form.name, got.exit, got.stdout, got.stderr)
			}
		}
	})
	t.Run("missing file", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, "no such file or directory", "ibhosts", filepath.Join(t.TempDir(), "nope"))
	})
}

// TestChassisMatchesReference compares -g grouping, the ports report and
// iblinkinfo's external port numbers on a fabric of chassis-like nodes,
// with no SM (the chassis need no LIDs).
func TestChassisMatchesReference(t *testing.T) {
	f := simfabric.ForTest(t, simfabric.Options{Net: simfabric.NetChassis, NoSM: true})
	for _, host := range []string{"H1", "VCA", "chassis-ca"} {
		for _, c := range [][]string{{"ibnetdiscover", "-g"}, {"ibnetdiscover"}, {"ibnetdiscover", "-p"}, {"iblinkinfo"}, {"iblinkinfo", "-l"}} {
			t.Run(host+" "+strings.Join(c, " "), func(t *testing.T) {
				sameAsReferenceMasked(t, f, maskTopology, host, c[0], c[1:]...)
			})
		}
	}
}

// TestDiscoveryLIDMode: with --discovery lid (a node's SMPs by LID once
// known) the tools print what infiniband-diags prints with its directed
// routes.
func TestDiscoveryLIDMode(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		f    func(t *testing.T) *simfabric.Fabric
		host string
	}{{"small", smallFabric, "Hca1"}, {"fat tree", fatTree, "H-0001"}} {
		f := c.f(t)
		for _, args := range [][]string{{"ibnetdiscover"}, {"ibnetdiscover", "-p"}, {"iblinkinfo"}, {"dump_lfts"}} {
			t.Run(c.name+" "+strings.Join(args, " "), func(t *testing.T) {
				ref, errOut, exit, err := f.RunReference(ctx, c.host, args[0], args[1:]...)
				if err != nil || exit != 0 {
					t.Fatalf("reference: exit %d, %v, %s", exit, err, errOut)
				}
				got, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, c.host, args[0], append(args[1:], "--discovery", "lid")...)
				if err != nil || exit != 0 || len(errOut) != 0 {
					t.Fatalf("ibtool: exit %d, %v, %s", exit, err, errOut)
				}
				if !bytes.Equal(maskTopology(ref), maskTopology(got)) {
					t.Errorf("differs (-want +got):\n%s", simfabric.Diff(maskTopology(ref), maskTopology(got)))
				}
			})
		}
	}
	t.Run("bad mode", func(t *testing.T) {
		ibtoolFails(t, smallFabric(t), "Hca1", 2, `invalid --discovery "smp": want dr, lid or sa`, "ibnetdiscover", "--discovery", "smp")
	})
}

// TestDiscoveryFaults: a switch that answers nothing (every MAD through
// its links dropped) makes the discovery partial: each query that failed
// is a line on stderr, the rest of the fabric is printed, exit 3; a cut
// link leaves the rest of the topology right.
func TestDiscoveryFaults(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	ctx := context.Background()
	t.Run("silent switch", func(t *testing.T) {
		for _, p := range []int{3, 5} {
			if err := f.SetErrorRate(ctx, simfabric.Port("Switch1", p), 100, 0); err != nil {
				t.Fatal(err)
			}
		}
		defer func() {
			for _, p := range []int{3, 5} {
				f.SetErrorRate(ctx, simfabric.Port("Switch1", p), 0, 0)
			}
		}()
		out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibnetdiscover", "-l", "-t", "50", "--retries", "1")
		if err != nil || exit != 3 {
			t.Fatalf("exit %d, %v; want 3", exit, err)
		}
		want := "Ca\t : 0x0000000000100006 ports 2 devid 0x0 vendid 0x0 \"Hca3\"\n" +
			"Ca\t : 0x0000000000100000 ports 2 devid 0x0 vendid 0x0 \"Hca1\"\n" +
			"Switch\t : 0x0000000000200000 ports 8 devid 0x0 vendid 0x0 \"Switch1\"\n"
		if string(out) != want {
			t.Errorf("output (-want +got):\n%s", simfabric.Diff([]byte(want), out))
		}
		for _, line := range []string{
			`ibnetdiscover: NodeInfo at DR path 0,1,3 (0x0000000000200000 "Switch1" port 3): no response after 2 tries`,
			`ibnetdiscover: NodeInfo at DR path 0,1,5 (0x0000000000200000 "Switch1" port 5): no response after 2 tries`,
			"ibnetdiscover: discovery incomplete: 2 queries failed; the fabric shown is partial",
		} {
			if !strings.Contains(string(errOut), line) {
				t.Errorf("stderr lacks %q:\n%s", line, errOut)
			}
		}
		if n := strings.Count(string(errOut), "\n"); n != 3 {
			t.Errorf("stderr has %d lines, want 3:\n%s", n, errOut)
		}
	})
	t.Run("cut link", func(t *testing.T) {
		if err := f.Unlink(ctx, simfabric.Port("Switch1", 3)); err != nil {
			t.Fatal(err)
		}
		defer func() {
			f.ReLink(ctx, simfabric.Port("Switch1", 3))
			f.WaitActive(ctx)
		}()
		if err := f.WaitActive(ctx); err != nil {
			t.Fatal(err)
		}
		sameAsReferenceMasked(t, f, maskTopology, "Hca1", "ibnetdiscover")
		sameAsReference(t, f, "Hca1", "iblinkinfo", "-l")
	})
}
