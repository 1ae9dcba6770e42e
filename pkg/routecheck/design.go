package routecheck

import (
	"fmt"
	"math/bits"
	"sort"
)

// Engine is a routing engine Design simulates.
type Engine uint8

// Routing engines.
const (
	// MinHop routes each destination out of the ports on a shortest
	// path, the one carrying the fewest destinations so far (opensm's
	// minhop).
	MinHop Engine = iota
	// UpDown routes each destination over up*/down* paths of the ranks
	// from the roots (opensm's updn).
	UpDown
)

// String returns opensm's name of the engine: "minhop" or "updn".
func (e Engine) String() string {
	if e == UpDown {
		return "updn"
	}
	return "minhop"
}

// MarshalText returns the engine's name.
func (e Engine) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// DesignOptions say how Design assigns the LIDs and routes.
type DesignOptions struct {
	// LMC gives each port 2^LMC LIDs.
	LMC uint8
	// SMNode is the node GUID of the node the subnet manager runs on.
	SMNode uint64
	// SMPort is the SM's port: a linked port of a CA, any port of a
	// switch (0 included).
	SMPort int
	// Engine is the routing engine.
	Engine Engine
	// Roots are the Up/Down roots' node GUIDs; none means find them as
	// opensm's updn does (the min-hop histogram of each switch).
	Roots []uint64
	// Enhanced routes with ibdm's enhanced LMC routing (ibdmchk -e):
	// the LIDs of a port leave each switch through ports to other
	// systems, then to other nodes, before the least subscribed one (see
	// DesignResult.Enhanced). The engine still says which ports a route
	// may take.
	Enhanced bool
}

// DesignResult says what Design did.
type DesignResult struct {
	// Engine is the engine that routed: MinHop when UpDown found no roots.
	Engine Engine `json:"engine"`
	// SMPort is the SM's port, as node/port.
	SMPort string `json:"smPort"`
	// Ports is the number of ports given LIDs.
	Ports int `json:"ports"`
	// MaxLID is the highest LID given.
	MaxLID int `json:"maxLid"`
	// Unreached are the IDs of the nodes the SM's port does not reach:
	// they get no LID and are left out of the model.
	Unreached []string `json:"unreached,omitempty"`
	// Roots are the names of the Up/Down roots.
	Roots []string `json:"roots,omitempty"`
	// RootGUIDs are their node GUIDs.
	RootGUIDs []uint64 `json:"rootGuids,omitempty"`
	// RootsSearched is true when the roots were found from the min-hop
	// histograms.
	RootsSearched bool `json:"rootsSearched,omitempty"`
	// MissingRoots are given root GUIDs that are not in the model.
	MissingRoots []uint64 `json:"missingRoots,omitempty"`
	// NoRoots is true when Up/Down found no roots and min-hop routed.
	NoRoots bool `json:"noRoots,omitempty"`
	// Unrouted is the number of switch LFT entries of owned LIDs left
	// unassigned: no path (min-hop) or no up*/down* path (Up/Down: as
	// opensm's updn, between two roots, whose switch-to-switch routes
	// only -a checks).
	Unrouted int `json:"unrouted"`
	// Enhanced, with DesignOptions.Enhanced, says how the enhanced LMC
	// routing chose the ports.
	Enhanced *EnhancedRouting `json:"enhanced,omitempty"`
}

// Design builds the routing model of a topology as a subnet manager would
// bring it up: it gives LIDs to the ports the SM's port reaches and fills
// every switch's linear forwarding table with the engine's routes. Check
// then checks it.
//
// LIDs: the SM's port first, then every port in the order of its port
// GUID's bytes in network order (the order of opensm's port table), a
// switch one port (port 0), a CA each linked port. Each takes the next
// 2^LMC LIDs from 1: base LIDs 1, 1+2^LMC, ... (with LMC 0 what opensm
// gives a fresh fabric; opensm aligns bases to multiples of 2^LMC).
func Design(t *Topology, o DesignOptions) (*Fabric, *DesignResult, error) {
	sm := t.byGUID[o.SMNode]
	if sm == nil {
		return nil, nil, fmt.Errorf("%w: no SM node 0x%016x in the topology", ErrModel, o.SMNode)
	}
	if o.LMC > 7 {
		return nil, nil, fmt.Errorf("%w: LMC %d", ErrModel, o.LMC)
	}
	peer := t.peers()
	if o.SMPort < 0 || o.SMPort > sm.NumPorts || (sm.Type != Switch && (o.SMPort == 0 || peer[sm.idx][o.SMPort].Node == nil)) {
		return nil, nil, fmt.Errorf("%w: the SM node %s has no linked port %d", ErrModel, sm.ID, o.SMPort)
	}
	res := &DesignResult{Engine: o.Engine, SMPort: fmt.Sprintf("%s/%d", sm.ID, o.SMPort)}
	reached := t.reach(sm, o.SMPort, peer)
	lids, err := t.assignLIDs(sm, o, peer, reached, res)
	if err != nil {
		return nil, nil, err
	}
	f := New(o.LMC)
	for _, n := range t.Nodes {
		if !reached[n.idx] {
			res.Unreached = append(res.Unreached, n.ID)
			continue
		}
		if _, err := f.AddNode(n.GUID, n.SystemGUID, n.Type, n.NumPorts); err != nil {
			return nil, nil, err
		}
	}
	for _, l := range t.Links {
		a, b := l.A, l.B
		if !reached[a.Node.idx] || !reached[b.Node.idx] {
			continue
		}
		la, lb := lids[endKey{a.Node.idx, lidPort(a)}], lids[endKey{b.Node.idx, lidPort(b)}]
		if la == 0 || lb == 0 {
			continue
		}
		if err := f.Connect(Endpoint{Node: a.Node.GUID, Port: a.Port, PortGUID: portGUID(a), LID: la},
			Endpoint{Node: b.Node.GUID, Port: b.Port, PortGUID: portGUID(b), LID: lb}); err != nil {
			return nil, nil, err
		}
	}
	r := newRouter(f)
	if o.Engine == UpDown {
		roots := f.designRoots(o.Roots, res)
		if len(roots) == 0 {
			res.NoRoots, res.Engine = true, MinHop
		} else {
			for _, n := range roots {
				res.Roots = append(res.Roots, n.Name)
				res.RootGUIDs = append(res.RootGUIDs, n.GUID)
			}
			res.routeWith(r, r.upDownDists(roots), o.Enhanced)
			return f, res, nil
		}
	}
	res.routeWith(r, r.minHopDists, o.Enhanced)
	return f, res, nil
}

// routeWith fills the LFTs with the engine's paths, by ibdm's enhanced LMC
// routing or the engine's own.
func (res *DesignResult) routeWith(r *router, engine func(ds int) *paths, enhanced bool) {
	if !enhanced {
		res.Unrouted = r.route(engine)
		return
	}
	sel := EnhancedRouting{}
	res.Unrouted, sel = r.routeEnhanced(engine)
	res.Enhanced = &sel
}

type endKey struct{ node, port int }

// lidPort is the port whose LID an end uses: port 0 for a switch.
func lidPort(e TopoEnd) int {
	if e.Node.Type == Switch {
		return 0
	}
	return e.Port
}

// portGUID is an end's port GUID, made from the node GUID and the port
// number when the file gives none.
func portGUID(e TopoEnd) uint64 {
	if g := e.Node.PortGUIDs[lidPort(e)]; g != 0 {
		return g
	}
	return e.Node.GUID + uint64(e.Port)
}

// peers returns each node's linked ends by port number.
func (t *Topology) peers() [][]TopoEnd {
	peer := make([][]TopoEnd, len(t.Nodes))
	for i, n := range t.Nodes {
		peer[i] = make([]TopoEnd, n.NumPorts+1)
	}
	for _, l := range t.Links {
		peer[l.A.Node.idx][l.A.Port] = l.B
		peer[l.B.Node.idx][l.B.Port] = l.A
	}
	return peer
}

// reach returns the nodes directed routes from the SM's port reach: every
// node linked to a reached switch (a CA forwards nothing).
func (t *Topology) reach(sm *TopoNode, smPort int, peer [][]TopoEnd) []bool {
	reached := make([]bool, len(t.Nodes))
	reached[sm.idx] = true
	var queue []*TopoNode
	if sm.Type == Switch {
		queue = append(queue, sm)
	} else if r := peer[sm.idx][smPort].Node; !reached[r.idx] {
		reached[r.idx] = true
		if r.Type == Switch {
			queue = append(queue, r)
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, e := range peer[n.idx] {
			if e.Node == nil || reached[e.Node.idx] {
				continue
			}
			reached[e.Node.idx] = true
			if e.Node.Type == Switch {
				queue = append(queue, e.Node)
			}
		}
	}
	return reached
}

// assignLIDs gives the reached ports their base LIDs.
func (t *Topology) assignLIDs(sm *TopoNode, o DesignOptions, peer [][]TopoEnd, reached []bool, res *DesignResult) (map[endKey]int, error) {
	type lidPortRef struct {
		key  endKey
		guid uint64
	}
	var ports []lidPortRef
	smKey := endKey{sm.idx, lidPort(TopoEnd{sm, o.SMPort})}
	for _, n := range t.Nodes {
		if !reached[n.idx] {
			continue
		}
		if n.Type == Switch {
			ports = append(ports, lidPortRef{endKey{n.idx, 0}, portGUID(TopoEnd{n, 0})})
			continue
		}
		for p := 1; p <= n.NumPorts; p++ {
			r := peer[n.idx][p].Node
			if r == nil || !reached[r.idx] || (r.Type != Switch && n != sm && r != sm) {
				continue
			}
			if n == sm && r.Type != Switch && p != o.SMPort {
				continue
			}
			ports = append(ports, lidPortRef{endKey{n.idx, p}, portGUID(TopoEnd{n, p})})
		}
	}
	sort.SliceStable(ports, func(i, j int) bool {
		a, b := ports[i], ports[j]
		if (a.key == smKey) != (b.key == smKey) {
			return a.key == smKey
		}
		return bits.ReverseBytes64(a.guid) < bits.ReverseBytes64(b.guid)
	})
	step := 1 << o.LMC
	lids := make(map[endKey]int, len(ports))
	next := 1
	for _, p := range ports {
		if next+step-1 > 0xbfff {
			return nil, fmt.Errorf("%w: %d ports with LMC %d need more than the 49151 unicast LIDs", ErrModel, len(ports), o.LMC)
		}
		lids[p.key] = next
		res.MaxLID = next + step - 1
		next += step
	}
	res.Ports = len(ports)
	return lids, nil
}

// designRoots returns the Up/Down roots: the given ones in the model, or
// those the min-hop histograms show.
func (f *Fabric) designRoots(guids []uint64, res *DesignResult) []*Node {
	if len(guids) == 0 {
		res.RootsSearched = true
		return f.rootsByMinHop(newTopo(f))
	}
	var roots []*Node
	for _, g := range guids {
		if n := f.Node(g); n != nil && n.Type == Switch {
			roots = append(roots, n)
		} else {
			res.MissingRoots = append(res.MissingRoots, g)
		}
	}
	return roots
}
