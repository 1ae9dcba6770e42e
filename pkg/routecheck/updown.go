package routecheck

import (
	"fmt"
)

// RootsByMinHop finds the roots of a tree as ibdmchk does when -u has no
// roots file: the switches whose min-hop distances to the CAs are one bar
// over 90% of the CAs with no other bar over 5%.
func (f *Fabric) rootsByMinHop(t *topo) []*Node {
	numCAs := 0
	for _, n := range f.nodes {
		if n.Type != Switch {
			numCAs++
		}
	}
	caByLeaf := map[int]int{}
	for _, p := range f.walkPorts(true) {
		if t.lidInit[p.BaseLID] >= 0 {
			caByLeaf[int(t.lidInit[p.BaseLID])]++
		} else {
			caByLeaf[-1]++
		}
	}
	var roots []*Node
	thd1, thd2 := float64(numCAs)*0.9, float64(numCAs)*0.05
	for _, n := range f.switchesByName() {
		s := t.swIdx[n.idx]
		hist := map[int]int{}
		for leaf, c := range caByLeaf {
			h := noHop
			if leaf >= 0 && t.dist[leaf][s] != noHop {
				h = int(t.dist[leaf][s]) + 1
			}
			hist[h] += c
		}
		over1, over2 := 0, 0
		for _, c := range hist {
			if float64(c) > thd1 {
				over1++
			}
			if float64(c) > thd2 {
				over2++
			}
		}
		if over1 == 1 && over2 == 1 {
			roots = append(roots, n)
		}
	}
	return roots
}

// rankFrom ranks every node by its distance from the roots.
func (f *Fabric) rankFrom(roots []*Node) map[*Node]int {
	rank := map[*Node]int{}
	cur := append([]*Node(nil), roots...)
	for _, r := range roots {
		rank[r] = 0
	}
	for r := 1; len(cur) > 0; r++ {
		var next []*Node
		for _, n := range cur {
			for _, p := range n.ports[1:] {
				if p == nil || p.Remote == nil {
					continue
				}
				if _, ok := rank[p.Remote.Node]; !ok {
					rank[p.Remote.Node] = r
					next = append(next, p.Remote.Node)
				}
			}
		}
		cur = next
	}
	return rank
}

// Turn is a change of direction along a route.
type Turn struct {
	// Up is true for a turn up (towards the roots).
	Up bool `json:"up"`
	// From and To are the nodes of the turn.
	From string `json:"from"`
	To   string `json:"to"`
}

// BadPath is a CA-to-CA route that turns up after turning down: it can
// close a credit loop.
type BadPath struct {
	// From and To are the source and destination ports.
	From string `json:"from"`
	To   string `json:"to"`
	// Turns are the route's changes of direction, the first down one first.
	Turns []Turn `json:"turns"`
}

// UpDownResult is the Up/Down rule check of the CA-to-CA routes.
type UpDownResult struct {
	// Roots are the root switches, given or found.
	Roots []string `json:"roots"`
	// Ranks gives every node's distance from the roots.
	Ranks map[string]int `json:"-"`
	// Paths is the number of routes checked.
	Paths int64 `json:"paths"`
	// BadPaths are the routes that break the rule (ibdmchk stops after 101).
	BadPaths []BadPath `json:"badPaths,omitempty"`
	// Stopped is true when the check stopped at 101 bad routes.
	Stopped bool `json:"stopped"`
	// Failures are the routes that do not arrive.
	Failures []RouteFailure `json:"failures,omitempty"`
	// Multicast is the rule's check of each multicast tree.
	Multicast []MulticastUpDown `json:"multicast,omitempty"`
}

// upDown checks every CA-to-CA route against the Up/Down rule of the
// roots' ranking: once a route has gone down (to a higher rank, or
// sideways) it must not go up again.
func (f *Fabric) upDown(roots []*Node) (*UpDownResult, error) {
	res := &UpDownResult{}
	for _, r := range roots {
		res.Roots = append(res.Roots, r.Name)
	}
	rank := f.rankFrom(roots)
	res.Ranks = map[string]int{}
	for n, r := range rank {
		res.Ranks[n.Name] = r
	}
	cas := f.walkPorts(true)
	t := newDestTree(f)
	// per destination, per node: does the route from it turn up after a
	// turn down (bad), and does it go up anywhere (hasUp)
	nn := len(f.nodes)
	bad := make([][]uint64, len(cas))
	state := make([]uint8, nn) // 0 unknown, 1 on walk, 2 known
	hasUp := make([]bool, nn)
	isBad := make([]bool, nn)
	rankOf := make([]int, nn)
	for i := range rankOf {
		rankOf[i] = -1
	}
	for n, r := range rank {
		rankOf[n.idx] = r
	}
	// the verdicts are kept for the switches routes start at only
	startIdx := make([]int, nn)
	var startNodes []*Node
	for i := range startIdx {
		startIdx[i] = -1
	}
	for _, src := range cas {
		if s, k := startNode(src); k == 0 && startIdx[s.idx] < 0 {
			startIdx[s.idx] = len(startNodes)
			startNodes = append(startNodes, s)
		}
	}
	var walk []*Node
	for di, dst := range cas {
		dlid := dst.BaseLID
		t.reset(dlid)
		for i := range state {
			state[i] = 0
		}
		bad[di] = make([]uint64, (len(startNodes)+63)/64)
		for _, src := range cas {
			s, k := startNode(src)
			if k != 0 || state[s.idx] == 2 {
				continue
			}
			t.resolve(s)
			if !t.ok[s.idx] {
				continue
			}
			walk = walk[:0]
			for n := s; ; {
				if state[n.idx] == 2 {
					break
				}
				walk = append(walk, n)
				next, done, _ := t.step(n)
				if done || next == nil {
					state[n.idx], hasUp[n.idx], isBad[n.idx] = 2, false, false
					walk = walk[:len(walk)-1]
					break
				}
				n = next
			}
			for k := len(walk) - 1; k >= 0; k-- {
				n := walk[k]
				next, _, _ := t.step(n)
				up := rankOf[next.idx] < rankOf[n.idx]
				hasUp[n.idx] = up || hasUp[next.idx]
				isBad[n.idx] = isBad[next.idx] || (!up && hasUp[next.idx])
				state[n.idx] = 2
			}
		}
		for k, n := range startNodes {
			if state[n.idx] == 2 && isBad[n.idx] {
				bad[di][k>>6] |= 1 << (k & 63)
			}
		}
	}
	for si, src := range cas {
		if len(res.BadPaths) > 100 {
			break
		}
		for di, dst := range cas {
			if len(res.BadPaths) > 100 {
				break
			}
			if si == di {
				continue
			}
			res.Paths++
			s, k := startNode(src)
			if k != 0 {
				res.Failures = append(res.Failures, RouteFailure{Kind: k, SLID: src.BaseLID, DLID: dst.BaseLID, From: src.ID(), To: dst.ID()})
				continue
			}
			if k := startIdx[s.idx]; bad[di][k>>6]&(1<<(k&63)) == 0 {
				continue
			}
			bp := BadPath{From: src.ID(), To: dst.ID()}
			nodes := f.routeNodes(s, dst.BaseLID)
			prevUp, prevRank := true, 99
			for i, n := range nodes {
				r, ok := rank[n]
				if !ok {
					return nil, fmt.Errorf("%w: no rank for %s", ErrModel, n.Name)
				}
				up := r < prevRank
				if up != prevUp && i > 0 {
					bp.Turns = append(bp.Turns, Turn{Up: up, From: nodes[i-1].Name, To: n.Name})
				}
				prevRank, prevUp = r, up
			}
			res.BadPaths = append(res.BadPaths, bp)
		}
	}
	res.Stopped = len(res.BadPaths) > 100
	mc, err := f.multicastUpDown(rank)
	if err != nil {
		return nil, err
	}
	res.Multicast = mc
	return res, nil
}
