package subnet

import (
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// libibnetdisc (rdma-core 44, ibnetdisc.c and query_smp.c) discovers with
// one FIFO queue of SMPs: each answer's callback queues the next SMPs at
// the tail, and answers are handled in the order the SMPs were queued (on
// a fabric that answers in order, as ibsim does). The nodes' order of
// creation, which is the order every infiniband-diags tool prints them in
// (reversed), and the route each node was first reached by follow from
// that queue alone. replay runs the queue again over the fabric Discover
// found, sending nothing: each SMP's answer is looked up in the fabric.
//
// The callbacks, as far as order goes:
//   - NodeInfo: a new node queues NodeDesc, then for a switch SwitchInfo
//     and PortInfo of port 0; a CA or router (new or not) queues PortInfo
//     of the port reached.
//   - PortInfo of a switch's port 0 queues PortInfo of ports 1..N.
//   - PortInfo of port p (after MlnxExtPortInfo where that is asked)
//     queues NodeInfo one hop further through p when p is up and is not
//     the port the switch was first reached by, or is the start port of
//     the start node.

// qkind is the attribute of a queued SMP.
type qkind uint8

const (
	qNodeInfo qkind = iota
	qNodeDesc
	qSwitchInfo
	qPortInfo
	qExtPortInfo
)

// qitem is one queued SMP.
type qitem struct {
	kind qkind
	path []uint8
	node *Node
	num  int
	// from is, for NodeInfo, the port the link leaves by (nil for the
	// start).
	from *Port
}

// ring is a FIFO of queued SMPs that grows as needed.
type ring struct {
	buf  []qitem
	head int // the oldest item's index in buf
	n    int // the items queued
}

// push queues it at the tail.
func (r *ring) push(it qitem) {
	if r.n == len(r.buf) {
		grown := make([]qitem, max(1024, 2*len(r.buf)))
		k := copy(grown, r.buf[r.head:])
		copy(grown[k:], r.buf[:r.head])
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = it
	r.n++
}

// pop takes the item at the head; the ring must not be empty.
func (r *ring) pop() qitem {
	it := r.buf[r.head]
	r.buf[r.head] = qitem{}
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return it
}

// queueWalk is what libibnetdisc's walk would do on a fabric: the nodes in
// the order it creates them, the route each is first reached by, its
// NodeInfo answers, the ports in the order their first PortInfo answer
// arrives (the order of its port GUID table), and its hop count.
type queueWalk struct {
	order   []*Node
	paths   map[*Node][]uint8
	visits  []Visit
	ports   []*Port
	maxHops int
}

// walkQueue runs libibnetdisc's queue of SMPs over f from the directed
// route start, sending nothing: each SMP's answer is looked up in f.
func (f *Fabric) walkQueue(start []uint8, extInfo bool) queueWalk {
	var w queueWalk
	st := newWalkState(f.Nodes)
	initial := len(start) - 1
	hops := 0

	ports := len(st.info)
	// The queue holds what is asked and not yet answered: a ring, since
	// a walk queues some hundred thousand SMPs on a big fabric, but no
	// more than a few levels of them at a time.
	var queue ring
	// The routes of the NodeInfo SMPs, carved from shared blocks rather
	// than allocated one by one (a big fabric has one per link end).
	var arena []uint8
	queue.push(qitem{kind: qNodeInfo, path: start})
	w.visits = make([]Visit, 0, len(f.Nodes)+ports)
	push := queue.push
	follow := func(n *Node, num int, path []uint8) {
		p := n.Ports[num]
		if num == 0 || !f.linkUp(p) {
			return
		}
		if !(n.Type == mad.NodeTypeSwitch && num != st.node(n).entry) && !(n == f.From && num == f.FromPort) {
			return
		}
		if n.Type != mad.NodeTypeSwitch && n == f.From && len(path) > 2 {
			hops++
			push(qitem{kind: qNodeInfo, path: path[:len(path)-1], from: p})
			return
		}
		if len(path) >= mad.MaxHops {
			return
		}
		k := len(path) + 1
		if cap(arena)-len(arena) < k {
			arena = make([]uint8, 0, max(k, 64<<10))
		}
		next := arena[len(arena) : len(arena)+k : len(arena)+k]
		arena = arena[:len(arena)+k]
		copy(next, path)
		next[len(path)] = uint8(num)
		if len(next)-1-initial > hops {
			hops++
		}
		push(qitem{kind: qNodeInfo, path: next, from: p})
	}

	for queue.n > 0 {
		it := queue.pop()
		switch it.kind {
		case qNodeInfo:
			var p *Port
			if it.from == nil {
				p = f.From.Port(f.FromPort)
			} else {
				p = it.from.Remote
			}
			if p == nil {
				continue // the NodeInfo failed, or was never sent
			}
			n := p.Node
			wn := st.node(n)
			seen := wn.seen
			if !seen {
				w.order = append(w.order, n)
				wn.seen, wn.path, wn.entry = true, it.path, p.Num
			}
			v := Visit{Path: it.path, New: !seen, Node: n, Port: p.Num}
			if st.info[wn.ports+p.Num] {
				v.LID, v.LMC = p.BaseLID, p.LMC
			}
			if wn.desc {
				v.Desc = n.Desc
			}
			w.visits = append(w.visits, v)
			if !seen {
				push(qitem{kind: qNodeDesc, node: n})
				if n.Type == mad.NodeTypeSwitch {
					push(qitem{kind: qSwitchInfo, node: n})
					push(qitem{kind: qPortInfo, node: n, num: 0, path: it.path})
				}
			}
			if n.Type != mad.NodeTypeSwitch {
				push(qitem{kind: qPortInfo, node: n, num: p.Num, path: it.path})
			}
		case qNodeDesc:
			st.node(it.node).desc = true
		case qPortInfo:
			n := it.node
			p := n.Port(it.num)
			if p == nil || !f.portKnown(p) {
				continue // the PortInfo failed
			}
			if done := &st.info[st.node(n).ports+it.num]; !*done {
				*done = true
				w.ports = append(w.ports, p)
			}
			if it.num == 0 && n.Type == mad.NodeTypeSwitch {
				for num := 1; num <= n.NumPorts; num++ {
					push(qitem{kind: qPortInfo, node: n, num: num, path: it.path})
				}
			}
			if extInfo && wantsExtInfo(p) {
				push(qitem{kind: qExtPortInfo, node: n, num: it.num, path: it.path})
				continue
			}
			follow(n, it.num, it.path)
		case qExtPortInfo:
			follow(it.node, it.num, it.path)
		}
	}
	w.maxHops = hops + initial
	w.paths = make(map[*Node][]uint8, len(w.order))
	for _, n := range w.order {
		w.paths[n] = st.node(n).path
	}
	return w
}

// portKnown reports whether the walk's PortInfo of p was answered: p has
// its PortInfo, or the fabric came without any (SAOptions.NoPortInfo).
func (f *Fabric) portKnown(p *Port) bool { return p.Info != nil || f.noPortInfo }

// linkUp reports whether p's physical link is up: as its PortInfo says,
// or without PortInfo, when a link to another port is known.
func (f *Fabric) linkUp(p *Port) bool {
	if p.Info == nil {
		return f.noPortInfo && p.Remote != nil
	}
	return p.Info.PhysLinkState == mad.PhysPortStateLinkUp
}

// walkState is walkQueue's bookkeeping per node and per port, in slices
// indexed by the node's place: one map lookup a node instead of one a
// question (a big fabric's walk asks millions).
type walkState struct {
	idx   map[*Node]int
	nodes []walkNode
	info  []bool // a port's PortInfo answered, at its node's ports + number
}

// walkNode is what the walk knows of one node.
type walkNode struct {
	seen  bool    // its first NodeInfo answered
	desc  bool    // its NodeDesc answered
	entry int     // the port that first NodeInfo came in by
	path  []uint8 // the route it came by
	ports int     // where its ports start in walkState.info
}

// newWalkState makes room for nodes; others are added as the walk meets
// them.
func newWalkState(nodes []*Node) *walkState {
	st := &walkState{idx: make(map[*Node]int, len(nodes)), nodes: make([]walkNode, 0, len(nodes))}
	total := 0
	for _, n := range nodes {
		total += n.NumPorts + 1
	}
	st.info = make([]bool, 0, total)
	for _, n := range nodes {
		st.node(n)
	}
	return st
}

// node returns n's state, valid until the next call adds a node.
func (st *walkState) node(n *Node) *walkNode {
	i, ok := st.idx[n]
	if !ok {
		i = len(st.nodes)
		st.idx[n] = i
		st.nodes = append(st.nodes, walkNode{ports: len(st.info)})
		st.info = append(st.info, make([]bool, n.NumPorts+1)...)
	}
	return &st.nodes[i]
}

// replay orders f.Nodes, sets each node's Path and fills f.Visits and
// f.MaxHops as libibnetdisc's walk from start would.
func (f *Fabric) replay(start []uint8, extInfo bool) {
	w := f.walkQueue(start, extInfo)
	order := w.order
	// Nodes the queue did not reach (their way in failed in
	// libibnetdisc's order but not in the walk) keep the walk's order.
	for _, n := range f.Nodes {
		if _, seen := w.paths[n]; !seen {
			order = append(order, n)
		}
	}
	for n, p := range w.paths {
		n.Path = p
	}
	f.Nodes = order
	f.Visits = w.visits
	f.MaxHops = w.maxHops
	f.index()
}

// index fills the GUID lookups from f.Nodes.
func (f *Fabric) index() {
	f.byGUID = make(map[rdma.GUID]*Node, len(f.Nodes))
	f.portByGUID = make(map[rdma.GUID]*Port, len(f.Nodes))
	f.portByLID = make(map[rdma.LID]*Port, len(f.Nodes))
	for _, n := range f.Nodes {
		f.byGUID[n.GUID] = n
		for _, p := range n.Ports {
			// Every LID of the port's range, the first port to claim
			// a LID keeping it (as libibnetdisc's LID map): a switch's
			// port 0 before its other ports, which share its LID.
			if p != nil && p.BaseLID > 0 && p.BaseLID <= 0xbfff {
				for l := int(p.BaseLID); l < int(p.BaseLID)+1<<p.LMC && l <= 0xbfff; l++ {
					if _, taken := f.portByLID[rdma.LID(l)]; !taken {
						f.portByLID[rdma.LID(l)] = p
					}
				}
			}
			if p == nil || p.GUID == 0 {
				continue
			}
			if n.Type == mad.NodeTypeSwitch && p.Num != 0 {
				continue
			}
			f.portByGUID[p.GUID] = p
		}
	}
}
