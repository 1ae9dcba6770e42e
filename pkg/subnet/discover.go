package subnet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// Options tune Discover.
type Options struct {
	// From is the directed route to start at, beginning with 0 (the
	// local port); nil starts at the local port.
	From []uint8
	// MaxHops bounds the walk: no node further than MaxHops hops beyond
	// From is asked for. 0 means no bound.
	MaxHops int
	// MlnxExtPortInfo asks Mellanox devices' QDR links for
	// MlnxExtPortInfo, to tell FDR10 from QDR, as libibnetdisc does by
	// default.
	MlnxExtPortInfo bool
	// MKey is the M_Key sent in every SMP.
	MKey uint64
	// LIDRouted sends a node's SMPs by LID once its LID is known (from
	// the PortInfo of a switch's port 0, or of a CA's port, read by
	// directed route): intermediate switches then forward them in
	// hardware instead of handling each in their management processor.
	// Links are still probed by directed route. An SMP that fails by LID
	// is sent again by directed route.
	LIDRouted bool
	// Progress, when set, is called after each step of the walk with the
	// nodes found so far and the hop level reached.
	Progress func(nodes, hops int)
	// PortsRead, when set, is called after each step of the walk, from
	// the walk's goroutine, once for each node some of whose ports that
	// step read, with copies of what it read: so that a caller can start
	// work on the nodes found (their PMAs, say) while the walk goes on.
	// The node's links are not known yet then.
	PortsRead func(NodePorts)
}

// NodePorts is what one step of a walk read of a node's ports
// (Options.PortsRead).
type NodePorts struct {
	// Info is the node's NodeInfo.
	Info mad.NodeInfo
	// Ports are the ports whose PortInfo the step read, by number.
	Ports []PortRead
}

// PortRead is one port's PortInfo as a walk read it, with the GUID and
// LID it gives the port (a switch's ports have port 0's).
type PortRead struct {
	Num  int
	GUID rdma.GUID
	LID  rdma.LID
	Info mad.PortInfo
}

// Discover walks the fabric by directed routes from the local port (or
// Options.From) and returns what it found. It fails only when the first
// node cannot be read or ctx ends; any other query that fails is recorded
// in the fabric's Errors and the walk goes on without it.
func Discover(ctx context.Context, x *madrpc.Transactor, o Options) (*Fabric, error) {
	start := []uint8{0}
	if len(o.From) > 0 {
		if o.From[0] != 0 {
			return nil, fmt.Errorf("directed route %s does not start at the local port (0)", FormatPath(o.From))
		}
		start = append([]uint8(nil), o.From...)
	}
	if len(start) > mad.MaxHops {
		return nil, fmt.Errorf("directed route %s: more than %d hops", FormatPath(start), mad.MaxHops-1)
	}
	w := &walker{ctx: ctx, x: x, o: o, f: newFabric(), portPath: make(map[*Port][]uint8)}
	if err := w.walk(start); err != nil {
		return nil, err
	}
	w.f.MADs = int(w.mads.Load())
	w.f.LIDFallbacks = int(w.fallbacks.Load())
	w.f.replay(start, o.MlnxExtPortInfo)
	return w.f, nil
}

// walker is one discovery.
type walker struct {
	ctx  context.Context
	x    *madrpc.Transactor
	o    Options
	f    *Fabric
	mads atomic.Int64
	// fallbacks counts LID-routed SMPs sent again by directed route.
	fallbacks atomic.Int64

	// portPath is the route that first reached each CA port.
	portPath map[*Port][]uint8

	mu sync.Mutex // guards f.Errors
}

// probe is a NodeInfo to send: through the link that leaves by from (nil
// for the start), along path.
type probe struct {
	path []uint8
	from *Port
	// back, when not 0, marks a path that leads back from a CA to the
	// node before it (a walk that starts at a CA some hops away): the
	// answer's port is then back, the port the route left that node by,
	// not the one the SMP arrived on.
	back uint8
}

// walk discovers hop level by hop level: all NodeInfo of a level, then the
// new nodes' NodeDescription, SwitchInfo and PortInfo, then the links
// still unknown lead to the next level.
func (w *walker) walk(start []uint8) error {
	level := []probe{{path: start}}
	for hops := 0; len(level) > 0; hops++ {
		grown, err := w.level(level)
		if err != nil {
			return err
		}
		if w.o.Progress != nil {
			w.o.Progress(len(w.f.Nodes), hops)
		}
		level = nil
		for _, p := range grown {
			level = w.follow(level, p, start)
		}
	}
	return nil
}

// niAnswer is the result of one probe.
type niAnswer struct {
	raw [mad.SMPDataLen]byte
	ni  mad.NodeInfo
	err error
}

// level sends the probes of one hop level and reads the new nodes and
// ports they reach. It returns the ports whose PortInfo was read, in
// order: those the next level may leave by.
func (w *walker) level(probes []probe) ([]*Port, error) {
	answers := make([]niAnswer, len(probes))
	w.each(len(probes), func(i int) {
		a := &answers[i]
		if a.err = w.get(probes[i].path, mad.AttrNodeInfo, "NodeInfo", 0, &a.raw); a.err == nil {
			a.err = checkNodeInfo(&a.ni, a.raw[:])
		}
	})
	if err := w.ctx.Err(); err != nil {
		return nil, err
	}
	var fresh []*Node
	var ports []*Port // ports whose PortInfo is to be read
	for i, pr := range probes {
		a := &answers[i]
		if a.err != nil {
			if pr.from == nil {
				return nil, fmt.Errorf("discovery start %s: %w", FormatPath(pr.path), a.err)
			}
			w.fail("NodeInfo", pr.path, pr.from.Node, pr.from.Num, a.err)
			continue
		}
		n := w.f.byGUID[a.ni.NodeGUID]
		if n == nil {
			n = &Node{GUID: a.ni.NodeGUID, Type: a.ni.NodeType, NumPorts: int(a.ni.NumPorts),
				Info: a.ni, InfoRaw: a.raw, Path: pr.path, entry: a.ni.LocalPortNum}
			n.Ports = make([]*Port, n.NumPorts+1)
			w.f.byGUID[n.GUID] = n
			w.f.Nodes = append(w.f.Nodes, n)
			fresh = append(fresh, n)
			if n.Type == mad.NodeTypeSwitch {
				for num := 0; num <= n.NumPorts; num++ {
					ports = append(ports, n.port(num))
				}
			}
		} else if n.NumPorts != int(a.ni.NumPorts) || n.Type != a.ni.NodeType {
			w.fail("NodeInfo", pr.path, n, 0, fmt.Errorf("node %s answers with %d ports of type %d, before %d ports of type %d",
				n.GUID, a.ni.NumPorts, a.ni.NodeType, n.NumPorts, n.Type))
			continue
		}
		num := int(a.ni.LocalPortNum)
		if pr.back != 0 {
			num = int(pr.back)
			if num > n.NumPorts {
				w.fail("NodeInfo", pr.path, n, num, fmt.Errorf("no port %d", num))
				continue
			}
		}
		p := n.port(num)
		if _, seen := w.portPath[p]; n.Type != mad.NodeTypeSwitch && pr.back == 0 && !seen {
			// A CA port's PortInfo goes by the path that reached it.
			p.GUID = a.ni.PortGUID
			w.portPath[p] = pr.path
			ports = append(ports, p)
		}
		if pr.from == nil {
			w.f.From, w.f.FromPort = n, num
		} else {
			link(pr.from, p)
		}
	}
	if err := w.read(fresh, ports); err != nil {
		return nil, err
	}
	if w.o.PortsRead != nil {
		w.reportPorts(ports)
	}
	return ports, nil
}

// reportPorts gives Options.PortsRead the ports a step read, node by
// node in the order of their first port.
func (w *walker) reportPorts(ports []*Port) {
	var order []*Node
	read := map[*Node][]PortRead{}
	for _, p := range ports {
		if p.Info == nil {
			continue
		}
		if _, ok := read[p.Node]; !ok {
			order = append(order, p.Node)
		}
		read[p.Node] = append(read[p.Node], PortRead{Num: p.Num, GUID: p.GUID, LID: p.BaseLID, Info: *p.Info})
	}
	for _, n := range order {
		rs := read[n]
		slices.SortFunc(rs, func(a, b PortRead) int { return a.Num - b.Num })
		w.o.PortsRead(NodePorts{Info: n.Info, Ports: rs})
	}
}

// read asks the new nodes for their NodeDescription and SwitchInfo and the
// ports for their PortInfo, all at once; then MlnxExtPortInfo where
// libibnetdisc would.
func (w *walker) read(fresh []*Node, ports []*Port) error {
	portInfo := func(p *Port) func() {
		return func() {
			path := w.pathTo(p)
			if err := w.getVia(path, w.lidOf(p.Node, p), mad.AttrPortInfo, "PortInfo", uint32(p.Num), &p.InfoRaw); err != nil {
				w.fail("PortInfo", path, p.Node, p.Num, err)
				return
			}
			pi := new(mad.PortInfo)
			pi.UnmarshalBinary(p.InfoRaw[:])
			p.Info = pi
		}
	}
	rest := ports
	if w.o.LIDRouted {
		// The PortInfo that gives each new node its LID first, by
		// directed route (lidOf knows no LID yet).
		var first []func()
		rest = nil
		for _, p := range ports {
			if p.Num == 0 || p.Node.Type != mad.NodeTypeSwitch {
				first = append(first, portInfo(p))
			} else {
				rest = append(rest, p)
			}
		}
		w.run(first)
		if err := w.ctx.Err(); err != nil {
			return err
		}
	}
	var jobs []func()
	for _, n := range fresh {
		jobs = append(jobs, func() {
			if err := w.getVia(n.Path, w.lidOf(n, nil), mad.AttrNodeDescription, "NodeDesc", 0, &n.DescRaw); err != nil {
				w.fail("NodeDesc", n.Path, n, 0, err)
				return
			}
			n.Desc = nodeDesc(n.DescRaw[:])
		})
		if n.Type == mad.NodeTypeSwitch {
			jobs = append(jobs, func() {
				if err := w.getVia(n.Path, w.lidOf(n, nil), mad.AttrSwitchInfo, "SwitchInfo", 0, &n.SwitchInfoRaw); err != nil {
					w.fail("SwitchInfo", n.Path, n, 0, err)
					return
				}
				si := new(mad.SwitchInfo)
				si.UnmarshalBinary(n.SwitchInfoRaw[:])
				n.SwitchInfo, n.EnhancedPort0 = si, si.EnhancedPort0 != 0
			})
		}
	}
	for _, p := range rest {
		jobs = append(jobs, portInfo(p))
	}
	w.run(jobs)
	if err := w.ctx.Err(); err != nil {
		return err
	}
	for _, p := range ports {
		if p.Info == nil {
			continue
		}
		p.BaseLID, p.LMC = rdma.LID(p.Info.LID), p.Info.LMC
		if p.Num == 0 && p.Node.Type == mad.NodeTypeSwitch {
			p.Node.SMALID, p.Node.SMALMC = p.BaseLID, p.LMC
		}
	}
	for _, p := range ports {
		if p.Node.Type == mad.NodeTypeSwitch && p.Num != 0 {
			p.BaseLID, p.LMC = p.Node.SMALID, p.Node.SMALMC
		}
	}
	if !w.o.MlnxExtPortInfo {
		return nil
	}
	jobs = jobs[:0]
	for _, p := range ports {
		if !wantsExtInfo(p) {
			continue
		}
		jobs = append(jobs, func() {
			path := w.pathTo(p)
			raw := new([mad.SMPDataLen]byte)
			if err := w.get(path, mad.AttrMlnxExtPortInfo, "MlnxExtPortInfo", uint32(p.Num), raw); err != nil {
				w.fail("MlnxExtPortInfo", path, p.Node, p.Num, err)
				return
			}
			e := new(mad.MlnxExtPortInfo)
			e.UnmarshalBinary(raw[:])
			p.ExtInfo, p.ExtInfoRaw = e, raw
		})
	}
	w.run(jobs)
	return w.ctx.Err()
}

// follow appends to level the probe through port p, when p leads to a link
// not known yet: a switch port that is up, or the start port of the start
// node.
func (w *walker) follow(level []probe, p *Port, start []uint8) []probe {
	n := p.Node
	if p.Num == 0 || p.Info == nil || p.Info.PhysLinkState != mad.PhysPortStateLinkUp || p.Remote != nil {
		return level
	}
	if n.Type != mad.NodeTypeSwitch && !(n == w.f.From && p.Num == w.f.FromPort) {
		return level
	}
	path := w.pathTo(p)
	if n.Type != mad.NodeTypeSwitch && len(path) > 2 {
		// A walk that starts at a CA some hops away: the CA's link
		// leads back to the node before it on the route.
		return append(level, probe{path: path[:len(path)-1], from: p, back: path[len(path)-1]})
	}
	if w.o.MaxHops > 0 && len(path)-len(start) >= w.o.MaxHops {
		return level
	}
	if len(path) >= mad.MaxHops {
		w.fail("NodeInfo", path, n, p.Num, fmt.Errorf("directed route longer than %d hops", mad.MaxHops-1))
		return level
	}
	next := make([]uint8, len(path)+1)
	copy(next, path)
	next[len(path)] = uint8(p.Num)
	return append(level, probe{path: next, from: p})
}

// pathTo returns the directed route the SMPs about port p go by: the
// route that reached the port for a CA, the node's route for a switch.
func (w *walker) pathTo(p *Port) []uint8 {
	if p.Node.Type != mad.NodeTypeSwitch {
		if path, ok := w.portPath[p]; ok {
			return path
		}
	}
	return p.Node.Path
}

// lidOf returns the LID to send a node's SMPs to in LID-routed mode (about
// port p, or the node when p is nil), 0 for directed route: a switch's
// port 0 LID, or the LID of a CA port already read (p's own, else any).
func (w *walker) lidOf(n *Node, p *Port) rdma.LID {
	if !w.o.LIDRouted {
		return 0
	}
	usable := func(q *Port) rdma.LID {
		// A LID is routed only once the SM has brought the port to
		// Armed or Active.
		if q == nil || q.Info == nil || q.Info.LID == 0 || q.Info.LID > 0xbfff || q.Info.LinkState < 3 {
			return 0
		}
		return rdma.LID(q.Info.LID)
	}
	if n.Type == mad.NodeTypeSwitch {
		if p != nil && p.Num == 0 {
			return 0 // the LID comes from it
		}
		return usable(n.Ports[0])
	}
	if p != nil {
		return 0 // a CA port's PortInfo gives its LID
	}
	for _, q := range n.Ports {
		if l := usable(q); l != 0 {
			return l
		}
	}
	return 0
}

// getVia is get by LID when lid is not 0, falling back to the directed
// route when that fails.
func (w *walker) getVia(path []uint8, lid rdma.LID, id mad.AttrID, name string, mod uint32, out *[mad.SMPDataLen]byte) error {
	if lid != 0 {
		w.mads.Add(1)
		r, err := w.x.Do(w.ctx, &madrpc.Request{Path: mad.LIDPath(lid), Class: mad.ClassSMI, Method: mad.MethodGet,
			AttrID: id, AttrMod: mod, Name: name, MKey: w.o.MKey})
		if err == nil {
			copy(out[:], r.Data())
			return nil
		}
		if w.ctx.Err() != nil {
			return err
		}
		w.fallbacks.Add(1)
	}
	return w.get(path, id, name, mod, out)
}

// get sends a SubnGet of the attribute along path and copies the answer's
// attribute data into out.
func (w *walker) get(path []uint8, id mad.AttrID, name string, mod uint32, out *[mad.SMPDataLen]byte) error {
	w.mads.Add(1)
	r, err := w.x.Do(w.ctx, &madrpc.Request{Path: mad.Path{DR: path}, Class: mad.ClassSMI, Method: mad.MethodGet,
		AttrID: id, AttrMod: mod, Name: name, MKey: w.o.MKey})
	if err != nil {
		return err
	}
	copy(out[:], r.Data())
	return nil
}

// fail records a query that failed.
func (w *walker) fail(query string, path []uint8, n *Node, port int, err error) {
	if w.ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	w.f.Errors = append(w.f.Errors, &QueryError{Query: query, Path: path, Node: n, Port: port, Err: err})
	w.mu.Unlock()
}

// run runs the jobs, as many at once as the transactor's window allows.
func (w *walker) run(jobs []func()) {
	w.each(len(jobs), func(i int) { jobs[i]() })
}

// each calls fn(0..n-1) from as many goroutines as the transactor's window.
func (w *walker) each(n int, fn func(i int)) {
	workers := min(n, w.x.Window())
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// checkNodeInfo decodes a NodeInfo and checks what discovery relies on.
func checkNodeInfo(ni *mad.NodeInfo, raw []byte) error {
	if err := ni.UnmarshalBinary(raw); err != nil {
		return err
	}
	switch ni.NodeType {
	case mad.NodeTypeCA, mad.NodeTypeSwitch, mad.NodeTypeRouter:
	default:
		return errors.New("NodeInfo: unknown node type " + ni.NodeType.String())
	}
	if ni.NumPorts == 0 {
		return errors.New("NodeInfo: no ports")
	}
	if int(ni.LocalPortNum) > int(ni.NumPorts) {
		return fmt.Errorf("NodeInfo: local port %d of %d", ni.LocalPortNum, ni.NumPorts)
	}
	if ni.NodeType != mad.NodeTypeSwitch && ni.LocalPortNum == 0 {
		return errors.New("NodeInfo: local port 0 of a channel adapter")
	}
	return nil
}

// wantsExtInfo reports whether libibnetdisc asks the port for
// MlnxExtPortInfo: a Mellanox device that may run FDR10, link up at QDR
// without an extended speed.
func wantsExtInfo(p *Port) bool {
	return p.Info != nil && supportsExtInfo(p.Node) && p.Info.PhysLinkState == mad.PhysPortStateLinkUp &&
		p.Info.LinkSpeedActive == mad.LinkSpeedQDR && p.LinkSpeedExtActive() == 0
}

// supportsExtInfo reports whether the node's device ID is one libibnetdisc
// knows to answer MlnxExtPortInfo (ibnetdisc.c,
// is_mlnx_ext_port_info_supported).
func supportsExtInfo(n *Node) bool {
	dev, vendor := n.Info.DeviceID, n.Info.VendorID
	switch {
	case dev >= 0xc738 && dev <= 0xc73b, dev == 0xc839, dev == 0xcb20, dev == 0xcf08,
		dev == 0xcf09, dev == 0xd2f0:
		return true
	case dev >= 0x1003 && dev <= 0x101b, dev == 0xa2d2:
		return true
	}
	if vendor != 0x119f { // Bull
		return false
	}
	switch {
	case dev == 0x1b02, dev == 0x1b50, dev == 0x1ba0, dev >= 0x1bd0 && dev <= 0x1bd5, dev == 0x1bf0,
		dev == 0x1b33, dev == 0x1b73, dev == 0x1b40, dev == 0x1b41, dev == 0x1b60, dev == 0x1b61,
		dev == 0x1b83, dev == 0x1b93, dev == 0x1b94, dev == 0x1bb4, dev == 0x1bb5,
		dev >= 0x1bc4 && dev <= 0x1bc6:
		return true
	}
	return false
}
