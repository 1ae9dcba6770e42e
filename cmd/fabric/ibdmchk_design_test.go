package fabric

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

func TestIbdmchkDesignOptions(t *testing.T) {
	o := cmdtest.ParsedOptions(t, "ibdmchk", newIbdmchkCmd, []string{"--topo", "f.topo", "-n", "H0", "-p", "2", "-u", "-r", "roots"})
	got := []any{o.Design.TopoFile, o.Design.SMNode, o.Design.SMPort, o.Design.Routing, o.UpDown, o.RootsFile}
	want := []any{"f.topo", "H0", 2, "updn", true, "roots"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected options (-want +got):\n%s", diff)
	}
	long := cmdtest.ParsedOptions(t, "ibdmchk", newIbdmchkCmd, []string{"--topo", "f.topo", "--node", "0x10", "--sm-port", "0", "--routing", "updn"})
	if long.Design.SMNode != "0x10" || long.Design.SMPort != 0 || long.Design.Routing != "updn" || long.UpDown {
		t.Errorf("long options: %+v", long.Design)
	}
	if def := cmdtest.ParsedOptions(t, "ibdmchk", newIbdmchkCmd, []string{"--topo", "f.topo"}); def.Design.SMPort != -1 || def.Design.Routing != "minhop" {
		t.Errorf("defaults: %+v", def.Design)
	}
}

// ringTopoText is ibnetdiscover's topology of a ring of n switches with a
// host each, made from host H0.
func ringTopoText(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#\n# Topology file: generated on Wed Dec  2 08:00:00 2026\n#\n# Initiated from node 0000000000100000 port 0000000000100001\n")
	sw := func(i int) string { return fmt.Sprintf("S-%016x", 0x200000+i) }
	host := func(i int) string { return fmt.Sprintf("H-%016x", 0x100000+2*i) }
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\nvendid=0x2c9\ndevid=0xb924\nsysimgguid=0x%x\nswitchguid=0x%x(%x)\n", 0x200000+i, 0x200000+i, 0x200000+i)
		fmt.Fprintf(&b, "Switch\t8 \"%s\"\t\t# \"S%d\" base port 0 lid %d lmc 0\n", sw(i), i, i+1)
		fmt.Fprintf(&b, "[1]\t\"%s\"[2]\t\t# \"S%d\" lid %d 4xQDR\n", sw((i+1)%n), (i+1)%n, (i+1)%n+1)
		fmt.Fprintf(&b, "[2]\t\"%s\"[1]\t\t# \"S%d\" lid %d 4xQDR\n", sw((i+n-1)%n), (i+n-1)%n, (i+n-1)%n+1)
		fmt.Fprintf(&b, "[3]\t\"%s\"[1](%x) \t\t# \"H%d\" lid %d 4xQDR\n", host(i), 0x100001+2*i, i, 10+i)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\nvendid=0x2c9\ndevid=0x1003\nsysimgguid=0x%x\ncaguid=0x%x\n", 0x100000+2*i, 0x100000+2*i)
		fmt.Fprintf(&b, "Ca\t1 \"%s\"\t\t# \"H%d\"\n", host(i), i)
		fmt.Fprintf(&b, "[1](%x) \t\"%s\"[3]\t\t# lid %d lmc 0 \"S%d\" lid %d 4xQDR\n", 0x100001+2*i, sw(i), 10+i, i, i+1)
	}
	return b.String()
}

// TestIbdmchkDesignRun routes a ring min-hop (a credit loop) and Up/Down
// (none) from its topology file.
func TestIbdmchkDesignRun(t *testing.T) {
	dir := t.TempDir()
	topo := filepath.Join(dir, "ring.topo")
	os.WriteFile(topo, []byte(ringTopoText(5)), 0o644)
	roots := filepath.Join(dir, "roots")
	os.WriteFile(roots, []byte("# the first switch\nS0\n"), 0o644)
	run := func(args ...string) (string, string, error) {
		t.Helper()
		return runWith(t, newIbdmchkCmd, func(o *ibdmchkOptions) error {
			o.PortDLIDsFile = ""
			return ibdmchkRun(o)
		}, args...)
	}
	out, _, err := run("--topo", topo)
	if cmdutil.ExitCode(err) != cmdutil.ExitFindings {
		t.Fatalf("min-hop: error %v, want findings (the ring's credit loop)", err)
	}
	head := "-------------------------------------------------\nIBDMCHK Cluster Design Mode:\n Topology File .. " + topo +
		"\n SM Node ........ H-0000000000100000\n SM Port ........ 1\n LMC ............ 0\n-I- Read 10 nodes and 10 links from the topology file\n-I- Assigned LIDs to 10 ports, up to LID 10\n-I- Routed with minhop\n"
	if !strings.HasPrefix(out, head) || !strings.Contains(out, "-E- credit loops in routing") {
		t.Errorf("min-hop report:\n%s", out)
	}
	out, _, err = run("--topo", topo, "--routing", "updn", "-r", roots)
	if err != nil || !strings.Contains(out, "-I- Recognized 1 root nodes:\n S0000000000200000/U1\n") || !strings.Contains(out, "-I- no credit loops found") {
		t.Errorf("Up/Down: error %v, report:\n%s", err, out)
	}
	out, _, err = run("--topo", topo, "-n", "S2", "--json")
	var doc struct {
		Failed bool
		Design struct {
			Engine string
			SMPort string
			Ports  int
		}
	}
	if jerr := json.Unmarshal([]byte(out), &doc); jerr != nil || !doc.Failed || doc.Design.Engine != "minhop" || doc.Design.SMPort != "S-0000000000200002/0" || doc.Design.Ports != 10 {
		t.Errorf("--json: %v %+v\n%s", jerr, doc, out)
	}
	if cmdutil.ExitCode(err) != cmdutil.ExitFindings {
		t.Errorf("--json: error %v", err)
	}

	bad := filepath.Join(dir, "bad.topo")
	os.WriteFile(bad, []byte(ringTopoText(3)+"\nnot a topology line\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--topo", bad}, bad + ":"},
		{[]string{"--topo", filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"--topo", topo, "-n", "nobody"}, "no node \"nobody\""},
		{[]string{"--topo", topo, "-n", "H1", "-p", "2"}, "no linked port 2"},
		{[]string{"--topo", topo, "-u", "-r", topo}, topo + ":6: invalid routing model: no node \"vendid=0x2c9\""},
		{[]string{"--topo", topo, "-s", "x"}, "--subnet does not go with --topo"},
		{[]string{"--topo", topo, "--fabric"}, "--fabric does not go with --topo"},
		{[]string{"--topo", topo, "--routing", "ftree"}, "want minhop or updn"},
		{[]string{"-n", "H0", "-s", "x"}, "go with --topo"},
		{[]string{"--topo", topo, "-p", "300"}, "not between 0 and 254"},
	} {
		_, _, err := run(tc.args...)
		if cmdutil.ExitCode(err) != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v (exit %d), want exit 2 with %q", tc.args, err, cmdutil.ExitCode(err), tc.want)
		}
	}
}
