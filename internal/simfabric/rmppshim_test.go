package simfabric

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// needGCC skips t without gcc, or fails it when IBTOOL_REQUIRE_BENCH=1.
func needGCC(t *testing.T) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("gcc: %v (%s=1)", err, EnvRequire)
		}
		t.Skipf("gcc: %v", err)
	}
	return gcc
}

// TestRMPPArithmetic builds and runs rmppshim/rmpp_test.c, the C test of
// the segmentation, reassembly and window arithmetic.
func TestRMPPArithmetic(t *testing.T) {
	gcc := needGCC(t)
	bin := filepath.Join(t.TempDir(), "rmpp_test")
	out, err := exec.Command(gcc, "-O2", "-Wall", "-Wextra", "-Werror", "-o", bin,
		"rmppshim/rmpp_test.c", "rmppshim/rmpp.c").CombinedOutput()
	if err != nil {
		t.Fatalf("building rmpp_test: %v\n%s", err, out)
	}
	out, err = exec.Command(bin).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Errorf("rmpp_test: %v\n%s", err, out)
	}
}

// TestRMPPShimWarnings builds the layer as Preload does, with -Werror.
func TestRMPPShimWarnings(t *testing.T) {
	gcc := needGCC(t)
	args := append(append([]string{}, rmppShimCFlags...), "-Werror", "-o", filepath.Join(t.TempDir(), rmppShimName))
	for _, s := range rmppShimSources {
		args = append(args, "rmppshim/"+s)
	}
	if out, err := exec.Command(gcc, append(args, rmppShimLibs...)...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestRMPPShimCache(t *testing.T) {
	needGCC(t)
	dir := t.TempDir()
	// Builders racing for an empty cache all get the same library.
	var wg sync.WaitGroup
	paths := make([]string, 4)
	errs := make([]error, 4)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i], errs[i] = buildRMPPShim(dir)
		}()
	}
	wg.Wait()
	for i := range paths {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if paths[i] != paths[0] {
			t.Errorf("builder %d got %s, builder 0 %s", i, paths[i], paths[0])
		}
	}
	if !strings.HasPrefix(paths[0], dir) || filepath.Base(paths[0]) != rmppShimName {
		t.Errorf("library at %s, want %s/rmppshim-<key>/%s", paths[0], dir, rmppShimName)
	}
	st, err := os.Stat(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	// Built once: no temporary directory left, and a second call reuses it.
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(paths[0]), "src-*")); len(left) > 0 {
		t.Errorf("build directories left behind: %v", left)
	}
	again, err := buildRMPPShim(dir)
	if err != nil || again != paths[0] {
		t.Fatalf("second build: %s, %v", again, err)
	}
	if st2, err := os.Stat(again); err != nil || !st2.ModTime().Equal(st.ModTime()) {
		t.Errorf("second build rebuilt the library (%v)", err)
	}

	// Preload names the layer first, then the shim.
	pre, err := Preload()
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(pre); len(f) != 2 || filepath.Base(f[0]) != rmppShimName || f[1] != shimPath {
		t.Errorf("Preload() = %q, want the layer, a space, %s", pre, shimPath)
	}
}

// rmppNet is a fabric of more than 230 nodes: 216 hosts under 12 leaves
// and 6 spines of 36 ports. Its SA tables take many segments: NodeRecords
// 132 (234 × 112 bytes), LinkRecords 35, PortInfoRecords 318.
var rmppNet = sync.OnceValues(func() ([]byte, error) {
	return FatTree(FatTreeSpec{Levels: 2, Hosts: 216, Radix: 36})
})

func rmppFabric(t *testing.T, own bool) *Fabric {
	t.Helper()
	if testing.Short() {
		t.Skip("big fabric")
	}
	net, err := rmppNet()
	if err != nil {
		t.Fatal(err)
	}
	if own {
		return StartForTest(t, Options{Net: net})
	}
	return ForTest(t, Options{Net: net})
}

// saTable is one saquery run and the records it should print.
type saTable struct {
	args   []string
	record string // the dump's title line
	want   func(NetCounts) int
}

var saTables = []saTable{
	// One NodeRecord per node (a switch has one LID, every CA here one port).
	{nil, "NodeRecord dump:", func(c NetCounts) int { return c.Nodes }},
	// One LinkRecord per cabled port: each cable both ways.
	{[]string{"-x"}, "LinkRecord dump:", func(c NetCounts) int { return c.Links }},
	// One PortInfoRecord per port: a switch's every port and port 0, a CA's.
	{[]string{"PIR"}, "PortInfoRecord dump:", func(c NetCounts) int { return c.Ports }},
}

// saquery runs the reference saquery at H-0001 with extra environment and
// returns its exit code and the number of records of tb it printed.
func saquery(t *testing.T, f *Fabric, env []string, tb saTable) (exit, records int, stderr string) {
	t.Helper()
	out, errOut, code, err := f.runReference(ctxFor(t, 60*time.Second), env, "H-0001", "saquery", tb.args...)
	if err != nil {
		t.Fatalf("saquery %v: %v", tb.args, err)
	}
	return code, bytes.Count(out, []byte(tb.record)), string(errOut)
}

// TestIntegrationSAQueryRMPP checks that infiniband-diags saquery prints
// whole SA tables on a fabric of 234 nodes; under the umad2sim shim alone
// it printed the first segment's worth (one NodeRecord).
func TestIntegrationSAQueryRMPP(t *testing.T) {
	f := rmppFabric(t, false)
	c := f.Net().Counts()
	for _, tb := range saTables {
		t.Run(tb.record, func(t *testing.T) {
			code, n, stderr := saquery(t, f, nil, tb)
			if code != 0 || n != tb.want(c) {
				t.Errorf("saquery %v: exit %d, %d records, want exit 0 and %d; stderr:\n%s",
					tb.args, code, n, tb.want(c), stderr)
			}
		})
	}
}

// TestIntegrationRMPPLostSegments loses segments at the receiver (the
// layer's test hook): the sender must resend them.
func TestIntegrationRMPPLostSegments(t *testing.T) {
	f := rmppFabric(t, false)
	c := f.Net().Counts()
	for _, lost := range []string{"1", "2", "64,65,66", "2,3,100,131,132"} {
		t.Run(lost, func(t *testing.T) {
			code, n, stderr := saquery(t, f, []string{"RMPPSHIM_DROP_RECV=" + lost}, saTables[0])
			if code != 0 || n != c.Nodes {
				t.Errorf("segments %s lost once: exit %d, %d NodeRecords, want exit 0 and %d; stderr:\n%s",
					lost, code, n, c.Nodes, stderr)
			}
		})
	}
}

// TestIntegrationRMPPErrorRate has ibsim drop packets to the querying host:
// every saquery either prints the whole table (the lost segments resent in
// time) or fails, never a part of it.
func TestIntegrationRMPPErrorRate(t *testing.T) {
	f := rmppFabric(t, true)
	ctx := ctxFor(t, 5*time.Minute)
	c := f.Net().Counts()
	for _, loss := range []struct{ rate, runs, minOK int }{
		{5, 4, 1},  // recovered as a rule
		{40, 2, 0}, // saquery's second is too short for the biggest table
	} {
		if err := f.SetErrorRate(ctx, Port("H-0001", 1), loss.rate, 0); err != nil {
			t.Fatal(err)
		}
		ok := 0
		for i := 0; i < loss.runs; i++ {
			for _, tb := range saTables {
				code, n, stderr := saquery(t, f, nil, tb)
				switch {
				case code == 0 && n == tb.want(c):
					ok++
				case code != 0 && n == 0:
					t.Logf("saquery %v with %d%% loss: failed cleanly (exit %d): %s",
						tb.args, loss.rate, code, strings.TrimSpace(stderr))
				default:
					t.Errorf("saquery %v with %d%% loss: exit %d and %d records, want the whole table (%d) or a failure; stderr:\n%s",
						tb.args, loss.rate, code, n, tb.want(c), stderr)
				}
			}
		}
		t.Logf("%d%% loss: %d of %d tables whole", loss.rate, ok, loss.runs*len(saTables))
		if ok < loss.minOK {
			t.Errorf("%d%% loss: %d tables whole, want at least %d", loss.rate, ok, loss.minOK)
		}
	}
	// The fabric still answers, and the tools after that work: no stray
	// segments left for the next client at the node.
	if err := f.SetErrorRate(ctx, Port("H-0001", 1), 0, 0); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"perfquery", "saquery"} {
		_, errOut, code, err := f.RunReference(ctx, "H-0001", tool)
		if err != nil || code != 0 {
			t.Errorf("%s after the losses: exit %d, %v\n%s", tool, code, err, errOut)
		}
	}
}
