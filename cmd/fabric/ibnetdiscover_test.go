package fabric

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// fakeTwoSwitches discovers ibsim's two-switch example on the in-memory
// fabric, after hurt has broken what it likes.
func fakeTwoSwitches(t *testing.T, hurt func(*subnettest.Fabric)) *subnet.Fabric {
	t.Helper()
	data, err := os.ReadFile("../../internal/simfabric/testdata/net.2sw2path4hca")
	if err != nil {
		t.Fatal(err)
	}
	ff, err := subnettest.FromNet(string(data), "Hca1")
	if err != nil {
		t.Fatal(err)
	}
	if hurt != nil {
		hurt(ff)
	}
	x := madrpc.NewTransactor(ff.Transport(), madrpc.TransactorOptions{Timeout: 20 * time.Millisecond, Retries: 1})
	defer x.Close()
	fab, err := subnet.Discover(context.Background(), x, subnet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return fab
}

func runIbnetdiscover(t *testing.T, fab *subnet.Fabric, args ...string) (string, string, error) {
	t.Helper()
	f, out, errOut := cmdutil.NewTestFactory(nil)
	c := newIbnetdiscoverCmd(f, func(o *ibnetdiscoverOptions) error {
		o.Discover = func() (*subnet.Fabric, error) { return fab, nil }
		o.Now = func() time.Time { return time.Date(2026, 11, 3, 8, 4, 5, 0, time.Local) }
		return ibnetdiscoverRun(o)
	})
	c.SetArgs(args)
	c.SetOut(out)
	c.SetErr(errOut)
	c.SilenceErrors, c.SilenceUsage = true, true
	err := c.Execute()
	return out.String(), errOut.String(), err
}

// TestIbnetdiscoverPartial: a CA that answers nothing is one line on
// stderr, the rest of the topology is printed, and the exit status is 3.
func TestIbnetdiscoverPartial(t *testing.T) {
	fab := fakeTwoSwitches(t, func(ff *subnettest.Fabric) { ff.Node("Hca4").Dead = true })
	out, errOut, err := runIbnetdiscover(t, fab, "-l")
	want := `Ca	 : 0x0000000000100003 ports 2 devid 0x0 vendid 0x0 "Hca2"
Ca	 : 0x0000000000100006 ports 2 devid 0x0 vendid 0x0 "Hca3"
Ca	 : 0x0000000000100000 ports 2 devid 0x0 vendid 0x0 "Hca1"
Switch	 : 0x0000000000200001 ports 8 devid 0x0 vendid 0x0 "Switch2"
Switch	 : 0x0000000000200000 ports 8 devid 0x0 vendid 0x0 "Switch1"
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if cmdutil.ExitCode(err) != cmdutil.ExitFailure || !strings.Contains(err.Error(), "discovery incomplete: 1 queries failed") {
		t.Errorf("err = %v (exit %d)", err, cmdutil.ExitCode(err))
	}
	if !strings.HasPrefix(errOut, "ibnetdiscover: NodeInfo at DR path 0,1,3,2 (0x0000000000200001 \"Switch2\" port 2): ") ||
		strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr %q", errOut)
	}
}

// TestIbnetdiscoverHeader checks the header: the clock as ctime prints it
// (day padded with a space), and -m.
func TestIbnetdiscoverHeader(t *testing.T) {
	out, _, err := runIbnetdiscover(t, fakeTwoSwitches(t, nil), "-m")
	if err != nil {
		t.Fatal(err)
	}
	want := "#\n# Topology file: generated on Tue Nov  3 08:04:05 2026\n#\n# Reported max hops discovered: 3\n# Total MADs used: 37\n# Initiated from node 0000000000100000 port 0000000000100001\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("header (-want +got):\n%s", cmp.Diff(want, out[:min(len(out), len(want))]))
	}
}

// topologyWriterOutput returns what write writes with a TopologyWriter of
// fab.
func topologyWriterOutput(fab *subnet.Fabric, write func(*subnet.TopologyWriter)) string {
	var b strings.Builder
	w := bufio.NewWriter(&b)
	write(&subnet.TopologyWriter{W: w, Fabric: fab})
	w.Flush() // a strings.Builder takes all
	return b.String()
}

// TestIbnetdiscoverModes checks which of subnet.TopologyWriter's
// outputs each flag picks; subnet's tests check the text.
func TestIbnetdiscoverModes(t *testing.T) {
	fab := fakeTwoSwitches(t, nil)
	now := time.Date(2026, 11, 3, 8, 4, 5, 0, time.Local)
	tests := []struct {
		args  []string
		write func(*subnet.TopologyWriter)
	}{
		{[]string{"-S"}, func(w *subnet.TopologyWriter) { w.List([]mad.NodeType{mad.NodeTypeSwitch}) }},
		{[]string{"-H"}, func(w *subnet.TopologyWriter) { w.List([]mad.NodeType{mad.NodeTypeCA}) }},
		{[]string{"-R"}, func(w *subnet.TopologyWriter) { w.List([]mad.NodeType{mad.NodeTypeRouter}) }},
		{[]string{"-l"}, func(w *subnet.TopologyWriter) {
			w.List([]mad.NodeType{mad.NodeTypeCA, mad.NodeTypeSwitch, mad.NodeTypeRouter})
		}},
		{[]string{"-p"}, (*subnet.TopologyWriter).Ports},
		{[]string{"--format", "dot"}, (*subnet.TopologyWriter).Dot},
		{[]string{"-f"}, func(w *subnet.TopologyWriter) { w.Full = true; w.Header(now, false); w.Dump() }},
		{[]string{"-g"}, func(w *subnet.TopologyWriter) {
			w.Group, w.Chassis = true, fab.GroupChassis()
			w.Header(now, false)
			w.Dump()
		}},
	}
	for _, tt := range tests {
		out, _, err := runIbnetdiscover(t, fab, tt.args...)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(topologyWriterOutput(fab, tt.write), out); diff != "" {
			t.Errorf("ibnetdiscover %v (-want +got):\n%s", tt.args, diff)
		}
	}
}

func TestIbnetdiscoverJSON(t *testing.T) {
	out, _, err := runIbnetdiscover(t, fakeTwoSwitches(t, nil), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		FromNode string `json:"fromNode"`
		Nodes    []struct {
			Type        string `json:"type"`
			Description string `json:"description"`
			Path        string `json:"path"`
			Ports       []struct {
				Port   int `json:"port"`
				Remote *struct {
					Description string `json:"description"`
					Port        int    `json:"port"`
				} `json:"remote"`
			} `json:"ports"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range doc.Nodes {
		got = append(got, n.Type+" "+n.Description+" "+n.Path)
	}
	want := []string{"Switch Switch2 0,1,3", "Switch Switch1 0,1", "Channel Adapter Hca4 0,1,3,2",
		"Channel Adapter Hca2 0,1,3,1", "Channel Adapter Hca3 0,1,2", "Channel Adapter Hca1 0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if doc.FromNode != "0x0000000000100000" || doc.Nodes[0].Ports[2].Remote.Description != "Switch1" {
		t.Errorf("from %s, Switch2 port 3 peer %+v", doc.FromNode, doc.Nodes[0].Ports[2].Remote)
	}
}

func TestIbnetdiscoverUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "-1"}, "invalid -o -1"},
		{[]string{"-y", "0x1g"}, `invalid M_Key "0x1g"`},
		{[]string{"a", "b"}, "expected at most 1 argument"},
	} {
		_, _, err := runIbnetdiscover(t, nil, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || cmdutil.ExitCode(err) != cmdutil.ExitUsage {
			t.Errorf("%q: err %v (exit %d), want usage error %q", tt.args, err, cmdutil.ExitCode(err), tt.want)
		}
	}
}

func TestIbnetdiscoverDot(t *testing.T) {
	out, _, err := runIbnetdiscover(t, fakeTwoSwitches(t, nil), "--format", "dot")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "graph fabric {\n") || !strings.HasSuffix(out, "}\n") {
		t.Errorf("not a graph:\n%s", out)
	}
	if n := strings.Count(out, " -- "); n != 6 {
		t.Errorf("%d edges, want 6 (one per link):\n%s", n, out)
	}
	for _, want := range []string{
		"\t\"S-0000000000200001\" [shape=box, label=\"Switch2\\n0x0000000000200001\\nlid 2\"];\n",
		"\t\"S-0000000000200001\" -- \"S-0000000000200000\" [taillabel=\"5\", headlabel=\"5\", label=\"4xSDR\"];\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if _, _, err := runIbnetdiscover(t, nil, "--format", "svg"); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Errorf("--format svg: %v", err)
	}
}

// TestTopologyFDR10: a Mellanox QDR link whose MlnxExtPortInfo says FDR10
// prints as FDR10 in the topology, the ports report and iblinkinfo.
func TestTopologyFDR10(t *testing.T) {
	data, err := os.ReadFile("../../internal/simfabric/testdata/net.2sw2path4hca")
	if err != nil {
		t.Fatal(err)
	}
	ff, err := subnettest.FromNet(string(data), "Hca1")
	if err != nil {
		t.Fatal(err)
	}
	for id, dev := range map[string]uint16{"Switch1": 0xc738, "Hca1": 0x1003} {
		n := ff.Node(id)
		n.DeviceID = dev
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 {
				p.Speed = 4
			}
		}
	}
	ff.Node("Switch1").Ports[1].FDR10 = true
	ff.Node("Hca1").Ports[1].FDR10 = true
	x := madrpc.NewTransactor(ff.Transport(), madrpc.TransactorOptions{Timeout: 20 * time.Millisecond})
	defer x.Close()
	fab, err := subnet.Discover(context.Background(), x, subnet.Options{MlnxExtPortInfo: true})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runIbnetdiscover(t, fab)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"[1]\t\"H-0000000000100000\"[1](100001) \t\t# \"Hca1\" lid 3 4xFDR10\n",
		"[1](100001) \t\"S-0000000000200000\"[1]\t\t# lid 3 lmc 0 \"Switch1\" lid 1 4xFDR10\n",
		"[2]\t\"H-0000000000100006\"[1](100007) \t\t# \"Hca3\" lid 7 4xQDR\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("topology lacks %q:\n%s", want, out)
		}
	}
	if got := string((&subnet.LinkLine{}).AppendLink(nil, fab.NodeByGUID(0x200000).Port(1))); !strings.Contains(got, "10.0 Gbps (FDR10)") {
		t.Errorf("iblinkinfo link %q, want FDR10", got)
	}
}
