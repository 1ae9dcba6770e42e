package routecheck

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// loadDir reads the three dumps of a testdata directory.
func loadDir(t *testing.T, dir string) *Fabric {
	t.Helper()
	f := New(0)
	open := func(name string) *os.File {
		fh, err := os.Open(filepath.Join("testdata", dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fh.Close() })
		return fh
	}
	if _, err := ReadSubnet(f, open("opensm-subnet.lst"), "opensm-subnet.lst"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadFDBs(f, open("opensm.fdbs"), "opensm.fdbs"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadMCFDBs(f, open("opensm.mcfdbs"), "opensm.mcfdbs"); err != nil {
		t.Fatal(err)
	}
	return f
}

// reference returns ibdmchk's report in a testdata file from the line
// after its multicast file's summary, where WriteText starts.
func reference(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i := strings.Index(s, " Multicast Fdb entries for:")
	return s[i+strings.IndexByte(s[i:], '\n')+1:]
}

// TestCheckMatchesIbdmchk compares the report with ibdmchk's on opensm's
// dumps of a 5-switch ring routed min-hop with a multicast group (a credit
// loop) and of a 5x5 torus routed Up/Down, checked with -u from its root.
func TestCheckMatchesIbdmchk(t *testing.T) {
	tests := []struct {
		dir, ref string
		opts     Options
		failed   bool
	}{
		{"ring5", "ring5/ibdmchk.txt", Options{}, true},
		{"torus5updn", "torus5updn/ibdmchk-u.txt", Options{UpDown: true, Roots: []uint64{0x200000}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			rep, err := Check(loadDir(t, tc.dir), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := rep.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(reference(t, tc.ref), b.String()); diff != "" {
				t.Errorf("unexpected report (-ibdmchk +ibtool):\n%s", diff)
			}
			if rep.Failed() != tc.failed {
				t.Errorf("Failed() = %v, want %v", rep.Failed(), tc.failed)
			}
		})
	}
}

// ring builds a ring of n switches with a CA each through the constructor
// API, routed min-hop (clockwise on ties), as a live sweep would fill it.
func ring(t testing.TB, n int) *Fabric {
	f := New(0)
	sw := func(i int) uint64 { return 0x200000 + uint64(i) }
	ca := func(i int) uint64 { return 0x100000 + uint64(i) }
	for i := 0; i < n; i++ {
		f.AddNode(sw(i), sw(i), Switch, 4)
		f.AddNode(ca(i), ca(i), CA, 1)
	}
	// switch i has LID i+1, its CA LID n+i+1
	for i := 0; i < n; i++ {
		must(t, f.Connect(Endpoint{Node: sw(i), Port: 1, LID: i + 1}, Endpoint{Node: sw((i + 1) % n), Port: 2, LID: (i+1)%n + 1}))
		must(t, f.Connect(Endpoint{Node: sw(i), Port: 3, LID: i + 1}, Endpoint{Node: ca(i), Port: 1, LID: n + i + 1}))
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var out uint8
			switch d := (j - i + n) % n; {
			case d == 0:
				out = 0
			case d <= n/2:
				out = 1
			default:
				out = 2
			}
			must(t, f.SetLFT(f.Node(sw(i)), j+1, out))
			if d := (j - i + n) % n; d == 0 {
				out = 3
			}
			must(t, f.SetLFT(f.Node(sw(i)), n+j+1, out))
		}
	}
	return f
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheckConstructedRing(t *testing.T) {
	// a ring long enough that the search goes hundreds of channels deep
	rep, err := Check(ring(t, 301), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.StoppedAt != StageDone || rep.CreditLoops == nil || len(rep.CreditLoops.Loop) == 0 {
		t.Fatalf("no credit loop found: %+v", rep.CreditLoops)
	}
	loop := rep.CreditLoops.Loop
	// the loop goes round the ring's port 1 channels back to the first
	if loop[0].Port != loop[len(loop)-2].Port || len(loop) != 301+2 {
		t.Errorf("loop of %d channels from %v to %v", len(loop), loop[0], loop[len(loop)-2])
	}
	if got, want := rep.Routes.Paths, int64(301*300); got != want {
		t.Errorf("paths %d, want %d", got, want)
	}
}

func TestCheckFaults(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(f *Fabric)
		kind  FailureKind
		at    string
		dlid  int
	}{
		{"black hole", func(f *Fabric) { f.SetLFT(f.Node(0x200001), 9, Unassigned) }, UnassignedLFT, "S0000000000200001/U1", 9},
		{"past the table", func(f *Fabric) { f.Node(0x200001).lft = f.Node(0x200001).lft[:7] }, UnassignedLFT, "S0000000000200001/U1", 7},
		{"loop", func(f *Fabric) { f.SetLFT(f.Node(0x200001), 9, 2); f.SetLFT(f.Node(0x200000), 9, 1) }, Loop, "", 9},
		{"dead end", func(f *Fabric) { f.SetLFT(f.Node(0x200001), 9, 4) }, DeadEnd, "S0000000000200001/U1", 9},
		{"into a CA", func(f *Fabric) { f.SetLFT(f.Node(0x200001), 9, 3) }, UnassignedLFT, "S0000000000100001/U1", 9},
		{"port 0", func(f *Fabric) { f.SetLFT(f.Node(0x200001), 9, 0) }, DeadEndPort0, "S0000000000200001/U1", 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := ring(t, 5)
			tc.spoil(f)
			rep, err := Check(f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.StoppedAt != StageRoutes || len(rep.Routes.Failures) == 0 {
				t.Fatalf("stopped at %s with %d failures", rep.StoppedAt, len(rep.Routes.Failures))
			}
			got := rep.Routes.Failures[0]
			if got.Kind != tc.kind || got.At != tc.at || got.DLID != tc.dlid {
				t.Errorf("failure %+v, want %v at %q to LID %d", got, tc.kind, tc.at, tc.dlid)
			}
		})
	}
}

// relaxSteps runs ibdm's in-place relaxation of the per-port hop tables
// literally, to check the pass count newTopo derives.
func relaxSteps(f *Fabric) int {
	type key struct {
		p   *Port
		lid int
	}
	hops := map[key]int{}
	min := func(n *Node, lid int) int {
		m := 255
		for _, p := range n.ports {
			if p != nil {
				if h, ok := hops[key{p, lid}]; ok && h < m {
					m = h
				}
			}
		}
		return m
	}
	set := func(n *Node, p *Port, lid, h int) {
		if p != nil {
			hops[key{p, lid}] = h
			return
		}
		for _, q := range n.ports {
			if q != nil {
				hops[key{q, lid}] = h
			}
		}
	}
	for _, n := range f.nodesByName() {
		if n.Type == Switch {
			set(n, nil, n.nodeLID(), 0)
			continue
		}
		for _, p := range n.ports {
			if p != nil && p.Remote != nil && p.Remote.Node.Type == Switch {
				set(p.Remote.Node, p.Remote, p.BaseLID, 1)
			}
		}
	}
	loops := 0
	for {
		loops++
		any := false
		for _, n := range f.nodesByName() {
			if n.Type != Switch {
				continue
			}
			for lid := 1; lid <= f.maxLID; lid++ {
				for _, p := range n.ports[1:] {
					if p == nil || p.Remote == nil || p.Remote.Node.Type != Switch {
						continue
					}
					cur, ok := hops[key{p, lid}]
					if !ok {
						cur = 255
					}
					if r := min(p.Remote.Node, lid); r+1 < cur {
						hops[key{p, lid}] = r + 1
						any = true
					}
				}
			}
		}
		if !any {
			return loops
		}
	}
}

// TestMinHopSteps checks the pass count against the literal relaxation on
// random connected fabrics, the last ones big enough that newTopo shares
// the roots out among workers.
func TestMinHopSteps(t *testing.T) {
	rng := rand.New(rand.NewSource(30))
	for trial := 0; trial < 40; trial++ {
		n := 2 + rng.Intn(8)
		if trial >= 38 {
			n = 130 + rng.Intn(20) // enough switches for newTopo's workers
		}
		f := New(0)
		free := make([]int, n)
		for i := 0; i < n; i++ {
			g := 0x200000 + uint64(rng.Intn(1000))*1024 + uint64(i)
			f.AddNode(g, g, Switch, 8)
			free[i] = 1
		}
		sws := f.Nodes()
		link := func(a, b int) {
			if free[a] > 7 || free[b] > 7 {
				return
			}
			must(t, f.Connect(Endpoint{Node: sws[a].GUID, Port: free[a], LID: a + 1}, Endpoint{Node: sws[b].GUID, Port: free[b], LID: b + 1}))
			free[a]++
			free[b]++
		}
		for i := 1; i < n; i++ {
			link(i, rng.Intn(i))
		}
		for k := 0; k < n; k++ {
			link(rng.Intn(n), rng.Intn(n))
		}
		for i := 0; i < n; i++ {
			if free[i] <= 8 {
				g := uint64(0x100000 + i)
				f.AddNode(g, g, CA, 1)
				must(t, f.Connect(Endpoint{Node: g, Port: 1, LID: n + i + 1}, Endpoint{Node: sws[i].GUID, Port: free[i], LID: i + 1}))
				free[i]++
			}
		}
		if got, want := newTopo(f).steps, relaxSteps(f); got != want {
			t.Errorf("trial %d (%d switches): %d steps, the relaxation takes %d", trial, n, got, want)
		}
	}
}

func BenchmarkCheckRing(b *testing.B) {
	f := ring(b, 64)
	for i := 0; i < b.N; i++ {
		if _, err := Check(f, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
