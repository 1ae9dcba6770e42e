package routecheck

import (
	"fmt"
	"sort"
)

// FailureKind says why a route does not reach its destination.
type FailureKind uint8

// Route failures.
const (
	// NotConnected: the source port has no link.
	NotConnected FailureKind = iota + 1
	// NotOnSwitch: the source port's link does not lead to a switch.
	NotOnSwitch
	// UnassignedLFT: a node's LFT has no entry for the DLID (255, or past
	// the end of its table): a black hole.
	UnassignedLFT
	// DeadEndPort0: a switch sends the DLID to itself (port 0) but does not
	// own it.
	DeadEndPort0
	// DeadEnd: a switch sends the DLID out of a port with no link.
	DeadEnd
	// Loop: the route runs in a circle (more than 257 hops).
	Loop
)

var failureNames = [...]string{"", "not-connected", "not-on-switch", "unassigned-lft", "dead-end-port0", "dead-end", "loop"}

// String names the failure kind.
func (k FailureKind) String() string {
	if int(k) < len(failureNames) {
		return failureNames[k]
	}
	return fmt.Sprintf("FailureKind(%d)", uint8(k))
}

// MarshalText makes the kind a JSON string.
func (k FailureKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// RouteFailure is a route that does not reach its destination.
type RouteFailure struct {
	// Kind says why.
	Kind FailureKind `json:"kind"`
	// At is the node where the route ends (for Unassigned and dead ends).
	At string `json:"at,omitempty"`
	// SLID and DLID are the route's LIDs.
	SLID int `json:"slid"`
	DLID int `json:"dlid"`
	// From and To are the source and destination ports' names.
	From string `json:"from"`
	To   string `json:"to"`
}

// RouteResult is the outcome of following routes through the LFTs.
type RouteResult struct {
	// Paths is the number of routes followed.
	Paths int64 `json:"paths"`
	// Failures are the routes that do not arrive.
	Failures []RouteFailure `json:"failures,omitempty"`
	// Hops counts the routes that arrive by hop count (links from CA to
	// CA); only for CA-to-CA routes.
	Hops []Bin `json:"hops,omitempty"`
	// DLIDsPerPort counts switch-to-switch ports by the number of
	// destination ports routed out of them; only for CA-to-CA routes.
	DLIDsPerPort []Bin `json:"dlidsPerPort,omitempty"`
	// PortDLIDs is the detailed list behind DLIDsPerPort.
	PortDLIDs []PortCount `json:"portDlids,omitempty"`
	// CommonNodes and CommonSystems, with LMC > 0, count the pairs of
	// ports whose LMC paths share a number of nodes (or systems): row
	// [shared][0] is the total, [shared][d] those whose first path has d
	// switches. MaxDepth is the longest first path.
	CommonNodes   [][]int64 `json:"commonNodes,omitempty"`
	CommonSystems [][]int64 `json:"commonSystems,omitempty"`
	MaxDepth      int       `json:"maxDepth,omitempty"`
	// MaxHops is the longest route's switch-to-CA hop count.
	MaxHops int `json:"-"`
}

// PortCount is a switch port and a count.
type PortCount struct {
	// Port is the port's name.
	Port string `json:"port"`
	// Count is the count.
	Count int64 `json:"count"`
}

// maxRouteHops is the hop count past which ibdm gives a route up as a loop.
const maxRouteHops = 257

// destTree is every node's route to one DLID, each node followed once.
type destTree struct {
	f     *Fabric
	dlid  int
	stamp []uint32 // per node: == gen when state is valid
	gen   uint32
	state []uint8 // 0 new, 1 on the walk, 2 done
	ok    []bool
	hops  []int32 // links from the node to the destination
	kind  []FailureKind
	at    []*Node
	stack []*Node
}

func newDestTree(f *Fabric) *destTree {
	n := len(f.nodes)
	return &destTree{f: f, stamp: make([]uint32, n), state: make([]uint8, n), ok: make([]bool, n),
		hops: make([]int32, n), kind: make([]FailureKind, n), at: make([]*Node, n)}
}

func (t *destTree) reset(dlid int) {
	t.dlid = dlid
	t.gen++
	if t.gen == 0 {
		for i := range t.stamp {
			t.stamp[i] = 0
		}
		t.gen = 1
	}
}

// next returns where a node sends the DLID: done when it owns it (port 0)
// or the next link arrives, the next node otherwise, or why it fails.
func (t *destTree) step(n *Node) (next *Node, done bool, kind FailureKind) {
	f := t.f
	pn := n.LFT(t.dlid)
	if pn == Unassigned {
		return nil, false, UnassignedLFT
	}
	if pn == 0 {
		base := n.nodeLID()
		if base == 0 || base > t.dlid || base+f.lidStep()-1 < t.dlid {
			return nil, false, DeadEndPort0
		}
		return nil, true, 0
	}
	p := n.Port(int(pn))
	if p == nil || p.Remote == nil {
		return nil, false, DeadEnd
	}
	if f.ownsLID(p.Remote, t.dlid) {
		return nil, true, 0
	}
	return p.Remote.Node, false, 0
}

// resolve follows a node's route, iteratively, and memoises every node met.
func (t *destTree) resolve(n *Node) {
	if t.stamp[n.idx] == t.gen && t.state[n.idx] == 2 {
		return
	}
	t.stack = t.stack[:0]
	cur := n
	var okEnd bool
	var endHops int32
	var endKind FailureKind
	var endAt *Node
	for {
		i := cur.idx
		if t.stamp[i] == t.gen {
			if t.state[i] == 2 {
				okEnd, endHops, endKind, endAt = t.ok[i], t.hops[i], t.kind[i], t.at[i]
				break
			}
			// back on the walk: a forwarding loop
			okEnd, endKind, endAt = false, Loop, nil
			break
		}
		t.stamp[i], t.state[i] = t.gen, 1
		t.stack = append(t.stack, cur)
		next, done, kind := t.step(cur)
		if done {
			t.stack = t.stack[:len(t.stack)-1]
			t.state[i], t.ok[i], t.hops[i] = 2, true, 0
			if cur.LFT(t.dlid) != 0 {
				t.hops[i] = 1
			}
			okEnd, endHops = true, t.hops[i]
			break
		}
		if kind != 0 {
			t.stack = t.stack[:len(t.stack)-1]
			t.state[i], t.ok[i], t.kind[i], t.at[i] = 2, false, kind, cur
			okEnd, endKind, endAt = false, kind, cur
			break
		}
		cur = next
	}
	for k := len(t.stack) - 1; k >= 0; k-- {
		m := t.stack[k]
		i := m.idx
		t.state[i] = 2
		if okEnd {
			endHops++
			if endHops > maxRouteHops {
				okEnd, endKind, endAt = false, Loop, nil
			}
		}
		t.ok[i], t.hops[i], t.kind[i], t.at[i] = okEnd, endHops, endKind, endAt
	}
}

// start returns the node a route from a source port begins at, or why it
// cannot begin.
func startNode(p *Port) (*Node, FailureKind) {
	if p.Node.Type == Switch {
		return p.Node, 0
	}
	if p.Remote == nil {
		return nil, NotConnected
	}
	if p.Remote.Node.Type != Switch {
		return nil, NotOnSwitch
	}
	return p.Remote.Node, 0
}

// walkLIDs returns the ports the checks walk, at the LIDs minLID,
// minLID+2^LMC, ... as ibdm does, with the LIDs they are found at.
func (f *Fabric) walkPorts(caOnly bool) []*Port {
	var out []*Port
	for lid := f.minLID; lid <= f.maxLID; lid += f.lidStep() {
		p := f.PortByLID(lid)
		if p == nil || (caOnly && p.Node.Type == Switch) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// verifyCAToCA follows every CA-to-CA route through the LFTs, one
// destination's tree at a time.
func (f *Fabric) verifyCAToCA() *RouteResult {
	res := &RouteResult{}
	cas := f.walkPorts(true)
	step := f.lidStep()
	t := newDestTree(f)
	hist := map[int]int64{}
	anyPort := make([][]uint32, len(f.nodes)) // per node and port: destination stamp
	dlidCount := make([][]int64, len(f.nodes))
	mark := make([]uint32, len(f.nodes))
	var markGen uint32
	var commonNodes, commonSystems [][]int64
	if f.LMC > 0 {
		commonNodes, commonSystems = make([][]int64, 50), make([][]int64, 50)
		for i := range commonNodes {
			commonNodes[i], commonSystems[i] = make([]int64, 16), make([]int64, 16)
		}
	}
	starts := make([]*Node, len(cas))
	startKind := make([]FailureKind, len(cas))
	for j, p := range cas {
		starts[j], startKind[j] = startNode(p)
	}
	// sources grouped by the switch their routes start at: a route is its
	// first switch's, so each group is followed once per destination
	type group struct {
		start *Node
		srcs  []int
	}
	var groups []group
	byStart := map[*Node]int{}
	groupOf := make([]int, len(cas))
	for j := range cas {
		groupOf[j] = -1
		if startKind[j] != 0 {
			continue
		}
		gi, ok := byStart[starts[j]]
		if !ok {
			gi = len(groups)
			byStart[starts[j]] = gi
			groups = append(groups, group{start: starts[j]})
		}
		groups[gi].srcs = append(groups[gi].srcs, j)
		groupOf[j] = gi
	}
	histArr := make([]int64, maxRouteHops+3)
	anyStartFailure := len(groupOf) > 0 && func() bool {
		for _, k := range startKind {
			if k != 0 {
				return true
			}
		}
		return false
	}()
	for di, dst := range cas {
		destGen := uint32(di + 1)
		for l := 0; l < step; l++ {
			dlid := dst.BaseLID + l
			t.reset(dlid)
			markGen++
			failed := false
			for gi := range groups {
				g := &groups[gi]
				count := int64(len(g.srcs))
				if groupOf[di] == gi {
					count--
				}
				if count == 0 {
					continue
				}
				s := g.start
				t.resolve(s)
				if !t.ok[s.idx] {
					failed = true
					continue
				}
				h := int(t.hops[s.idx])
				histArr[h+1] += count
				if h > res.MaxHops {
					res.MaxHops = h
				}
				// the out ports of every switch on the route but the last
				for n := s; mark[n.idx] != markGen; {
					mark[n.idx] = markGen
					pn := int(n.LFT(dlid))
					next, done, _ := t.step(n)
					if done || next == nil {
						break
					}
					if anyPort[n.idx] == nil {
						anyPort[n.idx] = make([]uint32, n.NumPorts+1)
					}
					if anyPort[n.idx][pn] != destGen {
						anyPort[n.idx][pn] = destGen
						if dlidCount[n.idx] == nil {
							dlidCount[n.idx] = make([]int64, n.NumPorts+1)
						}
						dlidCount[n.idx][pn]++
					}
					n = next
				}
			}
			if !failed && !anyStartFailure && commonNodes == nil {
				res.Paths += int64(len(cas) - 1)
				continue
			}
			// failures and LMC paths are per source, in source order
			for j, src := range cas {
				if j == di {
					continue
				}
				res.Paths++
				if startKind[j] != 0 {
					res.Failures = append(res.Failures, RouteFailure{Kind: startKind[j], SLID: src.BaseLID + l, DLID: dlid, From: src.ID(), To: dst.ID()})
					continue
				}
				s := starts[j]
				if failed && !t.ok[s.idx] {
					at := ""
					if t.at[s.idx] != nil {
						at = t.at[s.idx].Name
					}
					res.Failures = append(res.Failures, RouteFailure{Kind: t.kind[s.idx], At: at, SLID: src.BaseLID + l, DLID: dlid, From: src.ID(), To: dst.ID()})
					continue
				}
				if l > 0 && commonNodes != nil {
					f.lmcCommonality(src, dst, l, commonNodes, commonSystems, res)
				}
			}
		}
	}
	for h, c := range histArr {
		if c > 0 {
			hist[h] += c
		}
	}
	res.Hops = bins(hist)
	dl := map[int]int64{}
	for _, n := range f.nodes {
		c := dlidCount[n.idx]
		if c == nil {
			continue
		}
		for pn := 1; pn <= n.NumPorts; pn++ {
			p := n.Port(pn)
			if p != nil && p.Remote != nil && p.Remote.Node.Type == Switch {
				dl[int(c[pn])]++
				res.PortDLIDs = append(res.PortDLIDs, PortCount{Port: p.Name(), Count: c[pn]})
			}
		}
	}
	res.DLIDsPerPort = bins(dl)
	if commonNodes != nil {
		res.CommonNodes, res.CommonSystems = commonNodes, commonSystems
	}
	return res
}

// routeNodes lists the nodes a route passes, from its first switch to the
// last before the destination.
func (f *Fabric) routeNodes(start *Node, dlid int) []*Node {
	t := &destTree{f: f, dlid: dlid}
	var out []*Node
	for n := start; n != nil && len(out) <= maxRouteHops; {
		out = append(out, n)
		next, done, kind := t.step(n)
		if done || kind != 0 {
			break
		}
		n = next
	}
	return out
}

// lmcCommonality compares a pair's LMC path l with its first path.
func (f *Fabric) lmcCommonality(src, dst *Port, l int, cn, cs [][]int64, res *RouteResult) {
	s, k := startNode(src)
	if k != 0 {
		return
	}
	p1 := f.routeNodes(s, dst.BaseLID)
	p2 := f.routeNodes(s, dst.BaseLID+l)
	if len(p1) == 0 {
		return
	}
	if len(p1) > res.MaxDepth {
		res.MaxDepth = len(p1)
	}
	if len(p1) > 15 {
		return
	}
	nodes := map[*Node]int{}
	systems := map[string]int{}
	for _, n := range p1 {
		nodes[n] = 1
		systems[n.SystemName] = 1
	}
	commonN, commonS := 0, 0
	for _, n := range p2 {
		if nodes[n] == 1 {
			commonN++
			nodes[n]++
		}
		if systems[n.SystemName] == 1 {
			commonS++
			systems[n.SystemName]++
		}
	}
	if commonN < 50 && commonS < 50 {
		cn[commonN][0]++
		cn[commonN][len(p1)]++
		cs[commonS][0]++
		cs[commonS][len(p1)]++
	}
}

// verifyAll follows every route between any two ports (ibdmchk -a).
func (f *Fabric) verifyAll() *RouteResult {
	res := &RouteResult{}
	all := f.walkPorts(false)
	step := f.lidStep()
	t := newDestTree(f)
	type fail struct {
		src, dst, l int
		RouteFailure
	}
	var fails []fail
	for di, dst := range all {
		for l := 0; l < step; l++ {
			dlid := dst.BaseLID + l
			t.reset(dlid)
			for si, src := range all {
				if si == di {
					continue
				}
				res.Paths++
				s, k := startNode(src)
				rf := RouteFailure{Kind: k, SLID: src.BaseLID + l, DLID: dlid, From: src.ID(), To: dst.ID()}
				if k == 0 {
					t.resolve(s)
					if t.ok[s.idx] {
						continue
					}
					rf.Kind = t.kind[s.idx]
					if t.at[s.idx] != nil {
						rf.At = t.at[s.idx].Name
					}
				}
				fails = append(fails, fail{si, di, l, rf})
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
		return a.l < b.l
	})
	for _, x := range fails {
		res.Failures = append(res.Failures, x.RouteFailure)
	}
	return res
}
