package fabric

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

func TestIbdmchkOptions(t *testing.T) {
	o := cmdtest.ParsedOptions(t, "ibdmchk", newIbdmchkCmd, []string{
		"-s", "sub", "-f", "fdb", "-m", "mc", "-c", "psl", "-d", "slvl", "-r", "roots", "-l", "1", "-u", "-M", "-a", "-v"})
	got := []any{o.SubnetFile, o.FDBFile, o.MCFDBFile, o.PSLFile, o.SLVLFile, o.RootsFile, o.LMC, o.UpDown, o.MFTLoops, o.AllPaths, o.Common.Verbose}
	want := []any{"sub", "fdb", "mc", "psl", "slvl", "roots", 1, true, true, true, 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected options (-want +got):\n%s", diff)
	}
	long := cmdtest.ParsedOptions(t, "ibdmchk", newIbdmchkCmd, []string{
		"--subnet", "sub", "--fdb", "fdb", "--mcfdb", "mc", "--psl", "p", "--slvl", "s", "--roots", "r", "--lmc", "2", "--updn", "--MFT", "--all"})
	if long.SubnetFile != "sub" || long.LMC != 2 || !long.UpDown || !long.MFTLoops || !long.AllPaths || long.SLVLFile != "s" {
		t.Errorf("long options: %+v", long)
	}
}

const ring5 = "../../pkg/routecheck/testdata/ring5"

// TestIbdmchkRun runs the tool on opensm's dumps of a 5-switch ring routed
// min-hop and compares its report with ibdmchk's on the same files.
func TestIbdmchkRun(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"opensm-subnet.lst", "opensm.fdbs", "opensm.mcfdbs", "ibdmchk.txt"} {
		data, err := os.ReadFile(filepath.Join(ring5, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	run := func(args ...string) (string, string, error) {
		t.Helper()
		return runWith(t, newIbdmchkCmd, func(o *ibdmchkOptions) error {
			o.PortDLIDsFile = filepath.Join(dir, "dlids")
			o.Defaults = [3][]string{{filepath.Join(dir, "none")}, {filepath.Join(dir, "none")}, {filepath.Join(dir, "none")}}
			return ibdmchkRun(o)
		}, args...)
	}
	files := []string{"-s", filepath.Join(dir, "opensm-subnet.lst"), "-f", filepath.Join(dir, "opensm.fdbs"), "-m", filepath.Join(dir, "opensm.mcfdbs")}
	out, _, err := run(files...)
	if cmdutil.ExitCode(err) != cmdutil.ExitFindings {
		t.Fatalf("error %v, want findings (the ring's credit loop)", err)
	}
	ref, _ := os.ReadFile(filepath.Join(dir, "ibdmchk.txt"))
	want := strings.ReplaceAll(string(ref), "= opensm", "= "+dir+"/opensm")
	want = strings.ReplaceAll(want, "file:opensm", "file:"+dir+"/opensm")
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("unexpected report (-ibdmchk +ibtool):\n%s", diff)
	}
	if dl, err := os.ReadFile(filepath.Join(dir, "dlids")); err != nil || !strings.HasPrefix(string(dl), "# NUM-DLIDS PORT-NAME \n     2 S0000000000200000/U1/P1\n") {
		t.Errorf("detailed DLIDs file %q, %v", dl, err)
	}

	// --json: the same findings, typed
	out, _, err = run(append(files, "--json")...)
	if cmdutil.ExitCode(err) != cmdutil.ExitFindings {
		t.Fatalf("--json: error %v", err)
	}
	var doc struct {
		Failed      bool
		StoppedAt   string
		Routes      struct{ Paths int }
		CreditLoops struct {
			Loop []struct {
				Port string
				VL   int
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if !doc.Failed || doc.StoppedAt != "done" || doc.Routes.Paths != 20 || len(doc.CreditLoops.Loop) != 7 || doc.CreditLoops.Loop[0].Port != "S0000000000200000/U1/P1" {
		t.Errorf("--json: %+v", doc)
	}

	// bad input: exit 2 with the file and line
	bad := filepath.Join(dir, "bad.fdbs")
	os.WriteFile(bad, []byte("dump_ucast_routes: Switch 0x0000000000200000\n0x0001 : ?\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-s", files[1], "-f", bad, "-m", files[5]}, bad + ":2: want"},
		{[]string{"-s", filepath.Join(dir, "missing"), "-f", files[3], "-m", files[5]}, "no such file"},
		{[]string{"-f", files[3], "-m", files[5]}, "no subnet file (-s) given and none of "},
		{[]string{"-s", files[1], "-f", files[3], "-m", files[5], "-u", "-r", filepath.Join(dir, "ibdmchk.txt")}, "ibdmchk.txt:1: bad GUID"},
		{append(append([]string{}, files...), "-l", "9"), "LMC 9 is not between 0 and 7"},
	} {
		_, _, err := run(tc.args...)
		if cmdutil.ExitCode(err) != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v (exit %d), want exit 2 with %q", tc.args, err, cmdutil.ExitCode(err), tc.want)
		}
	}
}
