package fabric

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// TestPickNodeLines runs the scripts' awk programs on topology lines,
// with the outputs worked out from infiniband-diags 44's ibhosts.in and
// ibswitches.in.
func TestPickNodeLines(t *testing.T) {
	topo := strings.Join([]string{
		"#",
		"# Topology file: generated on Mon Nov 23 08:44:59 2026",
		"vendid=0x0",
		"switchguid=0x200001(200001)",
		`Switch	8 "S-0000000000200001"		# "Switch2" base port 0 lid 3 lmc 0`,
		`Switch	36 "S-0002c90200401234"		# "MF0;sw:IS4/U1" enhanced port 0 lid 12 lmc 1`,
		`Switch	8 "S-0000000000200009"		# "has port 0 inside" base port 0 lid 9 lmc 0`,
		`[1]	"H-0000000000100003"[1](100004) 		# "Hca2" lid 4 4xSDR`,
		"caguid=0x100009",
		`Ca	2 "H-0000000000100009"		# "Hca4"`,
		`Ca	1 "H-0000000000100010"		#	"tabbed"`,
		`Rt	2 "R-0000000000300000"		# "router"`,
		"ibwarn: [123] some warning",
		"something iberror: failed",
		"",
	}, "\n")
	tests := []struct {
		keyword string
		want    []string
	}{
		{"Ca", []string{
			"Ca\t: 0x0000000000100009 ports 2 \"Hca4\"",
			"Ca\t: 0x0000000000100010 ports 1 \"tabbed\"",
			"ibwarn: [123] some warning",
			"something iberror: failed",
		}},
		{"Switch", []string{
			"Switch\t: 0x0000000000200001 ports 8 \"Switch2\" base port 0 lid 3 lmc 0",
			"Switch\t: 0x0002c90200401234 ports 36 \"MF0;sw:IS4/U1\" enhanced port 0 lid 12 lmc 1",
			// ibswitches cuts at the first "port 0" and glues the
			// pieces back together.
			"Switch\t: 0x0000000000200009 ports 8 \"has port 0 inside\" base port 0 lid 9 lmc 0",
			"ibwarn: [123] some warning",
			"something iberror: failed",
		}},
		{"Rt", []string{
			"Rt\t: 0x0000000000300000 ports 2 \"router\"",
			"ibwarn: [123] some warning",
			"something iberror: failed",
		}},
	}
	for _, tt := range tests {
		var got []string
		for _, l := range pickNodeLines([]byte(topo), tt.keyword) {
			got = append(got, l.Text)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.keyword, diff)
		}
	}
}

func TestSwitchListDesc(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"Switch2" base port 0 lid 3 lmc 0`, `"Switch2" base port 0 lid 3 lmc 0`},
		{`"a" enhanced port 0 lid 1 lmc 0`, `"a" enhanced port 0 lid 1 lmc 0`},
		{`"x port 0 y" base port 0 lid 9 lmc 0`, `"x port 0 y" base port 0 lid 9 lmc 0`},
		{`no marker at all`, ` no marker at all`},
	}
	for _, tt := range tests {
		if got := switchListDesc(tt.in); got != tt.want {
			t.Errorf("switchListDesc(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzPickNodeLines: any topology text gives lines, never a panic, and
// every node line it picks starts with its keyword.
func FuzzPickNodeLines(f *testing.F) {
	f.Add([]byte("Switch\t8 \"S-0000000000200001\"\t\t# \"Switch2\" base port 0 lid 3 lmc 0\nCa\t2 \"H-0000000000100009\"\t\t# \"Hca4\"\n"))
	f.Add([]byte("Switch port 0#port 0\nCa\nRt x\nibwarn: x\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		for _, kw := range []string{"Ca", "Switch", "Rt"} {
			for _, l := range pickNodeLines(text, kw) {
				if l.Type != "" && !strings.HasPrefix(l.Text, l.Type) {
					t.Fatalf("%s line %q does not start with its type %q", kw, l.Text, l.Type)
				}
			}
		}
	})
}

// runNodeList runs a node list tool with args on topology text.
func runNodeList(t *testing.T, k nodeListKind, topo []byte, args ...string) string {
	t.Helper()
	f, out, _ := cmdutil.NewTestFactory(nil)
	c := newNodeListCmd(f, k, func(o *nodeListOptions) error {
		o.Lines = func() ([]nodeListLine, error) { return textNodeLines(topo, k.keywords), nil }
		return nodeListRun(o)
	})
	if err := execFabricCmd(c, args); err != nil {
		t.Fatalf("%s %v: %v", k.name, args, err)
	}
	return out.String()
}

// TestNodeListTools runs each node list tool on the two-switch fabric's
// topology: the lines the scripts print, in their order.
func TestNodeListTools(t *testing.T) {
	topo := subnet.TopologyText(fakeTwoSwitches(t, nil), false, time.Time{})
	hosts := `Ca	: 0x0000000000100009 ports 2 "Hca4"
Ca	: 0x0000000000100003 ports 2 "Hca2"
Ca	: 0x0000000000100006 ports 2 "Hca3"
Ca	: 0x0000000000100000 ports 2 "Hca1"
`
	switches := `Switch	: 0x0000000000200001 ports 8 "Switch2" base port 0 lid 2 lmc 0
Switch	: 0x0000000000200000 ports 8 "Switch1" base port 0 lid 1 lmc 0
`
	want := map[string]string{"ibhosts": hosts, "ibswitches": switches, "ibrouters": "", "ibnodes": hosts + switches}
	for _, k := range nodeListKinds {
		if diff := cmp.Diff(want[k.name], runNodeList(t, k, topo)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", k.name, diff)
		}
	}
}

// TestFabricNodeLines: the lines made from a discovered fabric are those
// the scripts pick from ibnetdiscover's text of it, for every tool, on
// the two-switch fabric with a description that needs cleaning.
func TestFabricNodeLines(t *testing.T) {
	fab := fakeTwoSwitches(t, nil)
	fab.ByType(mad.NodeTypeCA)[0].Desc = "Hca\x01 \"quoted\""
	fab.ByType(mad.NodeTypeSwitch)[0].EnhancedPort0 = true
	topo := subnet.TopologyText(fab, false, time.Time{})
	for _, k := range nodeListKinds {
		want := textNodeLines(topo, k.keywords)
		got := fabricNodeLines(fab, k.keywords)
		if k.name != "ibrouters" && len(got) < 2 {
			t.Errorf("%s: only %d lines", k.name, len(got))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: unexpected lines (-want +got):\n%s", k.name, diff)
		}
	}
}
