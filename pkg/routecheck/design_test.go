package routecheck

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// topoWriter writes a topology file as ibnetdiscover does: switches get
// GUIDs 0x200000+i, hosts 0x100000+i (port GUID node GUID+1).
type topoWriter struct {
	sw    int
	hosts int
	links map[[2]int]link // (node, port) -> remote; switches 0.., hosts 1000..
	// system puts a node in the system of another (its system image GUID
	// is that node's GUID); a node not in it is a system of its own.
	system map[int]int
}

type link struct{ node, port int }

func newTopoWriter(sw, hosts int) *topoWriter {
	return &topoWriter{sw: sw, hosts: hosts, links: map[[2]int]link{}}
}

func (w *topoWriter) link(a, pa, b, pb int) {
	w.links[[2]int{a, pa}] = link{b, pb}
	w.links[[2]int{b, pb}] = link{a, pa}
}

func (w *topoWriter) guid(n int) uint64 {
	if n >= 1000 {
		return 0x100000 + uint64(n-1000)*2
	}
	return 0x200000 + uint64(n)
}

func (w *topoWriter) id(n int) string {
	if n >= 1000 {
		return fmt.Sprintf("H-%016x", w.guid(n))
	}
	return fmt.Sprintf("S-%016x", w.guid(n))
}

// sysGUID is a node's system image GUID.
func (w *topoWriter) sysGUID(n int) uint64 {
	if s, ok := w.system[n]; ok {
		return w.guid(s)
	}
	return w.guid(n)
}

func (w *topoWriter) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#\n# Topology file: generated on Wed Dec  2 08:00:00 2026\n#\n# Initiated from node %016x port %016x\n", w.guid(1000), w.guid(1000)+1)
	ports := 36
	for k := range w.links {
		if k[0] < 1000 && k[1] > ports {
			ports = k[1]
		}
	}
	for s := 0; s < w.sw; s++ {
		fmt.Fprintf(&b, "\nvendid=0x2c9\ndevid=0xb924\nsysimgguid=0x%x\nswitchguid=0x%x(%x)\n", w.sysGUID(s), w.guid(s), w.guid(s))
		fmt.Fprintf(&b, "Switch\t%d \"%s\"\t\t# \"S%d\" base port 0 lid 0 lmc 0\n", ports, w.id(s), s)
		for p := 1; p <= ports; p++ {
			r, ok := w.links[[2]int{s, p}]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "[%d]\t\"%s\"[%d]", p, w.id(r.node), r.port)
			if r.node >= 1000 {
				fmt.Fprintf(&b, "(%x) ", w.guid(r.node)+1)
			}
			fmt.Fprintf(&b, "\t\t# \"x\" lid 0 4xQDR\n")
		}
	}
	for h := 1000; h < 1000+w.hosts; h++ {
		fmt.Fprintf(&b, "\nvendid=0x2c9\ndevid=0x1003\nsysimgguid=0x%x\ncaguid=0x%x\n", w.guid(h), w.guid(h))
		fmt.Fprintf(&b, "Ca\t2 \"%s\"\t\t# \"H%d\"\n", w.id(h), h-1000)
		for p := 1; p <= 2; p++ {
			if r, ok := w.links[[2]int{h, p}]; ok {
				fmt.Fprintf(&b, "[%d](%x) \t\"%s\"[%d]\t\t# lid 0 lmc 0 \"S\" lid 0 4xQDR\n", p, w.guid(h)+uint64(p), w.id(r.node), r.port)
			}
		}
	}
	return b.String()
}

// ringTopo is a ring of n switches with a host each.
func ringTopo(n int) *topoWriter {
	w := newTopoWriter(n, n)
	for i := 0; i < n; i++ {
		w.link(i, 1, (i+1)%n, 2)
		w.link(i, 3, 1000+i, 1)
	}
	return w
}

// fatTreeTopo is a two-level tree: leaves each with hostsPerLeaf hosts,
// every leaf linked to every spine.
func fatTreeTopo(spines, leaves, hostsPerLeaf int) *topoWriter {
	w := newTopoWriter(spines+leaves, leaves*hostsPerLeaf)
	for l := 0; l < leaves; l++ {
		for s := 0; s < spines; s++ {
			w.link(s, 1+l, spines+l, 1+s)
		}
		for h := 0; h < hostsPerLeaf; h++ {
			w.link(spines+l, 1+spines+h, 1000+l*hostsPerLeaf+h, 1)
		}
	}
	return w
}

func readTopo(t *testing.T, w *topoWriter) *Topology {
	t.Helper()
	topo, err := ReadTopology(strings.NewReader(w.String()), "topo")
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func designCheck(t *testing.T, w *topoWriter, o DesignOptions, co Options) (*DesignResult, *Report) {
	t.Helper()
	topo := readTopo(t, w)
	if o.SMNode == 0 {
		o.SMNode, o.SMPort = topo.FromNode, 1
	}
	f, res, err := Design(topo, o)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Check(f, co)
	if err != nil {
		t.Fatal(err)
	}
	return res, rep
}

func TestReadTopology(t *testing.T) {
	topo := readTopo(t, ringTopo(3))
	if got, want := len(topo.Nodes), 6; got != want {
		t.Fatalf("%d nodes, want %d", got, want)
	}
	if got, want := len(topo.Links), 6; got != want {
		t.Errorf("%d links, want %d", got, want)
	}
	type node struct {
		ID, Desc      string
		GUID, Sys     uint64
		Type          NodeType
		Ports         int
		Port1GUID     uint64
		FirstLinkPeer string
	}
	var got []node
	for _, n := range topo.Nodes[2:4] {
		got = append(got, node{n.ID, n.Desc, n.GUID, n.SystemGUID, n.Type, n.NumPorts, n.PortGUIDs[1], ""})
	}
	want := []node{
		{"S-0000000000200002", "S2", 0x200002, 0x200002, Switch, 36, 0x200002, ""},
		{"H-0000000000100000", "H0", 0x100000, 0x100000, CA, 2, 0x100001, ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected nodes (-want +got):\n%s", diff)
	}
	if topo.FromNode != 0x100000 || topo.FromPort != 0x100001 {
		t.Errorf("from node 0x%x port 0x%x", topo.FromNode, topo.FromPort)
	}
	for _, name := range []string{"H0", "0x100000", "H-0000000000100000"} {
		if n, err := topo.Lookup(name); err != nil || n.GUID != 0x100000 {
			t.Errorf("Lookup(%q) = %v, %v", name, n, err)
		}
	}
	if _, err := topo.Lookup("nope"); !errors.Is(err, ErrModel) {
		t.Errorf("Lookup(nope) error %v, want ErrModel", err)
	}
}

func TestReadTopologyErrors(t *testing.T) {
	good := ringTopo(3).String()
	tests := []struct {
		name, text, want string
	}{
		{"empty", "# nothing\n", "topo: no nodes"},
		{"garbage", good + "\nhello world\n", "unrecognised line"},
		{"port out of range", strings.Replace(good, "[3]\t\"H-", "[99]\t\"H-", 1), "has no port 99"},
		{"unknown remote", strings.Replace(good, "\"H-0000000000100000\"[1]", "\"H-00000000deadbeef\"[1]", 1), "no node \"H-00000000deadbeef\""},
		{"remote port out of range", strings.Replace(good, "\"H-0000000000100000\"[1]", "\"H-0000000000100000\"[7]", 1), "has no port 7"},
		{"two peers", strings.Replace(good, "\"S-0000000000200002\"[1]", "\"S-0000000000200001\"[1]", 1), "is linked to port"},
		{"bad guid", strings.Replace(good, "caguid=0x100000", "caguid=0xzz", 1), "bad GUID"},
		{"duplicate", good + "\ncaguid=0x100000\nCa\t2 \"H-dup\"\t\t# \"dup\"\n", "defined twice"},
		{"port line outside", "[1]\t\"S-1\"[1]\n", "port line outside a node"},
		{"bad port count", "switchguid=0x1(1)\nSwitch\t0 \"S-1\"\n", "bad port count"},
		{"unquoted", "switchguid=0x1(1)\nSwitch\t8 S-1\n", "quoted ID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTopology(strings.NewReader(tc.text), "topo")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a *ParseError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

func TestDesignLIDs(t *testing.T) {
	topo := readTopo(t, ringTopo(3))
	// the SM on H1 (port GUID 0x100003) first, then by the port GUIDs'
	// bytes in network order: 0x200000 (S0, 00 00 20 00 ... reversed),
	// 0x100001 (H0), 0x200001 (S1), 0x200002 (S2), 0x100005 (H2)
	f, res, err := Design(topo, DesignOptions{SMNode: 0x100002, SMPort: 1, LMC: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, n := range f.Nodes() {
		got[fmt.Sprintf("%x", n.GUID)] = n.nodeLID()
	}
	want := map[string]int{"100002": 1, "200000": 3, "100000": 5, "200001": 7, "200002": 9, "100004": 11}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected LIDs (-want +got):\n%s", diff)
	}
	if res.Ports != 6 || res.MaxLID != 12 || res.SMPort != "H-0000000000100002/1" {
		t.Errorf("result %+v", res)
	}
}

func TestDesignEngines(t *testing.T) {
	tests := []struct {
		name       string
		topo       *topoWriter
		o          DesignOptions
		co         Options
		wantEngine Engine
		wantLoop   bool
		wantMax    int // the LFT route hop histogram's longest
		wantRoots  int
		wantStop   Stage
		// switch entries with no route: with Up/Down, a root's for another
		// root, as opensm leaves them
		wantUnrouted int
	}{
		{"ring minhop", ringTopo(5), DesignOptions{}, Options{}, MinHop, true, 4, 0, StageDone, 0},
		{"ring updn", ringTopo(5), DesignOptions{Engine: UpDown, Roots: []uint64{0x200000}}, Options{}, UpDown, false, 5, 1, StageDone, 0},
		{"torus-ish ring 8 updn", ringTopo(8), DesignOptions{Engine: UpDown, Roots: []uint64{0x200003}}, Options{}, UpDown, false, 0, 1, StageDone, 0},
		{"fat tree minhop", fatTreeTopo(4, 6, 3), DesignOptions{}, Options{}, MinHop, false, 4, 0, StageDone, 0},
		{"fat tree updn found roots", fatTreeTopo(4, 6, 3), DesignOptions{Engine: UpDown}, Options{}, UpDown, false, 4, 4, StageDone, 4 * 3},
		// no switch is a root by the histogram: routed min-hop
		{"ring updn no roots", ringTopo(5), DesignOptions{Engine: UpDown}, Options{}, MinHop, true, 4, 0, StageDone, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, rep := designCheck(t, tc.topo, tc.o, tc.co)
			if res.Engine != tc.wantEngine || len(res.Roots) != tc.wantRoots || res.Unrouted != tc.wantUnrouted {
				t.Errorf("engine %v roots %v unrouted %d, want %v, %d roots, %d", res.Engine, res.Roots, res.Unrouted, tc.wantEngine, tc.wantRoots, tc.wantUnrouted)
			}
			if rep.StoppedAt != tc.wantStop {
				t.Fatalf("stopped at %s, want %s", rep.StoppedAt, tc.wantStop)
			}
			if got := len(rep.CreditLoops.Loop) > 0; got != tc.wantLoop {
				t.Errorf("credit loop %v, want %v", got, tc.wantLoop)
			}
			if n := len(rep.Routes.Hops); tc.wantMax > 0 && (n == 0 || rep.Routes.Hops[n-1].Value != tc.wantMax) {
				t.Errorf("route hops %+v, want the longest %d", rep.Routes.Hops, tc.wantMax)
			}
			if strings.HasPrefix(tc.name, "fat tree") && res.Engine == UpDown {
				// no route turns from down to up (on a ring, ibdmchk calls a
				// move between switches of one rank down, which Up/Down
				// orders by GUID)
				_, ud := designCheck(t, tc.topo, tc.o, Options{UpDown: true, Roots: res.RootGUIDs})
				if ud.UpDown == nil || len(ud.UpDown.BadPaths) > 0 {
					t.Errorf("Up/Down check: %+v", ud.UpDown)
				}
			}
		})
	}
}

// TestDesignUnreachable cuts a ring into two halves with the SM in one:
// the other half gets no LID and is named.
func TestDesignUnreachable(t *testing.T) {
	w := newTopoWriter(4, 4)
	w.link(0, 1, 1, 2)
	w.link(2, 1, 3, 2)
	for i := 0; i < 4; i++ {
		w.link(i, 3, 1000+i, 1)
	}
	res, rep := designCheck(t, w, DesignOptions{}, Options{})
	want := []string{"S-0000000000200002", "S-0000000000200003", "H-0000000000100004", "H-0000000000100006"}
	if diff := cmp.Diff(want, res.Unreached); diff != "" {
		t.Errorf("unexpected unreached nodes (-want +got):\n%s", diff)
	}
	if rep.StoppedAt != StageDone || rep.Failed() {
		t.Errorf("the reached half: stopped at %s, failed %v", rep.StoppedAt, rep.Failed())
	}
	// Up/Down from two roots that do not reach each other's leaves
	// downwards: the pairs between them have no legal route
	w2 := newTopoWriter(3, 2)
	w2.link(0, 1, 1, 1)
	w2.link(1, 2, 2, 1)
	w2.link(0, 3, 1000, 1)
	w2.link(2, 3, 1001, 1)
	res, rep = designCheck(t, w2, DesignOptions{Engine: UpDown, Roots: []uint64{0x200000, 0x200002}}, Options{})
	if res.Unrouted == 0 {
		t.Errorf("no unrouted entries: %+v", res)
	}
	if rep.StoppedAt != StageRoutes || !rep.Failed() {
		t.Errorf("stopped at %s, want %s", rep.StoppedAt, StageRoutes)
	}
}

func TestDesignErrors(t *testing.T) {
	topo := readTopo(t, ringTopo(3))
	tests := []struct {
		name string
		o    DesignOptions
		want string
	}{
		{"no SM node", DesignOptions{SMNode: 0x42, SMPort: 1}, "no SM node"},
		{"unlinked CA port", DesignOptions{SMNode: 0x100000, SMPort: 2}, "no linked port 2"},
		{"CA port 0", DesignOptions{SMNode: 0x100000, SMPort: 0}, "no linked port 0"},
		{"port past the switch", DesignOptions{SMNode: 0x200000, SMPort: 37}, "no linked port 37"},
		{"LMC", DesignOptions{SMNode: 0x200000, LMC: 8}, "LMC 8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Design(topo, tc.o)
			if !errors.Is(err, ErrModel) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrModel with %q", err, tc.want)
			}
		})
	}
	// a switch SM, port 0
	if _, _, err := Design(topo, DesignOptions{SMNode: 0x200001}); err != nil {
		t.Errorf("switch SM on port 0: %v", err)
	}
}

// FuzzReadTopology reads anything without panicking, and what it reads
// designs and checks without panicking.
func FuzzReadTopology(f *testing.F) {
	f.Add(ringTopo(3).String())
	f.Add(fatTreeTopo(2, 2, 2).String())
	f.Add("switchguid=0x1(1)\nSwitch\t2 \"S-1\"\n[1]\t\"S-1\"[2]\n")
	f.Fuzz(func(t *testing.T, text string) {
		topo, err := ReadTopology(bytes.NewReader([]byte(text)), "fuzz")
		if err != nil {
			return
		}
		n := topo.Nodes[0]
		for _, e := range []Engine{MinHop, UpDown} {
			fab, _, err := Design(topo, DesignOptions{SMNode: n.GUID, SMPort: 1, Engine: e})
			if err != nil {
				continue
			}
			if _, err := Check(fab, Options{}); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// BenchmarkDesign routes a two-level tree of 3,996 hosts (18 spines, 222
// leaves of 18 hosts) with each engine.
func BenchmarkDesign(b *testing.B) {
	text := fatTreeTopo(18, 222, 18).String()
	for _, e := range []Engine{MinHop, UpDown} {
		b.Run(e.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				topo, err := ReadTopology(strings.NewReader(text), "tree")
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := Design(topo, DesignOptions{SMNode: topo.FromNode, SMPort: 1, Engine: e}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
