package routecheck

import "sort"

// router fills the switches' LFTs of a model, destination by destination.
type router struct {
	f    *Fabric
	sw   []*Node
	si   []int // switch index by node idx, -1 for CAs
	adj  [][]swHop
	load [][]int32 // destinations routed out of each switch's ports
}

// swHop is a switch's port to another switch.
type swHop struct{ port, to int }

// paths says, for one destination switch, which switches reach it and
// through which of their switch ports a route may leave.
type paths struct {
	reach []bool
	ok    func(s int, h swHop) bool
}

const inf = int32(1 << 30)

func newRouter(f *Fabric) *router {
	r := &router{f: f, si: make([]int, len(f.nodes))}
	for i, n := range f.nodes {
		r.si[i] = -1
		if n.Type == Switch {
			r.si[i] = len(r.sw)
			r.sw = append(r.sw, n)
		}
	}
	r.adj = make([][]swHop, len(r.sw))
	r.load = make([][]int32, len(r.sw))
	for s, n := range r.sw {
		r.load[s] = make([]int32, n.NumPorts+1)
		for _, p := range n.ports[1:] {
			if p != nil && p.Remote != nil && p.Remote.Node.Type == Switch {
				r.adj[s] = append(r.adj[s], swHop{p.Num, r.si[p.Remote.Node.idx]})
			}
		}
	}
	return r
}

// route routes every LID some port owns with the engine's paths, the
// least loaded allowed port first (the lowest number among equals), and
// returns the number of switch entries left unassigned.
// An entry with no path stays Unassigned (opensm's UNREACHABLE): with
// Up/Down, that of a root for another root's LID.
func (r *router) route(engine func(ds int) *paths) (unrouted int) {
	cache := map[int]*paths{}
	for lid := 1; lid <= r.f.maxLID; lid++ {
		p := r.f.PortByLID(lid)
		if p == nil {
			continue
		}
		ds, exit := -1, 0
		if p.Node.Type == Switch {
			ds = r.si[p.Node.idx]
		} else if p.Remote != nil && p.Remote.Node.Type == Switch {
			ds, exit = r.si[p.Remote.Node.idx], p.Remote.Num
		}
		if ds < 0 {
			continue
		}
		pt := cache[ds]
		if pt == nil {
			pt = engine(ds)
			cache[ds] = pt
		}
		for s, n := range r.sw {
			if s == ds {
				r.f.SetLFT(n, lid, uint8(exit))
				continue
			}
			best := r.pick(pt, s)
			if best < 0 {
				unrouted++
				continue
			}
			r.load[s][best]++
			r.f.SetLFT(n, lid, uint8(best))
		}
	}
	return unrouted
}

// pick returns the least loaded port of s the paths allow, -1 for none.
func (r *router) pick(pt *paths, s int) int {
	best := -1
	if pt.reach[s] {
		for _, h := range r.adj[s] {
			if pt.ok(s, h) && (best < 0 || r.load[s][h.port] < r.load[s][best]) {
				best = h.port
			}
		}
	}
	return best
}

// bfs returns the hop counts to ds over the links allowed (from, to).
func (r *router) bfs(ds int, allowed func(from, to int) bool) []int32 {
	d := make([]int32, len(r.sw))
	for i := range d {
		d[i] = inf
	}
	d[ds] = 0
	queue := []int{ds}
	for qi := 0; qi < len(queue); qi++ {
		t := queue[qi]
		for _, h := range r.adj[t] {
			// a link is both ways: h.to's move to t
			if s := h.to; d[s] == inf && allowed(s, t) {
				d[s] = d[t] + 1
				queue = append(queue, s)
			}
		}
	}
	return d
}

// minHopDists are min-hop's paths: any port on a shortest path.
func (r *router) minHopDists(ds int) *paths {
	d := r.bfs(ds, func(int, int) bool { return true })
	reach := make([]bool, len(d))
	for i, v := range d {
		reach[i] = v < inf
	}
	return &paths{reach: reach, ok: func(s int, h swHop) bool { return d[h.to] == d[s]-1 }}
}

// upDownDists returns Up/Down's paths. Switches are ordered by their
// rank (hops from the nearest root) and then by GUID; a move to a
// switch later in that order goes down. The switches that reach the
// destination going down only route down (the shortest such way); the
// others route up towards the nearest of them. A route is thus some moves
// up, then only moves down: no turn from down to up, so no cycle of
// channel dependencies.
func (r *router) upDownDists(roots []*Node) func(ds int) *paths {
	order := r.upDownOrder(roots)
	byOrder := make([]int, len(r.sw))
	for s, o := range order {
		byOrder[o] = s
	}
	down := func(from, to int) bool { return order[to] > order[from] }
	return func(ds int) *paths {
		d1 := r.bfs(ds, down)
		du := make([]int32, len(r.sw))
		for _, s := range byOrder {
			du[s] = inf
			if d1[s] < inf {
				continue
			}
			for _, h := range r.adj[s] {
				if order[h.to] > order[s] {
					continue
				}
				v := d1[h.to]
				if v == inf {
					v = du[h.to]
				}
				if v < inf && v+1 < du[s] {
					du[s] = v + 1
				}
			}
		}
		reach := make([]bool, len(r.sw))
		for s := range reach {
			reach[s] = d1[s] < inf || du[s] < inf
		}
		return &paths{reach: reach, ok: func(s int, h swHop) bool {
			if d1[s] < inf {
				return down(s, h.to) && d1[h.to] == d1[s]-1
			}
			if down(s, h.to) {
				return false
			}
			v := d1[h.to]
			if v == inf {
				v = du[h.to]
			}
			return v == du[s]-1
		}}
	}
}

// upDownOrder numbers the switches by rank from the roots, then GUID.
func (r *router) upDownOrder(roots []*Node) []int {
	rank := make([]int32, len(r.sw))
	for i := range rank {
		rank[i] = inf
	}
	var queue []int
	for _, n := range roots {
		if s := r.si[n.idx]; s >= 0 && rank[s] != 0 {
			rank[s] = 0
			queue = append(queue, s)
		}
	}
	for qi := 0; qi < len(queue); qi++ {
		s := queue[qi]
		for _, h := range r.adj[s] {
			if rank[h.to] == inf {
				rank[h.to] = rank[s] + 1
				queue = append(queue, h.to)
			}
		}
	}
	idx := make([]int, len(r.sw))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool {
		a, b := idx[i], idx[j]
		if rank[a] != rank[b] {
			return rank[a] < rank[b]
		}
		return r.sw[a].GUID < r.sw[b].GUID
	})
	order := make([]int, len(r.sw))
	for o, s := range idx {
		order[s] = o
	}
	return order
}
