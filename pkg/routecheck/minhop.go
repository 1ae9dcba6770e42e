package routecheck

import (
	"runtime"
	"slices"
	"sort"
	"sync"
)

// Bin is one bar of a histogram: how many items have the value.
type Bin struct {
	// Value is the bar's value (hops, ports, DLIDs).
	Value int `json:"value"`
	// Count is the number of items with it.
	Count int64 `json:"count"`
}

// UnassignedHop is a LID a switch has no min-hop path to.
type UnassignedHop struct {
	// Node is the switch (or, for a CA-to-CA pair, the CA's switch).
	Node string `json:"node"`
	// LID is the unreachable LID.
	LID int `json:"lid"`
	// Port is the target port's name when the LID is a CA's.
	Port string `json:"port,omitempty"`
}

// TraceHop is one link of a traced path.
type TraceHop struct {
	// From is the port the packet leaves by.
	From PortRef `json:"from"`
	// To is the port at the other end of the link.
	To PortRef `json:"to"`
}

// PortRef names a port with its node and, for a link between systems, its
// system and system port.
type PortRef struct {
	// Node is the node's name.
	Node string `json:"node"`
	// Port is the port number.
	Port int `json:"port"`
	// System is the system's name when the link leaves the system.
	System string `json:"system,omitempty"`
	// SysPort is the port's name in its system (U1/P3), "" inside a system.
	SysPort string `json:"sysPort,omitempty"`
}

func portRef(p *Port) PortRef {
	r := PortRef{Node: p.Node.Name, Port: p.Num, SysPort: p.SysPort}
	if p.SysPort != "" {
		r.System = p.Node.SystemName
	}
	return r
}

// WorstPath is the CA pair farthest apart by min hops, and its path.
type WorstPath struct {
	// Hops counts the links from CA to CA.
	Hops int `json:"hops"`
	// From is the switch the first CA hangs off.
	From string `json:"from"`
	// To is the farthest CA.
	To string `json:"to"`
	// SLID and DLID are the LIDs the path is traced between.
	SLID int `json:"slid"`
	DLID int `json:"dlid"`
	// Trace is the path by first min-hop ports.
	Trace []TraceHop `json:"trace"`
	// LoopAt names the node where the trace ran into a loop, if it did.
	LoopAt string `json:"loopAt,omitempty"`
}

// MinHopResult is what the topology alone says: the switch-level
// distances and the histograms ibdmchk prints before any route is traced.
type MinHopResult struct {
	// Steps is the number of relaxation passes ibdm's min-hop algorithm
	// takes on the fabric.
	Steps int `json:"steps"`
	// CAWithoutLinks lists CAs with no port linked to a switch.
	CAWithoutLinks []string `json:"caWithoutLinks,omitempty"`
	// AlternatePorts counts switch and CA LID pairs by the number of
	// ports with the minimum hop count.
	AlternatePorts []Bin `json:"alternatePorts"`
	// Unassigned lists switch and LID pairs with no path.
	Unassigned []UnassignedHop `json:"unassigned,omitempty"`
	// CAUnassigned lists CA pairs with no path.
	CAUnassigned []UnassignedHop `json:"caUnassigned,omitempty"`
	// CAPairs counts CA-to-CA pairs by hop count (links from CA to CA).
	CAPairs []Bin `json:"caPairs,omitempty"`
	// Worst is the longest of them.
	Worst *WorstPath `json:"worst,omitempty"`
}

// topo holds the switch-level distances the checks share.
type topo struct {
	f        *Fabric
	switches []*Node
	swIdx    []int // by node idx; -1 for CAs
	dist     [][]uint8
	// per LID of the hop tables' walk (1, 1+step, ...): the switch the
	// LID's minimum-hop tree grows from and its hop count there.
	lidInit []int32 // switch index, -1 when none
	lidVal  []uint8
	steps   int
}

const noHop = 0xff

func newTopo(f *Fabric) *topo {
	t := &topo{f: f, swIdx: make([]int, len(f.nodes))}
	for i, n := range f.nodes {
		t.swIdx[i] = -1
		if n.Type == Switch {
			t.swIdx[i] = len(t.switches)
			t.switches = append(t.switches, n)
		}
	}
	// the name order of the switches decides how far one pass of ibdm's
	// in-place relaxation reaches
	order := make([]int, len(t.switches))
	for rank, n := range f.nodesByName() {
		if s := t.swIdx[n.idx]; s >= 0 {
			order[s] = rank
		}
	}
	t.lidInit = make([]int32, f.maxLID+1)
	t.lidVal = make([]uint8, f.maxLID+1)
	for i := range t.lidInit {
		t.lidInit[i] = -1
	}
	// ibdm walks the LIDs 1, 1+2^LMC, ... only: those are the LIDs its
	// tables have hops for.
	inWalk := func(lid int) bool { return lid >= 1 && lid <= f.maxLID && (lid-1)%f.lidStep() == 0 }
	for _, n := range f.nodes {
		if n.Type == Switch {
			if l := n.nodeLID(); inWalk(l) {
				t.lidInit[l], t.lidVal[l] = int32(t.swIdx[n.idx]), 0
			}
			continue
		}
		for _, p := range n.ports {
			if p != nil && p.Remote != nil && p.Remote.Node.Type == Switch && inWalk(p.BaseLID) {
				t.lidInit[p.BaseLID], t.lidVal[p.BaseLID] = int32(t.swIdx[p.Remote.Node.idx]), 1
			}
		}
	}
	usedRoot := make([]bool, len(t.switches))
	for _, s := range t.lidInit {
		if s >= 0 {
			usedRoot[s] = true
		}
	}
	adj := switchLinks(t)
	t.dist = make([][]uint8, len(t.switches))
	// The roots are independent: each worker takes every workers-th one
	// with a queue and pass table of its own.
	workers := min(runtime.GOMAXPROCS(0), max(1, len(t.switches)/64))
	passes := make([]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			queue := make([]int32, 0, len(t.switches))
			avail := make([]int, len(t.switches))
			for root := w; root < len(t.switches); root += workers {
				d, reached := t.bfs(adj, root, queue)
				t.dist[root] = d
				if usedRoot[root] {
					passes[w] = max(passes[w], rootPasses(adj, d, reached, avail, order))
				}
			}
		}()
	}
	wg.Wait()
	t.steps = slices.Max(passes) + 1
	return t
}

// adjacency is the switch-to-switch links as lists of switch indices:
// the neighbours of switch s, one entry per linked port in port order,
// are list[start[s]:start[s+1]].
type adjacency struct {
	start []int32
	list  []int32
}

// switchLinks returns the switches' links to switches.
func switchLinks(t *topo) adjacency {
	a := adjacency{start: make([]int32, len(t.switches)+1)}
	for s, n := range t.switches {
		for _, p := range n.ports {
			if p != nil && p.Remote != nil && p.Remote.Node.Type == Switch {
				a.list = append(a.list, int32(t.swIdx[p.Remote.Node.idx]))
			}
		}
		a.start[s+1] = int32(len(a.list))
	}
	return a
}

// bfs returns the hop counts from root to every switch (noHop where none,
// noHop-1 at most) and the switches reached, in the order reached (queue's
// storage, which must hold every switch).
func (t *topo) bfs(adj adjacency, root int, queue []int32) ([]uint8, []int32) {
	d := make([]uint8, len(t.switches))
	for i := range d {
		d[i] = noHop
	}
	d[root] = 0
	queue = append(queue[:0], int32(root))
	for qi := 0; qi < len(queue); qi++ {
		s := queue[qi]
		for _, r := range adj.list[adj.start[s]:adj.start[s+1]] {
			if d[r] == noHop {
				d[r] = min(d[s]+1, noHop-1)
				queue = append(queue, r)
			}
		}
	}
	return d, queue
}

// rootPasses returns how many passes of ibdm's in-place relaxation, which
// visits the switches in name order, the hop counts d to root take:
// a port's entry is final in the pass its neighbour's is, or the next one
// when the neighbour comes later in name order. reached is bfs' order;
// avail is scratch space.
func rootPasses(adj adjacency, d []uint8, reached []int32, avail []int, order []int) int {
	avail[reached[0]] = 0
	for _, s := range reached[1:] {
		best := -1
		for _, r := range adj.list[adj.start[s]:adj.start[s+1]] {
			if d[r]+1 != d[s] {
				continue
			}
			if pp := portPass(avail[r], order[r], order[s]); best < 0 || pp < best {
				best = pp
			}
		}
		avail[s] = best
	}
	most := 0
	for _, s := range reached {
		for _, r := range adj.list[adj.start[s]:adj.start[s+1]] {
			if pp := portPass(avail[r], order[r], order[s]); pp > most {
				most = pp
			}
		}
	}
	return most
}

func portPass(availR, orderR, orderS int) int {
	if availR == 0 {
		return 1
	}
	if orderR > orderS {
		return availR + 1
	}
	return availR
}

// hops returns a switch's minimum hop count to a LID of the walk.
func (t *topo) hops(s int, lid int) int {
	if lid < 0 || lid >= len(t.lidInit) || t.lidInit[lid] < 0 {
		return noHop
	}
	d := t.dist[t.lidInit[lid]][s]
	if d == noHop {
		return noHop
	}
	return int(d) + int(t.lidVal[lid])
}

// portHops returns the hop count to a LID through a switch's port.
func (t *topo) portHops(p *Port, lid int) int {
	if p == nil || p.Remote == nil {
		return noHop
	}
	r := p.Remote
	if r.Node.Type != Switch {
		if t.lidInit[lid] >= 0 && t.lidVal[lid] == 1 && t.f.PortByLID(lid) == r && r.BaseLID == lid {
			return 1
		}
		return noHop
	}
	h := t.hops(t.swIdx[r.Node.idx], lid)
	if h == noHop {
		return noHop
	}
	return h + 1
}

// firstMinHopPort returns a switch's first port on a minimum-hop path.
func (t *topo) firstMinHopPort(n *Node, lid int) *Port {
	s := t.swIdx[n.idx]
	if s < 0 {
		return nil
	}
	min := t.hops(s, lid)
	for _, p := range n.ports[1:] {
		if p != nil && t.portHops(p, lid) == min {
			return p
		}
	}
	return nil
}

// minHops computes the histograms of ibdm's SubnMgtCalcMinHopTables.
func (t *topo) minHops() MinHopResult {
	f := t.f
	res := MinHopResult{Steps: t.steps}
	for _, n := range f.nodesByName() {
		if n.Type == Switch {
			continue
		}
		linked := false
		for _, p := range n.ports {
			if p != nil && p.Remote != nil && p.Remote.Node.Type == Switch {
				linked = true
			}
		}
		if !linked {
			res.CAWithoutLinks = append(res.CAWithoutLinks, n.Name)
		}
	}
	// CA LIDs of the walk grouped by the switch their tree grows from
	step := f.lidStep()
	caLIDs := make([]int64, len(t.switches))
	for lid := 1; lid <= f.maxLID; lid += step {
		p := f.PortByLID(lid)
		if p == nil || p.Node.Type == Switch {
			continue
		}
		if t.lidInit[lid] >= 0 {
			caLIDs[t.lidInit[lid]]++
		}
	}
	alt := make(map[int]int64)
	for _, n := range f.nodesByName() {
		if n.Type != Switch {
			continue
		}
		s := t.swIdx[n.idx]
		for lid := 1; lid <= f.maxLID; lid += step {
			p := f.PortByLID(lid)
			if p == nil {
				continue
			}
			if t.hops(s, lid) == noHop {
				res.Unassigned = append(res.Unassigned, UnassignedHop{Node: n.Name, LID: lid})
			}
		}
		for leaf, cnt := range caLIDs {
			if cnt == 0 || t.dist[leaf][s] == noHop {
				continue
			}
			k := 0
			if leaf == s {
				k = 1
			} else {
				want := t.dist[leaf][s]
				for _, p := range n.ports[1:] {
					if p == nil || p.Remote == nil || p.Remote.Node.Type != Switch {
						continue
					}
					if t.dist[leaf][t.swIdx[p.Remote.Node.idx]]+1 == want {
						k++
					}
				}
			}
			alt[k] += cnt
		}
	}
	res.AlternatePorts = bins(alt)
	if len(res.Unassigned) > 0 {
		return res
	}
	t.caPairs(&res, caLIDs)
	return res
}

// caPairs fills the CA-to-CA min-hop histogram and traces the worst pair.
func (t *topo) caPairs(res *MinHopResult, caLIDs []int64) {
	f := t.f
	step := f.lidStep()
	hist := map[int]int64{}
	maxHops := 0
	type worst struct {
		sw  *Node
		lid int
	}
	var w *worst
	for _, ca := range f.nodesByName() {
		if ca.Type != CA {
			continue
		}
		for _, cp := range ca.ports[1:] {
			if cp == nil || cp.Remote == nil {
				continue
			}
			swNode := cp.Remote.Node
			s := t.swIdx[swNode.idx]
			if s < 0 {
				for lid := 1; lid <= f.maxLID; lid += step {
					if p := f.PortByLID(lid); p != nil && p.Node.Type == CA && p != cp {
						res.CAUnassigned = append(res.CAUnassigned, UnassignedHop{Node: swNode.Name, LID: lid, Port: p.ID()})
					}
				}
				continue
			}
			localMax := 0
			unreachable := false
			for leaf, cnt := range caLIDs {
				if cnt == 0 {
					continue
				}
				d := t.dist[leaf][s]
				if d == noHop {
					unreachable = true
					continue
				}
				h := int(d) + 1
				c := cnt
				if leaf == s {
					// the CA's own LIDs of the walk are not a pair
					for l := cp.BaseLID; l < cp.BaseLID+step; l++ {
						if l <= f.maxLID && (l-1)%step == 0 && f.PortByLID(l) == cp && t.lidInit[l] >= 0 {
							c--
						}
					}
				}
				if c > 0 {
					hist[h+1] += c
					if h > localMax {
						localMax = h
					}
				}
			}
			// pairs with no path, in LID order
			for lid := 1; unreachable && lid <= f.maxLID; lid += step {
				p := f.PortByLID(lid)
				if p == nil || p.Node.Type != CA || p == cp {
					continue
				}
				if t.hops(s, lid) == noHop {
					res.CAUnassigned = append(res.CAUnassigned, UnassignedHop{Node: swNode.Name, LID: lid, Port: p.ID()})
				}
			}
			if localMax > maxHops {
				maxHops = localMax
				for lid := 1; lid <= f.maxLID; lid += step {
					p := f.PortByLID(lid)
					if p != nil && p.Node.Type == CA && p != cp && t.hops(s, lid) == localMax {
						w = &worst{sw: swNode, lid: lid}
						break
					}
				}
			}
		}
	}
	res.CAPairs = bins(hist)
	if w != nil {
		res.Worst = t.trace(w.sw, w.lid, maxHops)
	}
}

// trace follows the first min-hop ports from a switch to a LID.
func (t *topo) trace(sw *Node, dlid, hops int) *WorstPath {
	f := t.f
	wp := &WorstPath{Hops: hops + 1, From: sw.Name, To: f.PortByLID(dlid).Node.Name, DLID: dlid}
	first := t.firstMinHopPort(sw, dlid)
	if first == nil {
		return wp
	}
	wp.SLID = first.BaseLID
	p := t.firstMinHopPort(f.PortByLID(wp.SLID).Node, dlid)
	visited := map[*Node]bool{}
	for p != nil {
		r := p.Remote
		if r == nil {
			wp.Trace = append(wp.Trace, TraceHop{From: portRef(p)})
			break
		}
		if visited[r.Node] {
			wp.LoopAt = r.Node.Name
			break
		}
		visited[r.Node] = true
		wp.Trace = append(wp.Trace, TraceHop{From: portRef(p), To: portRef(r)})
		var next *Port
		if r.Node.Type == Switch {
			next = t.firstMinHopPort(r.Node, dlid)
		}
		p = next
	}
	return wp
}

// bins turns counts by value into a histogram sorted by value.
func bins(m map[int]int64) []Bin {
	out := make([]Bin, 0, len(m))
	for v, c := range m {
		if c != 0 {
			out = append(out, Bin{Value: v, Count: c})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out
}
