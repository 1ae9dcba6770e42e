package fabric

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// runIbdmchkLive runs ibdmchk on the fake's discovered fabric.
func runIbdmchkLive(t *testing.T, ff *subnettest.Fabric, fab *subnet.Fabric, args ...string) (string, string, error) {
	t.Helper()
	return runWith(t, newIbdmchkCmd, func(o *ibdmchkOptions) error {
		o.Discover = func() (*subnet.Fabric, error) { return fab, nil }
		o.Common.Open = cmdtest.NoPort(fakeTransactor(ff))
		o.PortDLIDsFile = ""
		return ibdmchkRun(o)
	}, args...)
}

func TestIbdmchkLiveOptions(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []any // Live, DumpDir, Discovery.Mode, LMCGiven
		wantErr string
	}{
		{"dumps", []string{"-s", "a"}, []any{false, "", "dr", false}, ""},
		{"live", []string{"--fabric", "--dump", "d", "-l", "0"}, []any{true, "d", "dr", true}, ""},
		{"live sa", []string{"--fabric", "--sa"}, []any{true, "", "sa", false}, ""},
		{"live discovery", []string{"--fabric", "--discovery", "LID", "-C", "mlx5_0", "-P", "1", "-t", "100"}, []any{true, "", "lid", false}, ""},
		{"dump without live", []string{"--dump", "d"}, nil, "--dump, --sl2vl and --path-sl go with --fabric"},
		{"sl2vl without live", []string{"--sl2vl"}, nil, "--dump, --sl2vl and --path-sl go with --fabric"},
		{"sl2vl and -d", []string{"--fabric", "--sl2vl", "-d", "x"}, nil, "give one"},
		{"path-sl and -c", []string{"--fabric", "--path-sl", "-c", "x"}, nil, "give one"},
		{"path-sl without live", []string{"--path-sl"}, nil, "go with --fabric"},
		{"subnet with live", []string{"--fabric", "-s", "x"}, nil, "--subnet reads a dump"},
		{"mcfdb with live", []string{"--fabric", "--mcfdb", "x"}, nil, "--mcfdb reads a dump"},
		{"bad discovery", []string{"--fabric", "--discovery", "x"}, nil, "invalid --discovery"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *ibdmchkOptions
			err := cmdtest.ParseToolArgs(t, "ibdmchk", func(f *cmdutil.Factory) *cobra.Command {
				return newIbdmchkCmd(f, func(o *ibdmchkOptions) error { got = o; return nil })
			}, tt.args)
			if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
				return
			}
			if diff := cmp.Diff(tt.want, []any{got.Live, got.DumpDir, got.Discovery.Mode, got.LMCGiven}); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIbdmchkLiveRun checks the fake two-switch fabric live, writes its
// dumps, and checks them in dump mode: the same report but for the lines
// naming the input.
func TestIbdmchkLiveRun(t *testing.T) {
	ff := routeFake(t)
	fab := fakeTwoSwitches(t, nil)
	dir := t.TempDir()
	out, errOut, err := runIbdmchkLive(t, ff, fab, "--fabric", "--dump", dir)
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, errOut)
	}
	for _, want := range []string{" Fabric = live, discovery dr\n", " LMC = 0\n", "-I- Defined 6/6 systems/nodes \n",
		"-I- Multicast Group:0xC000 has:2 switches and:4 HCAs\n", "-I- no credit loops found\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	files := []string{"-s", filepath.Join(dir, dumpNames.subnet), "-f", filepath.Join(dir, dumpNames.fdbs), "-m", filepath.Join(dir, dumpNames.mcfdbs)}
	dump, errOut, err := runWith(t, newIbdmchkCmd, func(o *ibdmchkOptions) error { o.PortDLIDsFile = ""; return ibdmchkRun(o) }, files...)
	if err != nil {
		t.Fatalf("dump mode: %v\nstderr: %s", err, errOut)
	}
	strip := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.Contains(l, " File = ") && !strings.Contains(l, "Fabric = ") && !strings.HasPrefix(l, "-I- Parsing") &&
				!strings.HasPrefix(l, "-I- Read the") && !strings.HasPrefix(l, "-I- Discovered") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if diff := cmp.Diff(strip(dump), strip(out)); diff != "" {
		t.Errorf("live and dump mode differ (-dump +live):\n%s", diff)
	}
	lst, _ := os.ReadFile(filepath.Join(dir, dumpNames.subnet))
	// --json: one document, nothing about the input
	js, errOut, err := runIbdmchkLive(t, ff, fab, "--fabric", "--json")
	if err != nil {
		t.Fatalf("--json: %v\nstderr: %s", err, errOut)
	}
	var doc struct {
		Failed    bool
		StoppedAt string
		Routes    struct{ Paths int }
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || doc.Failed || doc.StoppedAt != "done" || doc.Routes.Paths != 12 {
		t.Errorf("--json: %+v, %v\n%s", doc, err, js)
	}
	// six links from both ends, Hca1 (GUID 0x100000, first in opensm's
	// byte-swapped order) first
	if !strings.HasPrefix(string(lst), "{ CA Ports:02 SystemGUID:0000000000100000 ") || strings.Count(string(lst), "\n") != 12 {
		t.Errorf("%s: want the 6 links from both ends, Hca1 first:\n%s", dumpNames.subnet, lst)
	}
}

// TestIbdmchkLiveFailedReads: a switch that stops answering after
// discovery leaves its entries unassigned; the failed reads are on
// stderr, the report is printed, and the exit is a runtime failure.
func TestIbdmchkLiveFailedReads(t *testing.T) {
	ff := routeFake(t)
	fab := fakeTwoSwitches(t, nil)
	ff.Node("Switch2").Dead = true
	out, errOut, err := runIbdmchkLive(t, ff, fab, "--fabric")
	if cmdutil.ExitCode(err) != cmdutil.ExitFailure || !strings.Contains(err.Error(), "table reads failed") {
		t.Errorf("error %v (exit %d), want a runtime failure", err, cmdutil.ExitCode(err))
	}
	if !strings.Contains(errOut, `ibdmchk: switch 0x0000000000200001 "Switch2"`) {
		t.Errorf("stderr does not name the switch: %s", errOut)
	}
	if !strings.Contains(out, "-E- Unassigned LFT for lid:") {
		t.Errorf("report does not show Switch2's unread entries:\n%s", out)
	}
}

// TestIbdmchkLiveSL2VL asks the switches for their SL2VL tables, which
// the fake does not answer: each failed pair is on stderr, the check runs
// with identity tables, the exit is a runtime failure. (e2e reads ibsim's.)
func TestIbdmchkLiveSL2VL(t *testing.T) {
	ff := routeFake(t)
	fab := fakeTwoSwitches(t, nil)
	out, errOut, err := runIbdmchkLive(t, ff, fab, "--fabric", "--sl2vl")
	if cmdutil.ExitCode(err) != cmdutil.ExitFailure {
		t.Errorf("error %v (exit %d), want a runtime failure", err, cmdutil.ExitCode(err))
	}
	// Switch1's ports 1, 2, 3, 5 are linked: 4x3 pairs and 4 from port 0
	if n := strings.Count(errOut, `"Switch1" (DR path 0,1): SLtoVLMappingTable in `); n != 16 {
		t.Errorf("%d failed pairs of Switch1 on stderr, want 16:\n%s", n, errOut)
	}
	for _, want := range []string{" SLVL File = NONE, the switches' SL2VL tables\n", "-I- Read 0 SL2VL tables of switch port pairs\n", "-I- no credit loops found"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestIbdmchkLiveDumpUnwritable: a --dump directory that cannot be made
// is a runtime error naming it.
func TestIbdmchkLiveDumpUnwritable(t *testing.T) {
	ff := routeFake(t)
	fab := fakeTwoSwitches(t, nil)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	_, _, err := runIbdmchkLive(t, ff, fab, "--fabric", "--dump", filepath.Join(file, "sub"))
	if err == nil || cmdutil.ExitCode(err) != cmdutil.ExitFailure || !strings.Contains(err.Error(), file) {
		t.Errorf("error %v (exit %d), want a runtime failure naming %s", err, cmdutil.ExitCode(err), file)
	}
}
