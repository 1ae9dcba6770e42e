package fabric

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// runNodePrint runs an ibprint tool with args on topology text, kept in a
// fresh cache directory.
func runNodePrint(t *testing.T, name string, topo []byte, args ...string) string {
	t.Helper()
	out, err := runNodePrintErr(t, name, topo, args...)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out
}

func runNodePrintErr(t *testing.T, name string, topo []byte, args ...string) (string, error) {
	t.Helper()
	var kind nodePrintKind
	for _, k := range nodePrintKinds {
		if k.name == name {
			kind = k
		}
	}
	f, out, _ := cmdutil.NewTestFactory(nil)
	c := newNodePrintCmd(f, name, kind, func(o *nodePrintOptions) error {
		o.CacheDir = t.TempDir()
		o.Topology = func() ([]byte, error) { return topo, nil }
		return nodePrintRun(o)
	})
	err := execFabricCmd(c, args)
	return out.String(), err
}

// TestNodePrintTools finds nodes of the two-switch fabric's grouped
// topology by name and by GUID.
func TestNodePrintTools(t *testing.T) {
	topo := subnet.TopologyText(fakeTwoSwitches(t, nil), true, time.Time{})
	hca2 := "Ca\t2 \"H-0000000000100003\"\t\t# \"Hca2\"\n[1](100004) \t\"S-0000000000200001\"[1]\t\t# lid 5 lmc 0 \"Switch2\" lid 2 4xSDR\n"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"ibprintca", []string{"Hca2"}, hca2},
		{"ibprintca", []string{"-G", "0x100003"}, hca2},
		{"ibprintswitch", []string{"Switch2"}, "Switch\t8 \"S-0000000000200001\"\t\t# \"Switch2\" base port 0 lid 2 lmc 0\n" +
			"[1]\t\"H-0000000000100003\"[1](100004) \t\t# \"Hca2\" lid 5 4xSDR\n" +
			"[2]\t\"H-0000000000100009\"[1](10000a) \t\t# \"Hca4\" lid 9 4xSDR\n" +
			"[3]\t\"S-0000000000200000\"[3]\t\t# \"Switch1\" lid 1 4xSDR\n" +
			"[5]\t\"S-0000000000200000\"[5]\t\t# \"Switch1\" lid 1 4xSDR\n"},
		{"ibprintrt", []string{"-l"}, ""},
		{"ibprintca", []string{"-l"}, "Ca\t: 0x0000000000100009 ports 2 \"Hca4\"\nCa\t: 0x0000000000100003 ports 2 \"Hca2\"\n" +
			"Ca\t: 0x0000000000100006 ports 2 \"Hca3\"\nCa\t: 0x0000000000100000 ports 2 \"Hca1\"\n"},
	}
	for _, tt := range tests {
		out, err := runNodePrintErr(t, tt.name, topo, tt.args...)
		if err != nil {
			t.Fatalf("%s %v: %v", tt.name, tt.args, err)
		}
		if diff := cmp.Diff(tt.want, out); diff != "" {
			t.Errorf("%s %v (-want +got):\n%s", tt.name, tt.args, diff)
		}
	}
	_, err := runNodePrintErr(t, "ibprintca", topo, "nosuch")
	if cmdutil.ExitCode(err) != cmdutil.ScriptFailed || !strings.HasPrefix(err.Error(), `"nosuch" not found`) {
		t.Errorf("ibprintca nosuch: %v (exit %d), want exit %d", err, cmdutil.ExitCode(err), cmdutil.ScriptFailed)
	}
}

func TestPrintNode(t *testing.T) {
	topo := `Switch	8 "S-0000000000200001"		# "Switch2" base port 0 lid 3 lmc 0
[3]	"S-0000000000200000"[3]		# "Switch1" lid 1 4xSDR
[1]	"H-0000000000100003"[1](100004) 		# "Hca2" lid 4 4xSDR
Switch	8 "S-0000000000200000"		# "Switch1" base port 0 lid 1 lmc 0
[1]	"H-0000000000100000"[1](100001) 		# "Hca1" lid 2 4xSDR
Ca	2 "H-0000000000100003"		# "Hca2"
[1](100004) 	"S-0000000000200001"[1]		# lid 4 lmc 0 "Switch2" lid 3 4xSDR
Ca	2 "H-0000000000100000"		# "Hca1"
[1](100001) 	"S-0000000000200000"[1]		# lid 2 lmc 0 "Switch1" lid 1 4xSDR
`
	lines := strings.FieldsFunc(topo, func(r rune) bool { return r == '\n' })
	for _, c := range []struct {
		kind   int
		target string
		want   []string
		found  int
	}{
		// Ports sorted, printed when the next switch starts.
		{1, "Switch2", []string{lines[0], lines[2], lines[1]}, 1},
		// The last switch's ports are never printed.
		{1, "Switch1", []string{lines[3]}, 1},
		{1, "0x0000000000200000", []string{lines[3]}, 1},
		// The last CA's ports are, at the end.
		{0, "Hca1", []string{lines[7], lines[8]}, 1},
		{0, "Hca.", []string{lines[5], lines[6], lines[7], lines[8]}, 2},
		{2, "Hca1", nil, 0},
	} {
		k := nodePrintKinds[c.kind]
		got, found := printNode([]byte(topo), k, c.target, regexp.MustCompile(`[\s"]`+c.target+`[\s"]`))
		var want []string
		for _, l := range c.want {
			want = append(want, l+"\n")
		}
		if diff := cmp.Diff(want, got); diff != "" || found != c.found {
			t.Errorf("%s %s: found %d, want %d; unexpected lines (-want +got):\n%s", k.name, c.target, found, c.found, diff)
		}
	}
}
