package routecheck

// EnhancedRouting says how ibdm's enhanced LMC routing chose the port of
// each switch LFT entry it routed (ibdmchk's "-I- Enhanced selection by
// Sys:N Node:N Subscription:N") and which switch ports it left unused.
type EnhancedRouting struct {
	// BySystem counts the entries routed out of the least subscribed
	// port into another system.
	BySystem int `json:"bySystem"`
	// ByNode counts the entries routed out of the least subscribed port
	// to a node no earlier LID of the same destination port went to.
	ByNode int `json:"byNode"`
	// BySubscription counts the entries routed out of the least
	// subscribed port alone: every allowed port was ruled out by both
	// rules above.
	BySubscription int `json:"bySubscription"`
	// UnusedPorts are the linked switch ports no CA's LID is routed out
	// of (ibdmchk's "-W- Unused port:"), by node name and port number.
	UnusedPorts []string `json:"unusedPorts,omitempty"`
}

// routeEnhanced fills the LFTs as ibdm's enhanced LMC routing does
// (SubnMgtOsmEnhancedRoute): each switch routes the destination ports in
// the order of their base LIDs, and the 2^LMC LIDs of a port one after
// the other. Among the ports the engine allows, a LID takes the least
// subscribed one (the lowest number among equals) of the first of these
// kinds that has one:
//   - ports whose next node is in a system the port's earlier LIDs did not
//     go through at this switch;
//   - ports whose next node the port's earlier LIDs did not go to;
//   - any allowed port.
//
// As in ibdm, the system recorded for a LID is the routing switch's own,
// so from the second LID of a port on, the first rule prefers the ports
// leaving the switch's system, and the second spreads the LIDs over next
// nodes. A port's subscription counts the LIDs of CAs routed out of it
// (ibdm does not count the switches' LIDs). It returns the number of
// entries left unassigned, how the ports were chosen and the ports no CA
// LID leaves by.
func (r *router) routeEnhanced(engine func(ds int) *paths) (unrouted int, sel EnhancedRouting) {
	subsc := make([][]int32, len(r.sw))
	for s, n := range r.sw {
		subsc[s] = make([]int32, n.NumPorts+1)
	}
	cache := map[int]*paths{}
	step := r.f.lidStep()
	var seenNodes []*Node
	for base := 1; base <= r.f.maxLID; base++ {
		p := r.f.PortByLID(base)
		if p == nil || p.BaseLID != base {
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
		toCA := p.Node.Type != Switch
		for s, n := range r.sw {
			if s == ds && !toCA {
				for l := 0; l < step; l++ {
					r.f.SetLFT(n, base+l, 0)
				}
				continue
			}
			afterFirst := false
			seenNodes = seenNodes[:0]
			for l := 0; l < step; l++ {
				out := r.pickEnhanced(pt, s, ds, exit, subsc[s], afterFirst, seenNodes, &sel)
				if out < 0 {
					unrouted++
					continue
				}
				afterFirst = true
				seenNodes = append(seenNodes, n.ports[out].Remote.Node)
				if toCA {
					subsc[s][out]++
				}
				r.f.SetLFT(n, base+l, uint8(out))
			}
		}
	}
	for _, n := range r.f.nodesByName() {
		if s := r.si[n.idx]; s >= 0 {
			for pn, p := range n.ports {
				if pn > 0 && p != nil && p.Remote != nil && subsc[s][pn] == 0 {
					sel.UnusedPorts = append(sel.UnusedPorts, p.Name())
				}
			}
		}
	}
	return unrouted, sel
}

// pickEnhanced returns the port switch s routes the next LID of a
// destination port out of, -1 for none. ds and exit are the destination's
// switch and, for a CA, the port it hangs off; afterFirst says an earlier
// LID of the port was routed at s (so its system is recorded), seen are
// the next nodes the earlier LIDs went to.
func (r *router) pickEnhanced(pt *paths, s, ds, exit int, subsc []int32, afterFirst bool, seen []*Node, sel *EnhancedRouting) int {
	n := r.sw[s]
	var c enhancedChoice
	if s == ds {
		c.consider(exit, n.ports[exit].Remote.Node, n.SystemGUID, subsc, afterFirst, seen)
	} else if pt.reach[s] {
		for _, h := range r.adj[s] {
			if pt.ok(s, h) {
				c.consider(h.port, r.sw[h.to], n.SystemGUID, subsc, afterFirst, seen)
			}
		}
	}
	switch {
	case c.bySys > 0:
		sel.BySystem++
		return c.bySys
	case c.byNode > 0:
		sel.ByNode++
		return c.byNode
	case c.any > 0:
		sel.BySubscription++
		return c.any
	}
	return -1
}

// enhancedChoice is the least subscribed port of each rule so far, 0 for
// none yet.
type enhancedChoice struct{ bySys, byNode, any int }

// consider weighs a port to node next for each rule; system is the
// routing switch's system.
func (c *enhancedChoice) consider(port int, next *Node, system uint64, subsc []int32, afterFirst bool, seen []*Node) {
	sub := subsc[port]
	// the system recorded for the earlier LIDs is the switch's own, as
	// ibdm records it
	if (!afterFirst || next.SystemGUID != system) && (c.bySys == 0 || sub < subsc[c.bySys]) {
		c.bySys = port
	}
	if (c.byNode == 0 || sub < subsc[c.byNode]) && !containsNode(seen, next) {
		c.byNode = port
	}
	if c.any == 0 || sub < subsc[c.any] {
		c.any = port
	}
}

func containsNode(ns []*Node, n *Node) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}
