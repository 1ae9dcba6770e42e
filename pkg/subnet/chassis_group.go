package subnet

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// Chassis grouping follows libibnetdisc (rdma-core 44, chassis.c,
// group_nodes), which every infiniband-diags tool runs after discovery and
// ibnetdiscover -g prints:
//
//  1. Every Voltaire switch (in the switch list, newest first) gets a slot
//     record from its links and device IDs, which also places the CAs and
//     routers on its spine ports and numbers its ports' external ports;
//     every Mellanox IS4 switch gets one from its NodeDescription.
//  2. Each Voltaire spine not yet in a numbered chassis starts a chassis:
//     the lines and routers on its ports, the spines on their ports, and
//     so on for two rounds.
//  3. The other nodes with a SystemImageGUID (all nodes, newest first) are
//     grouped by chassis GUID; a group of more than one node is a chassis,
//     numbered when its first node is met.
//
// The C keeps the chassis number in an unsigned char; Num does the same.

// ChassisError is the internal error libibnetdisc's grouping stops at (and
// with it the whole discovery): a node of a Voltaire chassis whose slot
// index is out of range.
type ChassisError struct {
	// Node is the node being put in the chassis.
	Node *Node
	// Spine tells a spine slot from a line (or router) slot.
	Spine bool
	// Index is the slot index get_spine_index or get_line_index gave.
	Index int
}

// Error describes the node and its index.
func (e *ChassisError) Error() string {
	kind, limit := "line", MaxLines
	if e.Spine {
		kind, limit = "spine", MaxSpines
	}
	return fmt.Sprintf("chassis grouping: node %s %q: %s index %d not in 1..%d", e.Node.GUID, e.Node.Desc, kind,
		e.Index, limit)
}

// grouping is one run of group_nodes.
type grouping struct {
	rec  map[*Node]*slotRecord
	list []*Chassis
	// listed is whether fabric->chassis is set: the search by GUID
	// finds nothing before the first chassis grouped by GUID is made.
	listed bool
	// byGUID is the first chassis of the list with each GUID.
	byGUID map[rdma.GUID]*Chassis
	count  int // chassis numbered so far
}

// record returns the node's slot record.
func (g *grouping) record(n *Node) *slotRecord {
	s := g.rec[n]
	if s == nil {
		s = new(slotRecord)
		g.rec[n] = s
	}
	return s
}

// add appends a chassis to the list (add_chassis).
func (g *grouping) add() *Chassis {
	c := new(Chassis)
	g.list = append(g.list, c)
	return c
}

// number gives c the next chassis number.
func (g *grouping) number(c *Chassis) {
	g.count++
	c.Num = int(uint8(g.count))
}

// index notes c's GUID for the search by GUID.
func (g *grouping) index(c *Chassis) {
	if _, ok := g.byGUID[c.GUID]; !ok {
		g.byGUID[c.GUID] = c
	}
}

// find returns the chassis of n's chassis GUID (find_chassisguid).
func (g *grouping) find(n *Node) *Chassis {
	if !g.listed {
		return nil
	}
	return g.byGUID[chassisGUIDOf(n)]
}

// GroupChassis groups the fabric's nodes into chassis as libibnetdisc
// does after discovery (group_nodes). It sets each node's Chassis (0 for
// none) and each port's ExtNum, and returns the chassis that have a
// number, in the order of libibnetdisc's chassis list. Where libibnetdisc
// fails (see GroupChassisErr), it returns nil and leaves every node
// outside chassis.
func (f *Fabric) GroupChassis() []*Chassis {
	list, err := f.GroupChassisErr()
	if err != nil {
		return nil
	}
	return list
}

// GroupChassisErr is GroupChassis that reports libibnetdisc's internal
// error, a *ChassisError, on which libibnetdisc fails the whole discovery
// (ibnetdiscover then says "discover failed"); it then returns no chassis
// and leaves every node outside chassis.
func (f *Fabric) GroupChassisErr() ([]*Chassis, error) {
	for _, n := range f.Nodes {
		n.Chassis = 0
		for _, p := range n.Ports {
			if p != nil {
				p.ExtNum = 0
			}
		}
	}
	g := &grouping{rec: make(map[*Node]*slotRecord), byGUID: make(map[rdma.GUID]*Chassis)}
	switches := f.ByType(mad.NodeTypeSwitch)
	all := f.All()

	// Slot records from links and NodeDescriptions.
	for _, n := range switches {
		switch n.Info.VendorID {
		case vendorVoltaire:
			g.fillVoltaire(n)
		case vendorMellanox:
			g.fillMellanox(n)
		}
	}

	// Voltaire chassis, around each spine not in one yet.
	for _, n := range switches {
		s := g.record(n)
		if n.Info.VendorID != vendorVoltaire || !s.found || (s.chassis != nil && s.chassis.Num != 0) ||
			!boardOf(n).spine() {
			continue
		}
		c := g.add()
		g.number(c)
		if err := g.build(n, c); err != nil {
			return nil, err
		}
		g.index(c)
	}

	// Other nodes, by chassis GUID: count them.
	for _, n := range all {
		if n.Info.VendorID == vendorVoltaire || n.Info.SystemImageGUID == 0 {
			continue
		}
		if c := g.find(n); c != nil {
			c.count++
			continue
		}
		c := g.add()
		c.GUID = chassisGUIDOf(n)
		c.count = 1
		g.index(c)
		g.listed = true
	}
	// Then those of a chassis of more than one node join it.
	for _, n := range all {
		if n.Info.VendorID == vendorVoltaire || n.Info.SystemImageGUID == 0 {
			continue
		}
		c := g.find(n)
		if c == nil || c.count <= 1 {
			continue
		}
		if c.Num == 0 {
			g.number(c)
		}
		s := g.record(n)
		switch {
		case !s.found:
			s.found = true
			s.chassis = c
			c.Nodes = append(c.Nodes, n)
		case n.Info.VendorID == vendorMellanox:
			g.insertMellanox(n, c)
		}
	}

	for n, s := range g.rec {
		if s.chassis != nil {
			n.Chassis = s.chassis.Num
		}
	}
	var out []*Chassis
	for _, c := range g.list {
		// next_chassis_node runs from the last node added.
		for i, j := 0, len(c.Nodes)-1; i < j; i, j = i+1, j-1 {
			c.Nodes[i], c.Nodes[j] = c.Nodes[j], c.Nodes[i]
		}
		if c.Num != 0 {
			out = append(out, c)
		}
	}
	return out, nil
}

// fillVoltaire gives Voltaire switch n its slot record, places the CAs and
// routers on its spine ports that nothing placed before, and numbers its
// front panel ports (fill_voltaire_chassis_record).
func (g *grouping) fillVoltaire(n *Node) {
	s := g.record(n)
	if s.found {
		return
	}
	*s = voltaireRecord(n)
	spineGuests(n, func(sp *Port) {
		if r := g.record(sp.Remote.Node); !r.found {
			routerSlot(r, sp)
		}
	})
	for num := 1; num <= n.NumPorts; num++ {
		if p := n.Port(num); p != nil {
			p.ExtNum = voltaireExtPort(n, s, num)
		}
	}
}

// fillMellanox gives Mellanox switch n its slot record and a line's front
// panel port numbers (fill_mellanox_chassis_record).
func (g *grouping) fillMellanox(n *Node) {
	s := g.record(n)
	if s.found {
		return
	}
	rec, ext := mellanoxRecord(n)
	*s = rec
	if !ext {
		return
	}
	for num := 1; num <= n.NumPorts && num <= 18; num++ {
		if p := n.Port(num); p != nil {
			p.ExtNum = num
		}
	}
}

// insertMellanox puts a Mellanox switch in its slot of c, unless the slot
// is taken (insert_mellanox_line_and_spine).
func (g *grouping) insertMellanox(n *Node, c *Chassis) {
	s := g.record(n)
	var place **Node
	switch s.slot {
	case lineSlot:
		place = c.lineSlot(int(s.slotNum))
	case spineSlot:
		place = c.spineSlot(int(s.slotNum))
	}
	if place == nil || *place != nil {
		return
	}
	*place = n
	s.chassis = c
}

// lineIndex is get_line_index.
func (g *grouping) lineIndex(n *Node) (int, error) {
	s := g.record(n)
	i := 3*(int(s.slotNum)-1) + int(s.chip)
	if boardOf(n) == sLB4018 {
		i = int(s.slotNum)
	}
	if i < 1 || i > MaxLines {
		return 0, &ChassisError{Node: n, Index: i}
	}
	return i, nil
}

// spineIndex is get_spine_index.
func (g *grouping) spineIndex(n *Node) (int, error) {
	s := g.record(n)
	var i int
	switch boardOf(n) {
	case sFB12, sFB2012:
		i = 3*(int(s.slotNum)-1) + int(s.chip)
	case sFB4700, sFB4700X2:
		i = 2*(int(s.slotNum)-1) + int(s.chip)
	default:
		i = int(s.slotNum)
	}
	if i < 1 || i > MaxSpines {
		return 0, &ChassisError{Node: n, Spine: true, Index: i}
	}
	return i, nil
}

// insertLine puts a line or router in its slot of c, unless the slot is
// taken (insert_line_router).
func (g *grouping) insertLine(n *Node, c *Chassis) error {
	i, err := g.lineIndex(n)
	if err != nil {
		return err
	}
	if c.Lines[i] == nil {
		c.Lines[i] = n
		g.record(n).chassis = c
	}
	return nil
}

// insertSpine puts a spine in its slot of c, unless the slot is taken
// (insert_spine).
func (g *grouping) insertSpine(n *Node, c *Chassis) error {
	i, err := g.spineIndex(n)
	if err != nil {
		return err
	}
	if c.Spines[i] == nil {
		c.Spines[i] = n
		g.record(n).chassis = c
	}
	return nil
}

// linked calls fn with the nodes with a slot record on n's ports 1..last,
// in port order, until fn fails.
func (g *grouping) linked(n *Node, last int, fn func(*Node) error) error {
	var err error
	eachLink(n, last, func(p *Port) bool {
		if r := p.Remote.Node; g.record(r).found {
			err = fn(r)
		}
		return err == nil
	})
	return err
}

// build fills chassis c from spine n (build_chassis).
func (g *grouping) build(n *Node, c *Chassis) error {
	if err := g.insertSpine(n, c); err != nil {
		return err
	}
	// chassis.c ignores the errors of this first round.
	g.linked(n, spinePorts(n), func(r *Node) error {
		g.insertLine(r, c)
		return nil
	})
	// Two rounds of lines' spines and spines' lines and routers: a
	// router is only on some spines, and a chassis may be reached in
	// pieces.
	for range 2 {
		if err := g.linesCatchSpines(c); err != nil {
			return err
		}
		if err := g.spinesCatchLines(c); err != nil {
			return err
		}
	}
	// Consistent with the Voltaire SM: the first spine's GUID less one.
	for _, sp := range c.Spines {
		if sp != nil {
			c.GUID = sp.GUID - 1
			break
		}
	}
	return nil
}

// linesCatchSpines puts the spines on c's lines' ports in c
// (pass_on_lines_catch_spines).
func (g *grouping) linesCatchSpines(c *Chassis) error {
	for _, n := range c.Lines {
		if n == nil || !boardOf(n).line() { // empty, or a router
			continue
		}
		if err := g.linked(n, linePorts(n), func(r *Node) error { return g.insertSpine(r, c) }); err != nil {
			return err
		}
	}
	return nil
}

// spinesCatchLines puts the lines and routers on c's spines' ports in c
// (pass_on_spines_catch_lines).
func (g *grouping) spinesCatchLines(c *Chassis) error {
	for _, n := range c.Spines {
		if n == nil {
			continue
		}
		if err := g.linked(n, spinePorts(n), func(r *Node) error { return g.insertLine(r, c) }); err != nil {
			return err
		}
	}
	return nil
}
