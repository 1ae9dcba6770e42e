package routecheck

import (
	"fmt"
	"math/bits"
	"sort"
)

// Channel is a virtual lane of a port: the unit of buffer credits.
type Channel struct {
	// Port is the port's name.
	Port string `json:"port"`
	// VL is the virtual lane.
	VL int `json:"vl"`
}

// CreditLoopResult is the full credit-loop check of the channel
// dependency graph.
type CreditLoopResult struct {
	// SLs and VLs are the numbers of SLs and VLs the graph has.
	SLs int `json:"sls"`
	VLs int `json:"vls"`
	// Failures are the routes the graph could not be built from (an
	// unassigned SL or SL2VL entry, a dead end); with any, no loop search
	// is done.
	Failures []CreditFailure `json:"failures,omitempty"`
	// MulticastIncluded is true when the MFTs were added (-M).
	MulticastIncluded bool `json:"multicastIncluded"`
	// MulticastEdges is the number of edges the MFTs added.
	MulticastEdges int `json:"multicastEdges"`
	// MulticastErrors are the MFT entries that name a port with no link.
	MulticastErrors []string `json:"multicastErrors,omitempty"`
	// Loop is the credit loop found: Loop[0] is the channel the search
	// came back to, the rest the search's path back from it to the CA it
	// started from, as ibdmchk lists them.
	Loop []Channel `json:"loop,omitempty"`
}

// CreditFailure is a route the dependency graph could not follow.
type CreditFailure struct {
	// Msg is ibdmchk's message for it.
	Msg string `json:"msg"`
	// From and To are the ports of the route.
	From string `json:"from"`
	To   string `json:"to"`
}

// depGraph is the channel dependency graph: channel (port, VL) depends on
// channel (out port, VL') of the next node when some route goes from one
// to the other.
type depGraph struct {
	f     *Fabric
	nl    int        // channels per port
	ports []*Port    // by port idx
	dep   [][]uint64 // per channel: bit outPort*numVLs+VL of the remote node
}

func newDepGraph(f *Fabric) *depGraph {
	nl := f.numVLs
	if f.numSLs > nl {
		nl = f.numSLs
	}
	g := &depGraph{f: f, nl: nl, ports: make([]*Port, f.nports), dep: make([][]uint64, f.nports*nl)}
	for _, n := range f.nodes {
		for _, p := range n.ports {
			if p != nil {
				g.ports[p.idx] = p
			}
		}
	}
	return g
}

func (g *depGraph) addEdge(from *Port, vl int, out int, nvl int) {
	c := from.idx*g.nl + vl
	rem := from.Remote.Node
	bit := out*g.f.numVLs + nvl
	if g.dep[c] == nil {
		g.dep[c] = make([]uint64, ((rem.NumPorts+1)*g.f.numVLs+63)/64)
	}
	if w := bit >> 6; w < len(g.dep[c]) {
		g.dep[c][w] |= 1 << (bit & 63)
	}
}

// creditLoops builds the dependency graph from every CA-to-CA route (and
// switch routes with all, multicast trees with mcast) and searches it for
// a cycle from each CA's channels.
func (f *Fabric) creditLoops(all, mcast bool) *CreditLoopResult {
	res := &CreditLoopResult{SLs: f.numSLs, VLs: f.numVLs}
	g := newDepGraph(f)
	res.Failures = g.buildUnicast(all)
	if len(res.Failures) > 0 {
		return res
	}
	if mcast {
		res.MulticastIncluded = true
		res.MulticastEdges, res.MulticastErrors = g.buildMulticast()
		if len(res.MulticastErrors) > 0 {
			return res
		}
	}
	res.Loop = g.findLoop()
	return res
}

type chState struct {
	stamp uint32
	busy  bool
	ok    bool
	msg   string
}

func (g *depGraph) buildUnicast(all bool) []CreditFailure {
	f := g.f
	if !all && !f.anyPathSL() && !f.slvlSet {
		if ok := g.buildUnicastFast(); ok {
			return nil
		}
		g.dep = make([][]uint64, len(g.dep))
	}
	srcs := f.walkPorts(!all)
	step := f.lidStep()
	nsl := f.numSLs
	// per (port, VL, SL): the destination stamp when followed, and whether
	// the route from there arrives
	st := make([]chState, f.nports*g.nl*nsl)
	var gen uint32
	type fail struct {
		src, dst, l1, l2 int
		CreditFailure
	}
	var fails []fail
	for di, dst := range srcs {
		for l2 := 0; l2 < step; l2++ {
			dlid := dst.BaseLID + l2
			gen++
			for si, src := range srcs {
				if si == di {
					continue
				}
				ok, msg := g.followFrom(src, dlid, st, gen)
				if !ok {
					for l1 := 0; l1 < step; l1++ {
						fails = append(fails, fail{si, di, l1, l2, CreditFailure{Msg: msg, From: src.ID(), To: dst.ID()}})
					}
				}
			}
		}
	}
	sort.SliceStable(fails, func(i, j int) bool {
		a, b := fails[i], fails[j]
		if a.src != b.src {
			return a.src < b.src
		}
		if a.dst != b.dst {
			return a.dst < b.dst
		}
		if a.l1 != b.l1 {
			return a.l1 < b.l1
		}
		return a.l2 < b.l2
	})
	out := make([]CreditFailure, len(fails))
	for i, x := range fails {
		out[i] = x.CreditFailure
	}
	return out
}

// followFrom adds the edges of the route from a source port to a DLID,
// stopping where an earlier route to the same DLID went on from.
func (g *depGraph) followFrom(src *Port, dlid int, st []chState, gen uint32) (bool, string) {
	f := g.f
	p := src
	if p.Node.Type == Switch {
		out := p.Node.LFT(dlid)
		if out == Unassigned {
			return false, fmt.Sprintf("-E- Unassigned LFT for lid:%d Dead end at:%s", dlid, p.Node.Name)
		}
		p = p.Node.Port(int(out))
		if p == nil {
			return false, fmt.Sprintf("-E- Dead end at:%s", src.Node.Name)
		}
	}
	sl := p.Node.pathSL(dlid)
	if p.Remote == nil {
		return false, fmt.Sprintf("-E- Provided starting point is not connected !lid:%d", src.BaseLID)
	}
	if sl == Unassigned {
		return false, fmt.Sprintf("-E- SL to destination is unassigned !slid: %ddlid:%d", src.BaseLID, dlid)
	}
	vl := int(sl)
	nsl := f.numSLs
	var walk []int
	ok, msg := true, ""
	for hop := 0; !f.ownsLID(p.Remote, dlid); hop++ {
		key := (p.idx*g.nl+vl)*nsl + int(sl)
		if key < len(st) && st[key].stamp == gen {
			ok, msg = st[key].ok, st[key].msg
			if st[key].busy {
				ok, msg = false, "-E- Aborting after 256 hops - loop in LFT?"
			}
			break
		}
		if key < len(st) {
			st[key].stamp, st[key].busy = gen, true
			walk = append(walk, key)
		}
		n := p.Remote.Node
		in := p.Remote.Num
		out := n.LFT(dlid)
		if out == Unassigned {
			ok, msg = false, fmt.Sprintf("-E- Unassigned LFT for lid:%d Dead end at:%s", dlid, n.Name)
			break
		}
		nvl := n.slvl(in, int(out), sl)
		if nvl == Unassigned || int(nvl) >= g.nl {
			ok, msg = false, fmt.Sprintf("-E- Unassigned SL2VL entry, iport: %d, oport:%d, SL:%d", in, out, sl)
			break
		}
		next := n.Port(int(out))
		if next == nil || next.Remote == nil {
			ok, msg = false, fmt.Sprintf("-E- Dead end at:%s", n.Name)
			break
		}
		g.addEdge(p, vl, int(out), int(nvl))
		p, vl = next, int(nvl)
		if hop > 256 {
			ok, msg = false, "-E- Aborting after 256 hops - loop in LFT?"
			break
		}
	}
	for _, k := range walk {
		st[k].ok, st[k].msg, st[k].busy = ok, msg, false
	}
	return ok, msg
}

// buildMulticast adds, on every switch, an edge from each MFT port's
// driving channel to each other MFT port of the same entry, on SL 0.
func (g *depGraph) buildMulticast() (int, []string) {
	f := g.f
	edges := 0
	var errs []string
	for _, n := range f.nodesByName() {
		if n.Type != Switch || len(n.mft) == 0 {
			continue
		}
		dep := make(map[[2]int]bool)
		for _, m := range n.mft {
			ports := m.ports()
			for _, in := range ports {
				if in < 1 || in > n.NumPorts {
					continue
				}
				for _, out := range ports {
					if out >= 1 && out <= n.NumPorts && out != in {
						dep[[2]int{in, out}] = true
					}
				}
			}
		}
		for in := 1; in <= n.NumPorts; in++ {
			for out := 1; out <= n.NumPorts; out++ {
				if !dep[[2]int{in, out}] {
					continue
				}
				vl := int(n.slvl(in, out, 0))
				op := n.Port(out)
				if op == nil {
					errs = append(errs, fmt.Sprintf("-E- Switch:%s port:%d is included in some MFT but is not connnected", n.Name, out))
					continue
				}
				ip := n.Port(in)
				if ip == nil {
					errs = append(errs, fmt.Sprintf("-E- Switch:%s port:%d is included in some MFT but is not connnected", n.Name, in))
					continue
				}
				drv := ip.Remote
				if drv == nil {
					errs = append(errs, fmt.Sprintf("-E- Switch:%s port:%d is included in some MFT but has no remote port.", n.Name, in))
					continue
				}
				if drv.Node.Type != Switch || vl >= g.nl {
					continue
				}
				g.addEdge(drv, vl, out, vl)
				edges++
			}
		}
	}
	return edges, errs
}

// findLoop searches the graph depth first, iteratively, from every CA
// port's SL channels in LID order, and returns the first cycle.
func (g *depGraph) findLoop() []Channel {
	f := g.f
	const (
		fresh = iota
		open
		closed
	)
	state := make([]uint8, len(g.dep))
	type frame struct {
		ch  int
		bit int
	}
	var stack []frame
	chName := func(c int) Channel {
		return Channel{Port: g.ports[c/g.nl].Name(), VL: c % g.nl}
	}
	// next returns the channel of a dependency bit of channel c.
	target := func(c, bit int) int {
		p := g.ports[c/g.nl]
		rem := p.Remote.Node
		out, vl := bit/f.numVLs, bit%f.numVLs
		op := rem.Port(out)
		if op == nil {
			return -1
		}
		return op.idx*g.nl + vl
	}
	for _, p := range f.walkPorts(true) {
		for sl := 0; sl < f.numSLs; sl++ {
			root := p.idx*g.nl + sl
			if state[root] != fresh {
				continue
			}
			state[root] = open
			stack = append(stack[:0], frame{ch: root})
			for len(stack) > 0 {
				top := &stack[len(stack)-1]
				deps := g.dep[top.ch]
				next := -1
				for top.bit < len(deps)*64 {
					w := top.bit >> 6
					rest := deps[w] >> (top.bit & 63)
					if rest == 0 {
						top.bit = (w + 1) << 6
						continue
					}
					top.bit += bits.TrailingZeros64(rest)
					next = target(top.ch, top.bit)
					top.bit++
					if next >= 0 {
						break
					}
				}
				if next < 0 {
					state[top.ch] = closed
					stack = stack[:len(stack)-1]
					continue
				}
				switch state[next] {
				case closed:
					continue
				case open:
					loop := []Channel{chName(next)}
					for k := len(stack) - 1; k >= 0; k-- {
						loop = append(loop, chName(stack[k].ch))
					}
					return loop
				}
				state[next] = open
				stack = append(stack, frame{ch: next})
			}
		}
	}
	return nil
}

// anyPathSL reports whether some node has path SLs.
func (f *Fabric) anyPathSL() bool {
	for _, n := range f.nodes {
		if n.psl != nil {
			return true
		}
	}
	return false
}

// buildUnicastFast builds the CA-to-CA graph when every route uses SL 0
// and VL 0: a CA's channel depends on the out ports its switch uses for
// the other CAs, and each switch's route to a destination is followed once
// per destination, not once per source. It returns false when a route
// does not arrive (the general build then reports it).
func (g *depGraph) buildUnicastFast() bool {
	f := g.f
	cas := f.walkPorts(true)
	step := f.lidStep()
	// the switches the CAs hang off, with their CAs
	type leaf struct {
		sw   *Node
		srcs []*Port
	}
	var leaves []leaf
	byNode := map[*Node]int{}
	for _, p := range cas {
		if p.Remote == nil || p.Remote.Node.Type != Switch {
			return false
		}
		i, ok := byNode[p.Remote.Node]
		if !ok {
			i = len(leaves)
			byNode[p.Remote.Node] = i
			leaves = append(leaves, leaf{sw: p.Remote.Node})
		}
		leaves[i].srcs = append(leaves[i].srcs, p)
	}
	// a CA's channel: the out ports its switch uses for the other CAs
	for _, lf := range leaves {
		count := make([]int, lf.sw.NumPorts+1)
		for _, d := range cas {
			for l := 0; l < step; l++ {
				out := lf.sw.LFT(d.BaseLID + l)
				if out == Unassigned || int(out) > lf.sw.NumPorts {
					return false
				}
				count[out]++
			}
		}
		for _, s := range lf.srcs {
			own := make([]int, lf.sw.NumPorts+1)
			for l := 0; l < step; l++ {
				own[lf.sw.LFT(s.BaseLID+l)]++
			}
			for out := 1; out <= lf.sw.NumPorts; out++ {
				if count[out]-own[out] > 0 {
					g.addEdge(s, 0, out, 0)
				}
			}
		}
	}
	// the switches' routes, once per destination
	st := make([]chState, f.nports*g.nl*f.numSLs)
	var gen uint32
	for _, d := range cas {
		for l := 0; l < step; l++ {
			dlid := d.BaseLID + l
			gen++
			for _, lf := range leaves {
				if len(lf.srcs) == 1 && lf.srcs[0] == d {
					continue
				}
				out := lf.sw.LFT(dlid)
				p := lf.sw.Port(int(out))
				if out == 0 || p == nil || p.Remote == nil {
					return false
				}
				if f.ownsLID(p.Remote, dlid) {
					continue
				}
				if ok, _ := g.followFrom(p, dlid, st, gen); !ok {
					return false
				}
			}
		}
	}
	return true
}
