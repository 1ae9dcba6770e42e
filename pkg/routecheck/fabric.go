package routecheck

import (
	"errors"
	"fmt"
	"sort"
)

// NodeType says whether a node is a switch or a channel adapter.
type NodeType uint8

// Node types.
const (
	// CA is a channel adapter (a host's HCA, or a router or target).
	CA NodeType = iota
	// Switch is a switch.
	Switch
)

// String returns "CA" or "SW", as opensm-subnet.lst spells the type.
func (t NodeType) String() string {
	if t == Switch {
		return "SW"
	}
	return "CA"
}

// Unassigned is the value of an unused LFT entry, of a missing path SL
// and of a missing SL2VL entry.
const Unassigned = 0xff

// Fabric is the routing model: nodes and their ports, the links between
// them, every switch's linear and multicast forwarding tables, the path SLs
// of the sources and the switches' SL2VL tables.
type Fabric struct {
	// LMC is the LID mask control the subnet was routed with: each port
	// owns 2^LMC consecutive LIDs from its base LID.
	LMC uint8

	nodes   []*Node
	byGUID  map[uint64]*Node
	systems map[uint64]*system
	byName  []*Node // sorted by name, built on first use

	portByLID []*Port
	maxLID    int
	minLID    int
	nports    int

	mcGroups map[uint16]struct{}
	numSLs   int
	numVLs   int
	slvlSet  bool
}

type system struct {
	name  string
	nodes int
}

// Node is a switch or a CA of the fabric.
type Node struct {
	// Name is ibdmchk's name of the node: its system's name (S and the
	// system image GUID in 16 hex digits) and /U with its index in the
	// system, as in S0002c903000e0b72/U1.
	Name string
	// SystemName is the name of the node's system.
	SystemName string
	// GUID is the node GUID.
	GUID uint64
	// SystemGUID is the system image GUID.
	SystemGUID uint64
	// Type says whether the node is a switch.
	Type NodeType
	// NumPorts is the number of physical ports.
	NumPorts int

	idx   int
	ports []*Port // by number, 0..NumPorts
	lft   []uint8
	mft   map[uint16]*portMask
	psl   []uint8
	sl2vl map[[2]uint8]*[16]uint8
}

// Port is a connected port of a node.
type Port struct {
	// Node is the node the port belongs to.
	Node *Node
	// Num is the port number.
	Num int
	// GUID is the port GUID.
	GUID uint64
	// BaseLID is the port's base LID (a switch's LID for each of its ports).
	BaseLID int
	// Remote is the port at the other end of the link.
	Remote *Port
	// SysPort is the port's name in its system (U1/P3) when the link
	// leaves the system, "" inside a system.
	SysPort string

	idx int
}

// ID returns the port as ibdmchk's route messages name it: its node's
// name, / and its number.
func (p *Port) ID() string { return fmt.Sprintf("%s/%d", p.Node.Name, p.Num) }

// Name returns the port's name: its node's name, /P and its number.
func (p *Port) Name() string { return fmt.Sprintf("%s/P%d", p.Node.Name, p.Num) }

type portMask [4]uint64

func (m *portMask) set(p int)      { m[p>>6] |= 1 << (p & 63) }
func (m *portMask) has(p int) bool { return p >= 0 && p < 256 && m[p>>6]&(1<<(p&63)) != 0 }

// ports returns the ports of the mask in ascending order.
func (m *portMask) ports() []int {
	var out []int
	for p := 0; p < 256; p++ {
		if m.has(p) {
			out = append(out, p)
		}
	}
	return out
}

// New returns an empty fabric routed with the given LMC.
func New(lmc uint8) *Fabric {
	return &Fabric{
		LMC:      lmc,
		byGUID:   map[uint64]*Node{},
		systems:  map[uint64]*system{},
		mcGroups: map[uint16]struct{}{},
		numSLs:   1,
		numVLs:   1,
	}
}

// ErrModel is wrapped by the errors of the constructor methods: a node or
// port that does not exist, a port number out of range, a LID or VL out
// of range.
var ErrModel = errors.New("invalid routing model")

// AddNode adds a node, or returns the node of that GUID when it exists
// already. Nodes are named in the order they are added, as ibdmchk names
// them in the order it reads opensm-subnet.lst: the n-th node of a system
// is U<n>.
func (f *Fabric) AddNode(guid, systemGUID uint64, t NodeType, numPorts int) (*Node, error) {
	if n := f.byGUID[guid]; n != nil {
		return n, nil
	}
	if numPorts < 1 || numPorts > 254 {
		return nil, fmt.Errorf("%w: node 0x%016x: %d ports", ErrModel, guid, numPorts)
	}
	sys := f.systems[systemGUID]
	if sys == nil {
		sys = &system{name: fmt.Sprintf("S%016x", systemGUID)}
		f.systems[systemGUID] = sys
	}
	sys.nodes++
	n := &Node{
		Name:       fmt.Sprintf("%s/U%d", sys.name, sys.nodes),
		SystemName: sys.name,
		GUID:       guid,
		SystemGUID: systemGUID,
		Type:       t,
		NumPorts:   numPorts,
		idx:        len(f.nodes),
		ports:      make([]*Port, numPorts+1),
	}
	f.nodes = append(f.nodes, n)
	f.byGUID[guid] = n
	f.byName = nil
	return n, nil
}

// Node returns the node of a GUID, nil when there is none.
func (f *Fabric) Node(guid uint64) *Node { return f.byGUID[guid] }

// Nodes returns the nodes in the order they were added.
func (f *Fabric) Nodes() []*Node { return f.nodes }

// Systems returns the number of systems (distinct system image GUIDs).
func (f *Fabric) Systems() int { return len(f.systems) }

// nodesByName returns the nodes sorted by name, as ibdmchk walks them.
func (f *Fabric) nodesByName() []*Node {
	if f.byName == nil {
		f.byName = append([]*Node(nil), f.nodes...)
		sort.Slice(f.byName, func(i, j int) bool { return f.byName[i].Name < f.byName[j].Name })
	}
	return f.byName
}

// Port returns the node's port of that number, nil when it is not connected.
func (n *Node) Port(num int) *Port {
	if num < 0 || num >= len(n.ports) {
		return nil
	}
	return n.ports[num]
}

// Endpoint is one end of a link given to Connect.
type Endpoint struct {
	// Node is the node GUID (the node must have been added).
	Node uint64
	// Port is the port number.
	Port int
	// PortGUID is the port's GUID.
	PortGUID uint64
	// LID is the port's base LID (the switch's LID for a switch port).
	LID int
}

// Connect links two ports of nodes added before. Each port gets its base
// LID and owns the 2^LMC LIDs from it.
func (f *Fabric) Connect(a, b Endpoint) error {
	pa, err := f.makePort(a)
	if err != nil {
		return err
	}
	pb, err := f.makePort(b)
	if err != nil {
		return err
	}
	if pa.Node.SystemGUID != pb.Node.SystemGUID {
		pa.SysPort = sysPortName(pa)
		pb.SysPort = sysPortName(pb)
	}
	pa.Remote, pb.Remote = pb, pa
	return nil
}

func sysPortName(p *Port) string {
	return fmt.Sprintf("%s/P%d", p.Node.Name[len(p.Node.SystemName)+1:], p.Num)
}

func (f *Fabric) makePort(e Endpoint) (*Port, error) {
	n := f.byGUID[e.Node]
	if n == nil {
		return nil, fmt.Errorf("%w: no node 0x%016x", ErrModel, e.Node)
	}
	if e.Port < 1 || e.Port > n.NumPorts {
		return nil, fmt.Errorf("%w: node %s has no port %d", ErrModel, n.Name, e.Port)
	}
	if e.LID < 0 || e.LID > 0xbfff {
		return nil, fmt.Errorf("%w: port %d of %s: LID %d", ErrModel, e.Port, n.Name, e.LID)
	}
	p := n.ports[e.Port]
	if p == nil {
		p = &Port{Node: n, Num: e.Port, idx: f.nports}
		f.nports++
		n.ports[e.Port] = p
	}
	p.GUID = e.PortGUID
	p.BaseLID = e.LID
	for l := e.LID; l < e.LID+1<<f.LMC; l++ {
		f.setLIDPort(l, p)
	}
	return p, nil
}

func (f *Fabric) setLIDPort(lid int, p *Port) {
	for len(f.portByLID) <= lid {
		f.portByLID = append(f.portByLID, nil)
	}
	f.portByLID[lid] = p
	if lid > f.maxLID {
		f.maxLID = lid
	}
}

// PortByLID returns the port that owns a LID, nil when none does.
func (f *Fabric) PortByLID(lid int) *Port {
	if lid < 0 || lid >= len(f.portByLID) {
		return nil
	}
	return f.portByLID[lid]
}

// MaxLID returns the highest LID of the fabric.
func (f *Fabric) MaxLID() int { return f.maxLID }

// SetLFT sets a switch's linear forwarding table entry: packets to lid
// leave by port (0 is the switch itself, Unassigned drops them).
func (f *Fabric) SetLFT(n *Node, lid int, port uint8) error {
	if lid < 0 || lid > 0xbfff {
		return fmt.Errorf("%w: LFT of %s: LID %d", ErrModel, n.Name, lid)
	}
	for len(n.lft) <= lid {
		n.lft = append(n.lft, Unassigned)
	}
	n.lft[lid] = port
	return nil
}

// LFT returns a node's forwarding entry for a LID, Unassigned past its table.
func (n *Node) LFT(lid int) uint8 {
	if lid < 0 || lid >= len(n.lft) {
		return Unassigned
	}
	return n.lft[lid]
}

// SetMFT adds ports to a switch's multicast forwarding entry of a MLID.
func (f *Fabric) SetMFT(n *Node, mlid uint16, ports ...int) error {
	if mlid < 0xc000 {
		return fmt.Errorf("%w: MFT of %s: 0x%04X is not a multicast LID", ErrModel, n.Name, mlid)
	}
	if n.mft == nil {
		n.mft = map[uint16]*portMask{}
	}
	m := n.mft[mlid]
	if m == nil {
		m = &portMask{}
		n.mft[mlid] = m
	}
	for _, p := range ports {
		if p < 0 || p > 255 {
			return fmt.Errorf("%w: MFT of %s: port %d", ErrModel, n.Name, p)
		}
		m.set(p)
	}
	f.mcGroups[mlid] = struct{}{}
	return nil
}

// MFT returns the ports of a node's multicast forwarding entry, ascending.
func (n *Node) MFT(mlid uint16) []int {
	if m := n.mft[mlid]; m != nil {
		return m.ports()
	}
	return nil
}

// MulticastGroups returns the MLIDs that have an MFT entry, ascending.
func (f *Fabric) MulticastGroups() []uint16 {
	out := make([]uint16, 0, len(f.mcGroups))
	for m := range f.mcGroups {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// SetPathSL sets the SL a source node's traffic to a DLID uses. A node
// with no path SL set uses SL 0 everywhere; one with some set has no SL
// for the others (a credit-loop check error).
func (f *Fabric) SetPathSL(n *Node, dlid int, sl uint8) error {
	if sl > 15 || dlid < 0 || dlid > 0xbfff {
		return fmt.Errorf("%w: path SL of %s: DLID %d SL %d", ErrModel, n.Name, dlid, sl)
	}
	for len(n.psl) <= dlid {
		n.psl = append(n.psl, Unassigned)
	}
	n.psl[dlid] = sl
	if int(sl)+1 > f.numSLs {
		f.numSLs = int(sl) + 1
	}
	if !f.slvlSet && f.numVLs < f.numSLs {
		f.numVLs = f.numSLs
	}
	return nil
}

func (n *Node) pathSL(dlid int) uint8 {
	if n.psl == nil {
		return 0
	}
	if dlid >= len(n.psl) {
		return Unassigned
	}
	return n.psl[dlid]
}

// SetSL2VL sets a switch's SL to VL table for one pair of input and output
// ports. A switch with no table maps each SL to the VL of the same number.
func (f *Fabric) SetSL2VL(n *Node, in, out int, vls [16]uint8) error {
	if in < 0 || in > 255 || out < 0 || out > 255 {
		return fmt.Errorf("%w: SL2VL of %s: ports %d %d", ErrModel, n.Name, in, out)
	}
	if !f.slvlSet {
		f.slvlSet = true
		f.numVLs = 1
	}
	for _, v := range vls {
		if v > 15 {
			return fmt.Errorf("%w: SL2VL of %s: VL %d", ErrModel, n.Name, v)
		}
		if int(v)+1 > f.numVLs {
			f.numVLs = int(v) + 1
		}
	}
	if n.sl2vl == nil {
		n.sl2vl = map[[2]uint8]*[16]uint8{}
	}
	t := vls
	n.sl2vl[[2]uint8{uint8(in), uint8(out)}] = &t
	return nil
}

func (n *Node) slvl(in, out int, sl uint8) uint8 {
	if n.sl2vl == nil {
		return sl
	}
	t := n.sl2vl[[2]uint8{uint8(in), uint8(out)}]
	if t == nil || sl > 15 {
		return Unassigned
	}
	return t[sl]
}

// NumSLs returns the number of SLs the path SLs use (1 without them).
func (f *Fabric) NumSLs() int { return f.numSLs }

// NumVLs returns the number of VLs the SL2VL tables use (NumSLs without them).
func (f *Fabric) NumVLs() int { return f.numVLs }

// lidStep is the number of LIDs each port owns.
func (f *Fabric) lidStep() int { return 1 << f.LMC }

// ownsLID reports whether a LID is one of a port's.
func (f *Fabric) ownsLID(p *Port, lid int) bool {
	return p.BaseLID <= lid && p.BaseLID+f.lidStep()-1 >= lid
}

// nodeLID returns a node's base LID: that of its first connected port.
func (n *Node) nodeLID() int {
	for _, p := range n.ports {
		if p != nil && p.BaseLID != 0 {
			return p.BaseLID
		}
	}
	return 0
}
