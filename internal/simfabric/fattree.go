package simfabric

import (
	"bytes"
	"errors"
	"fmt"
)

// FatTreeSpec describes a folded-Clos ("fat tree") fabric for FatTree.
//
// Every switch has Radix ports: half face down (hosts or lower switches) and
// half face up. A leaf takes Radix/2 hosts. In two levels every leaf links to
// every spine; in three levels leaves and aggregation switches form pods of
// Radix/2 each, every leaf links to every aggregation switch of its pod, and
// aggregation switch i of every pod links to core group i. When the hosts do
// not fill the tree, the top level shrinks and the links between a pair of
// switches are bundled (parallel links) so that no up-facing bandwidth is
// lost and no switch uses more than Radix ports.
type FatTreeSpec struct {
	// Levels is 2 (leaf and spine) or 3 (leaf, aggregation and core).
	Levels int
	// Hosts is the number of HCAs, at least 1.
	Hosts int
	// Radix is the number of ports of every switch: even, 4 to 254.
	Radix int
	// HostPorts is the number of ports of every HCA (0 means 1). Only port 1
	// is cabled; the others stay Down.
	HostPorts int
}

// Limits of the generator: ibsim takes 1 to 255 ports per node.
const (
	minRadix = 4
	maxRadix = 254
)

// ErrBadFatTreeSpec is wrapped by the errors FatTree returns for a spec it
// cannot build.
var ErrBadFatTreeSpec = errors.New("bad fat tree spec")

// Capacity returns the most hosts a full tree of this shape holds:
// Radix²/2 in two levels, Radix³/4 in three.
func (s FatTreeSpec) Capacity() int {
	h := s.Radix / 2
	switch s.Levels {
	case 2:
		return 2 * h * h
	case 3:
		return 2 * h * h * h
	}
	return 0
}

func (s FatTreeSpec) validate() error {
	switch {
	case s.Levels != 2 && s.Levels != 3:
		return fmt.Errorf("%w: levels %d, want 2 or 3", ErrBadFatTreeSpec, s.Levels)
	case s.Radix < minRadix || s.Radix > maxRadix || s.Radix%2 != 0:
		return fmt.Errorf("%w: radix %d, want an even number from %d to %d", ErrBadFatTreeSpec, s.Radix, minRadix, maxRadix)
	case s.HostPorts < 0 || s.HostPorts > 255:
		return fmt.Errorf("%w: host ports %d, want 0 to 255", ErrBadFatTreeSpec, s.HostPorts)
	case s.Hosts < 1:
		return fmt.Errorf("%w: hosts %d, want at least 1", ErrBadFatTreeSpec, s.Hosts)
	case s.Hosts > s.Capacity():
		return fmt.Errorf("%w: %d hosts do not fit a %d-level fat tree of radix %d (at most %d)",
			ErrBadFatTreeSpec, s.Hosts, s.Levels, s.Radix, s.Capacity())
	}
	return nil
}

// FatTree returns the net file (ibsim's topology format) of the fat tree
// described by spec. The output is deterministic: the same spec always gives
// the same bytes, and ibsim, which numbers GUIDs in file order, always gives
// the same GUIDs.
//
// Names: hosts are H-0001, H-0002, ... (zero-padded to a common width);
// switches are S-leaf-NN, S-spine-NN (two levels) or S-pPP-leaf-NN,
// S-pPP-agg-NN and S-core-NN (three levels, PP the pod). The file lists the
// top level first, so the first node, where the SM attaches by default, is a
// spine or core switch.
func FatTree(spec FatTreeSpec) ([]byte, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	t := newTopology()
	if spec.Levels == 2 {
		buildTwoLevel(t, spec)
	} else {
		buildThreeLevel(t, spec)
	}
	return t.render(spec), nil
}

// bundleWidth returns how many switches (at least 1) a level needs so that
// each of n lower switches, with up uplinks each spread round robin over
// them, uses at most radix ports on any of them.
func bundleWidth(n, up, radix int) int {
	for w := 1; w < up; w++ {
		if n*ceilDiv(up, w) <= radix {
			return w
		}
	}
	return up
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// buildTwoLevel adds leaves and spines: leaf up port j goes to spine
// j mod spines.
func buildTwoLevel(t *topology, spec FatTreeSpec) {
	half := spec.Radix / 2
	leaves := ceilDiv(spec.Hosts, half)
	spines := bundleWidth(leaves, half, spec.Radix)

	spine := make([]*tnode, spines)
	for i := range spine {
		spine[i] = t.addSwitch(fmt.Sprintf("S-spine-%0*d", digits(spines), i+1), spec.Radix)
	}
	leaf := make([]*tnode, leaves)
	for i := range leaf {
		leaf[i] = t.addSwitch(fmt.Sprintf("S-leaf-%0*d", digits(leaves), i+1), spec.Radix)
		for j := range half {
			t.link(leaf[i], half+1+j, spine[j%spines], 0)
		}
	}
	addHosts(t, spec, leaf)
}

// buildThreeLevel adds pods of leaves and aggregation switches, and core
// groups: aggregation switch a of every pod links to core group a, its up
// port j to core j mod groupWidth of the group.
func buildThreeLevel(t *topology, spec FatTreeSpec) {
	half := spec.Radix / 2
	leaves := ceilDiv(spec.Hosts, half)
	pods := ceilDiv(leaves, half)
	groupWidth := bundleWidth(pods, half, spec.Radix)

	cores := half * groupWidth
	core := make([]*tnode, cores)
	for i := range core {
		core[i] = t.addSwitch(fmt.Sprintf("S-core-%0*d", digits(cores), i+1), spec.Radix)
	}
	pw, lw := digits(pods), digits(half)
	agg := make([][]*tnode, pods)
	for p := range pods {
		agg[p] = make([]*tnode, half)
		for a := range half {
			agg[p][a] = t.addSwitch(fmt.Sprintf("S-p%0*d-agg-%0*d", pw, p+1, lw, a+1), spec.Radix)
			for j := range half {
				t.link(agg[p][a], half+1+j, core[a*groupWidth+j%groupWidth], 0)
			}
		}
	}
	leaf := make([]*tnode, leaves)
	for i := range leaf {
		p := i / half
		leaf[i] = t.addSwitch(fmt.Sprintf("S-p%0*d-leaf-%0*d", pw, p+1, lw, i%half+1), spec.Radix)
		for a := range half {
			t.link(leaf[i], half+1+a, agg[p][a], i%half+1)
		}
	}
	addHosts(t, spec, leaf)
}

// addHosts fills the leaves in order, Radix/2 hosts each; the last leaf may
// be partly filled.
func addHosts(t *topology, spec FatTreeSpec, leaf []*tnode) {
	half := spec.Radix / 2
	ports := max(spec.HostPorts, 1)
	w := max(digits(spec.Hosts), 4)
	for i := range spec.Hosts {
		h := t.addHost(fmt.Sprintf("H-%0*d", w, i+1), ports)
		t.link(h, 1, leaf[i/half], i%half+1)
	}
}

// digits returns the number of decimal digits of n (at least 1), the width
// that keeps names of one kind sorting in numeric order.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// topology is the generator's graph: nodes in file order, each with its
// next free port.
type topology struct {
	nodes []*tnode
}

type tnode struct {
	isSwitch bool
	id       string
	nports   int
	peers    []tpeer // by port - 1; zero value is an uncabled port
	next     int     // next free port for link's highPort 0, from 1
}

type tpeer struct {
	node *tnode
	port int
}

func newTopology() *topology { return &topology{} }

func (t *topology) addSwitch(id string, ports int) *tnode {
	n := &tnode{isSwitch: true, id: id, nports: ports, peers: make([]tpeer, ports), next: 1}
	t.nodes = append(t.nodes, n)
	return n
}

func (t *topology) addHost(id string, ports int) *tnode {
	n := &tnode{id: id, nports: ports, peers: make([]tpeer, ports), next: 1}
	t.nodes = append(t.nodes, n)
	return n
}

// link cables port lowPort of low to port highPort of high, or to the next
// free port of high when highPort is 0. Leaves and aggregation switches get
// fixed port numbers (down ports from 1, up ports from Radix/2+1, whatever
// the fill); spines and cores take their ports in the order links are made.
// Reusing or exceeding a port is a bug in a builder: it panics, and the
// tests cover every builder.
func (t *topology) link(low *tnode, lowPort int, high *tnode, highPort int) {
	if highPort == 0 {
		highPort = high.next
		high.next++
	}
	for _, e := range []struct {
		n *tnode
		p int
	}{{low, lowPort}, {high, highPort}} {
		if e.p < 1 || e.p > e.n.nports || e.n.peers[e.p-1].node != nil {
			panic(fmt.Sprintf("simfabric: fat tree builder misused port %d of %s", e.p, e.n.id))
		}
	}
	low.peers[lowPort-1] = tpeer{high, highPort}
	high.peers[highPort-1] = tpeer{low, lowPort}
}

// render writes the net file: a comment naming the spec, then one record per
// node, both ends of every link listed as ibsim requires.
func (t *topology) render(spec FatTreeSpec) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %d-level fat tree: %d hosts, radix %d (generated by simfabric.FatTree)\n",
		spec.Levels, spec.Hosts, spec.Radix)
	for _, n := range t.nodes {
		kind := "Hca"
		if n.isSwitch {
			kind = "Switch"
		}
		fmt.Fprintf(&b, "\n%s\t%d \"%s\"\n", kind, n.nports, n.id)
		for i, p := range n.peers {
			if p.node != nil {
				fmt.Fprintf(&b, "[%d]\t\"%s\"[%d]\n", i+1, p.node.id, p.port)
			}
		}
	}
	return b.Bytes()
}
