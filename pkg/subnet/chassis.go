package subnet

import (
	"fmt"
	"math"
	"strings"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// A chassis is a switch system of several boards (a Voltaire ISR or
// Mellanox director): its nodes share a chassis GUID or are found by their
// boards' device IDs and links. This file classifies nodes (boards, slot
// records, chassis GUIDs); chassis_group.go groups them.

// MaxSpines and MaxLines are the number of spine and line slots of a
// chassis (ibnd_chassis_t's SPINES_MAX_NUM and LINES_MAX_NUM).
const (
	MaxSpines = 18
	MaxLines  = 36
)

// Chassis is a chassis found by grouping: a Voltaire chassis built around
// its spines, or nodes sharing a chassis GUID (libibnetdisc's
// ibnd_chassis_t).
type Chassis struct {
	// Num is the chassis number, from 1. Like libibnetdisc's unsigned
	// char it wraps after 255; chassis left at 0 are not returned.
	Num int
	// GUID is the chassis GUID: the GUID of the first spine less one for
	// a Voltaire chassis, the nodes' SystemImageGUID for others (with the
	// slot byte masked for Topspin and Xsigo).
	GUID rdma.GUID
	// Nodes are the nodes grouped by chassis GUID that had no slot of
	// their own, in libibnetdisc's next_chassis_node order (that is,
	// the order of discovery).
	Nodes []*Node
	// Spines and Lines hold the nodes in the spine and line slots by
	// index: for Voltaire, from the slot and chip numbers (the CAs and
	// routers on spine ports are in Lines too); for Mellanox, the slot
	// number. Index 0 is not used.
	Spines [MaxSpines + 1]*Node
	Lines  [MaxLines + 1]*Node

	// count is nodecount, an unsigned char too.
	count uint8
	// Mellanox slot numbers reach one past the arrays: spinenode[19] is
	// linenode[0] in ibnd_chassis_t, and linenode[37] falls in the
	// allocation's slack. Nodes there have the chassis but are listed
	// nowhere, and slot 0 is never listed either.
	spine0, line0, line37 *Node
}

// spineSlot returns the place of spinenode[i], nil when there is none.
func (c *Chassis) spineSlot(i int) **Node {
	switch {
	case i == 0:
		return &c.spine0
	case i == MaxSpines+1:
		return c.lineSlot(0)
	case i > 0 && i <= MaxSpines:
		return &c.Spines[i]
	}
	return nil
}

// lineSlot returns the place of linenode[i], nil when there is none.
func (c *Chassis) lineSlot(i int) **Node {
	switch {
	case i == 0:
		return &c.line0
	case i == MaxLines+1:
		return &c.line37
	case i > 0 && i <= MaxLines:
		return &c.Lines[i]
	}
	return nil
}

// ChassisGUID returns the GUID of the first chassis numbered num in the
// list, 0 when there is none (ibnd_get_chassis_guid).
func ChassisGUID(list []*Chassis, num int) rdma.GUID {
	for _, c := range list {
		if c.Num == num && num != 0 {
			return c.GUID
		}
	}
	return 0
}

// Vendor IDs of chassis based systems (chassis.h).
const (
	vendorVoltaire  = 0x8f1
	vendorMellanox  = 0x2c9
	vendorTopspin   = 0x5ad // Cisco
	vendorInfiniCon = 0x66a
	vendorXsigo     = 0x1397
)

// Device IDs (chassis.h).
const (
	devIBFCRouter  = 0x5a00
	devIBIPRouter  = 0x5a01
	devSFB12       = 0x5a08
	devSLB24       = 0x5a09
	devSFB4        = 0x5a0b
	devSLB8        = 0x5a0d
	devSFB12DDR    = 0x5a32
	devSFB4DDR     = 0x5a33
	devSLB24DDR    = 0x5a34
	devSFB2012     = 0x5a37
	devSLB2024     = 0x5a38
	devSFB2004     = 0x5a40
	devSRB2004     = 0x5a42
	devSLB4018     = 0x5a5b
	devSFB4700     = 0x5a5c
	devSFB4700X2   = 0x5a5d
	devSFB4200     = 0x5a60
	devMellanoxIS4 = 0xbd36
)

// board is the kind of Voltaire chassis board a device ID names; chassis.c
// looks at the device ID alone, whatever the vendor.
type board uint8

const (
	noBoard board = iota
	sFB4          // ISR9096 spine (sFB-4, sFB-4 DDR)
	sFB12         // ISR9288 spine (sFB-12, sFB-12 DDR)
	sFB2004
	sFB2012
	sFB4700
	sFB4700X2
	sFB4200
	sLB24 // sLB-24, sLB-24 DDR, sRB-2004
	sLB8
	sLB2024
	sLB4018
)

// boardOf returns the board the node's device ID names.
func boardOf(n *Node) board {
	switch n.Info.DeviceID {
	case devSFB4, devSFB4DDR:
		return sFB4
	case devSFB12, devSFB12DDR:
		return sFB12
	case devSFB2004:
		return sFB2004
	case devSFB2012:
		return sFB2012
	case devSFB4700:
		return sFB4700
	case devSFB4700X2:
		return sFB4700X2
	case devSFB4200:
		return sFB4200
	case devSLB24, devSLB24DDR, devSRB2004:
		return sLB24
	case devSLB8:
		return sLB8
	case devSLB2024:
		return sLB2024
	case devSLB4018:
		return sLB4018
	}
	return noBoard
}

func (b board) spine() bool { return b >= sFB4 && b <= sFB4200 }
func (b board) line() bool  { return b >= sLB24 && b <= sLB4018 }

// isVoltaireRouter reports whether the device ID is a Voltaire IB-FC or
// IB-IP router (is_router).
func isVoltaireRouter(n *Node) bool {
	return n.Info.DeviceID == devIBFCRouter || n.Info.DeviceID == devIBIPRouter
}

// chassisType is ibnd_chassis_type.
type chassisType uint8

const (
	unresolvedCT chassisType = iota
	isr9288
	isr9096
	isr2012
	isr2004
	isr4700
	isr4200
)

var chassisTypeNames = [...]string{"", "ISR9288", "ISR9096", "ISR2012", "ISR2004", "ISR4700", "ISR4200"}

// slotKind is ibnd_chassis_slot_type.
type slotKind uint8

const (
	unresolvedSlot slotKind = iota
	lineSlot
	spineSlot
	srbdSlot
)

var slotKindNames = [...]string{"", "Line", "Spine", "SRBD"}

// slotRecord is what libibnetdisc keeps of a node's place in a chassis:
// ibnd_node_t's ch_* fields and chassis.
type slotRecord struct {
	found   bool // ch_found
	typ     chassisType
	typeStr string // ch_type_str, Mellanox's system type
	slot    slotKind
	slotNum uint8
	chip    uint8 // ch_anafanum
	chassis *Chassis
}

// Tables indexed by a port number, from chassis.c; 0 past the last port
// of a board.
var (
	// A line's slot and chip from the spine port it reaches, by spine:
	// sFB-4 (ISR9096, ISR2004), sFB-12 (ISR9288, ISR2012), sFB-4700,
	// sFB-4700X2 and sFB-4200 (line_slot_2_sfb4 and the like).
	lineSlotSFB4    = [37]uint8{0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4}
	lineChipSFB4    = [37]uint8{0, 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}
	lineSlotSFB12   = [37]uint8{0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12}
	lineChipSFB12   = [37]uint8{0, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2}
	lineSlotSFB18   = [37]uint8{0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17, 17, 18, 18}
	lineChipSFB18   = [37]uint8{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	lineSlotSFB18X2 = [37]uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}
	lineChipSFB18X2 = [37]uint8{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	lineSlotSFB4200 = [37]uint8{0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8, 9, 9, 9, 9}
	lineChipSFB4200 = [37]uint8{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	routerChipSFB4  = [37]uint8{0, 3, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1} // ipr_slot_2_sfb4_port

	// A spine's slot and chip from the line port it reaches, by spine
	// (spine12_slot_2_slb and the like).
	spineSlotSFB12   = [37]uint8{0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4}
	spineChipSFB12   = [37]uint8{0, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}
	spineSlotSFB4    = [37]uint8{0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4}
	spineChipSFB4    = [37]uint8{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	spineSlotSFB18   = [37]uint8{0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9}
	spineChipSFB18   = [37]uint8{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	spineChipSFB18X2 = [37]uint8{0, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1}
	spineSlotSFB4200 = [37]uint8{0, 1, 1, 1, 1, 0, 0, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4}
	spineChipSFB4200 = [37]uint8{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}

	// Front panel port numbers by chip and port (int2ext_map_slb24 and
	// the like).
	extPortSLB24     = [2][25]uint8{{12: 0, 6, 5, 4, 18, 17, 16, 1, 2, 3, 13, 14, 15}, {12: 0, 12, 11, 10, 24, 23, 22, 7, 8, 9, 19, 20, 21}}
	extPortSLB8      = [2][25]uint8{{12: 0, 2, 2, 2, 6, 6, 6, 1, 1, 1, 5, 5, 5}, {12: 0, 4, 4, 4, 8, 8, 8, 3, 3, 3, 7, 7, 7}}
	extPortSLB2024   = [2][25]uint8{{12: 0, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}, {12: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}
	extPortSLB4018   = [37]uint8{18: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}
	extPortSFB4700X2 = [2][37]uint8{{18: 0, 7, 7, 7, 8, 8, 8, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12}, {18: 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6}}
)

// byPort returns table[i], 0 past its end (where chassis.c would read beyond
// its tables).
func byPort(table *[37]uint8, i int) uint8 {
	if i < 0 || i >= len(table) {
		return 0
	}
	return table[i]
}

// sfbSlot places spine n from the line port its first switch link reaches
// (get_sfb_slot).
func sfbSlot(s *slotRecord, n *Node, linePort *Port) {
	s.slot = spineSlot
	pn := linePort.Num
	switch boardOf(n) {
	case sFB4:
		s.typ, s.slotNum, s.chip = isr9096, byPort(&spineSlotSFB4, pn), byPort(&spineChipSFB4, pn)
	case sFB12:
		s.typ, s.slotNum, s.chip = isr9288, byPort(&spineSlotSFB12, pn), byPort(&spineChipSFB12, pn)
	case sFB2012:
		s.typ, s.slotNum, s.chip = isr2012, byPort(&spineSlotSFB12, pn), byPort(&spineChipSFB12, pn)
	case sFB2004:
		s.typ, s.slotNum, s.chip = isr2004, byPort(&spineSlotSFB4, pn), byPort(&spineChipSFB4, pn)
	case sFB4700:
		s.typ, s.slotNum, s.chip = isr4700, byPort(&spineSlotSFB18, pn), byPort(&spineChipSFB18, pn)
	case sFB4700X2:
		s.typ, s.slotNum, s.chip = isr4700, byPort(&spineSlotSFB18, pn), byPort(&spineChipSFB18X2, pn)
	case sFB4200:
		s.typ, s.slotNum, s.chip = isr4200, byPort(&spineSlotSFB4200, pn), byPort(&spineChipSFB4200, pn)
	}
}

// routerSlot places a node (a router, or any CA or router on a spine port)
// from the spine port it is on (get_router_slot). The ISR9288 and ISR2012
// chip is libibnetdisc's guess from the spine's GUID.
func routerSlot(s *slotRecord, spinePort *Port) {
	s.found = true
	s.slot = srbdSlot
	spine, pn := spinePort.Node, spinePort.Num
	guess := func() uint8 {
		switch spine.GUID % 4 {
		case 3:
			return 1
		case 1:
			return 3
		}
		return 2
	}
	switch boardOf(spine) {
	case sFB4:
		s.typ, s.slotNum, s.chip = isr9096, byPort(&lineSlotSFB4, pn), byPort(&routerChipSFB4, pn)
	case sFB12:
		s.typ, s.slotNum, s.chip = isr9288, byPort(&lineSlotSFB12, pn), guess()
	case sFB2012:
		s.typ, s.slotNum, s.chip = isr2012, byPort(&lineSlotSFB12, pn), guess()
	case sFB2004:
		s.typ, s.slotNum, s.chip = isr2004, byPort(&lineSlotSFB4, pn), byPort(&routerChipSFB4, pn)
	}
}

// slbSlot places a line from the spine port its first link reaches
// (get_slb_slot).
func slbSlot(s *slotRecord, spinePort *Port) {
	s.slot = lineSlot
	pn := spinePort.Num
	switch boardOf(spinePort.Node) {
	case sFB4:
		s.typ, s.slotNum, s.chip = isr9096, byPort(&lineSlotSFB4, pn), byPort(&lineChipSFB4, pn)
	case sFB12:
		s.typ, s.slotNum, s.chip = isr9288, byPort(&lineSlotSFB12, pn), byPort(&lineChipSFB12, pn)
	case sFB2012:
		s.typ, s.slotNum, s.chip = isr2012, byPort(&lineSlotSFB12, pn), byPort(&lineChipSFB12, pn)
	case sFB2004:
		s.typ, s.slotNum, s.chip = isr2004, byPort(&lineSlotSFB4, pn), byPort(&lineChipSFB4, pn)
	case sFB4700:
		s.typ, s.slotNum, s.chip = isr4700, byPort(&lineSlotSFB18, pn), byPort(&lineChipSFB18, pn)
	case sFB4700X2:
		s.typ, s.slotNum, s.chip = isr4700, byPort(&lineSlotSFB18X2, pn), byPort(&lineChipSFB18X2, pn)
	case sFB4200:
		s.typ, s.slotNum, s.chip = isr4200, byPort(&lineSlotSFB4200, pn), byPort(&lineChipSFB4200, pn)
	}
}

// spinePorts and linePorts return the last port chassis.c follows inside
// the chassis from a node it takes for a spine or a line: ports 19-36 of an
// sFB-4700X2 and of an sLB-4018, and ports 13-24 of the other lines, are
// front panel ports.
func spinePorts(n *Node) int {
	if boardOf(n) == sFB4700X2 {
		return min(n.NumPorts, 18)
	}
	return n.NumPorts
}

func linePorts(n *Node) int {
	if boardOf(n) == sLB4018 {
		return min(n.NumPorts, 18)
	}
	return min(n.NumPorts, 12)
}

// eachLink calls fn with n's ports 1..last that have a link, in order, until
// fn returns false.
func eachLink(n *Node, last int, fn func(p *Port) bool) {
	for num := 1; num <= last; num++ {
		if p := n.Port(num); p != nil && p.Remote != nil && !fn(p) {
			return
		}
	}
}

// voltaireRecord is the slot record fill_voltaire_chassis_record gives the
// Voltaire switch n. It leaves out what it does to the CAs and routers on
// a spine's ports (see spineGuests).
func voltaireRecord(n *Node) slotRecord {
	s := slotRecord{found: true}
	switch b := boardOf(n); {
	case isVoltaireRouter(n):
		// Every spine port places it again. (chassis.c does not
		// check for a link; it would crash on a port without one.)
		eachLink(n, n.NumPorts, func(p *Port) bool {
			if boardOf(p.Remote.Node).spine() {
				routerSlot(&s, p.Remote)
			}
			return true
		})
	case b.spine():
		// The first switch found is taken to be a line.
		eachLink(n, spinePorts(n), func(p *Port) bool {
			if p.Remote.Node.Type == mad.NodeTypeSwitch && s.typ == unresolvedCT {
				sfbSlot(&s, n, p.Remote)
			}
			return true
		})
	case b.line():
		// The first node found is taken to be a spine.
		eachLink(n, linePorts(n), func(p *Port) bool {
			slbSlot(&s, p.Remote)
			return false
		})
	}
	return s
}

// spineGuests calls fn with the ports of Voltaire spine n, in order, that
// lead to a CA or router: the nodes fill_voltaire_chassis_record places
// with get_router_slot when nothing placed them before.
func spineGuests(n *Node, fn func(spinePort *Port)) {
	if isVoltaireRouter(n) || !boardOf(n).spine() {
		return
	}
	eachLink(n, spinePorts(n), func(p *Port) bool {
		if p.Remote.Node.Type != mad.NodeTypeSwitch {
			fn(p)
		}
		return true
	})
}

// voltaireExtPort returns the front panel number of port num of Voltaire
// switch n with record s, 0 for none (voltaire_portmap).
func voltaireExtPort(n *Node, s *slotRecord, num int) int {
	b := boardOf(n)
	if !s.found || (!b.line() && b != sFB4700X2) {
		return 0
	}
	if b == sLB4018 || b == sFB4700X2 {
		if num < 19 || num > 36 {
			return 0
		}
	} else if num < 13 || num > 24 {
		return 0
	}
	if s.chip < 1 || s.chip > 2 {
		return 0
	}
	chip := s.chip - 1
	switch b {
	case sLB24:
		return int(extPortSLB24[chip][num])
	case sLB2024:
		return int(extPortSLB2024[chip][num])
	case sLB4018:
		return int(extPortSLB4018[num])
	case sFB4700X2:
		return int(extPortSFB4700X2[chip][num])
	}
	return int(extPortSLB8[chip][num])
}

// mellanoxRecord is the slot record fill_mellanox_chassis_record gives the
// Mellanox switch n, from a NodeDescription of the form
// "MF0;<system name>:<system type>/<slot>[:<board type>]/U<chip>" where
// the slot is L<n> (a line) or S<n> (a spine). ext tells whether the line's
// ports 1-18 are its front panel ports 1-18.
func mellanoxRecord(n *Node) (s slotRecord, ext bool) {
	if n.Info.DeviceID != devMellanoxIS4 {
		return s, false
	}
	rest, ok := strings.CutPrefix(n.Desc, "MF0;")
	if !ok {
		return s, false
	}
	if _, rest, ok = strings.Cut(rest, ":"); !ok { // system name
		return s, false
	}
	sysType, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return s, false
	}
	i := strings.IndexAny(rest, "/:")
	if i < 0 {
		return s, false
	}
	slot, sep, rest := rest[:i], rest[i], rest[i+1:]
	if sep == ':' { // board type
		if _, rest, ok = strings.Cut(rest, "/"); !ok {
			return s, false
		}
	}
	chip, ok := strings.CutPrefix(rest, "U")
	if !ok {
		return s, false
	}
	s.chip = uint8(cAtoi(chip))
	switch {
	case strings.HasPrefix(slot, "L"):
		s.slot = lineSlot
	case strings.HasPrefix(slot, "S"):
		s.slot = spineSlot
	default:
		return s, false
	}
	s.found = true
	s.slotNum = uint8(cAtoi(slot[1:]))
	if (s.slot == lineSlot && s.slotNum > MaxLines+1) || (s.slot == spineSlot && s.slotNum > MaxSpines+1) {
		s.slotNum = 0
		return s, false
	}
	s.typeStr = sysType[:min(len(sysType), 19)] // ch_type_str holds 19 characters
	return s, s.slot == lineSlot
}

// cAtoi converts as C's atoi (strtol) does: leading white space, a sign and
// the digits up to the first other character; values out of range stick at
// the limits.
func cAtoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	var v uint64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if v > (limit-d)/10 {
			v = limit
			break
		}
		v = v*10 + d
	}
	if neg {
		return -int64(v) // MinInt64 stays itself
	}
	return int64(v)
}

// localRecord is the slot record libibnetdisc gives n, worked out from n
// and its links alone. It is exact for switches. A CA or router gets its
// record from the first Voltaire spine that reaches it in the switch list;
// when several spines reach it, localRecord takes the one on its lowest
// port.
func localRecord(n *Node) slotRecord {
	if n.Type == mad.NodeTypeSwitch {
		switch n.Info.VendorID {
		case vendorVoltaire:
			return voltaireRecord(n)
		case vendorMellanox:
			s, _ := mellanoxRecord(n)
			return s
		}
		return slotRecord{}
	}
	var s slotRecord
	for num := 1; num <= n.NumPorts; num++ {
		p := n.Port(num)
		if p == nil || p.Remote == nil {
			continue
		}
		spine := p.Remote.Node
		if spine.Type != mad.NodeTypeSwitch || spine.Info.VendorID != vendorVoltaire {
			continue
		}
		// The spine's lowest port that reaches n.
		spineGuests(spine, func(sp *Port) {
			if !s.found && sp.Remote.Node == n {
				routerSlot(&s, sp)
			}
		})
		if s.found {
			break
		}
	}
	return s
}

// ChassisType returns the chassis type libibnetdisc gives the node
// (ibnd_get_chassis_type): "ISR9288" and the like for a Voltaire node, the
// system type of its NodeDescription for a Mellanox chassis switch, "" for
// none. It is "" for a node that is in no chassis, so it means something
// only after GroupChassis.
func (n *Node) ChassisType() string {
	if n.Chassis == 0 {
		return ""
	}
	switch n.Info.VendorID {
	case vendorVoltaire:
		s := localRecord(n)
		if s.typ == unresolvedCT || int(s.typ) >= len(chassisTypeNames) {
			return ""
		}
		return chassisTypeNames[s.typ]
	case vendorMellanox:
		return localRecord(n).typeStr
	}
	return ""
}

// ChassisSlot returns the slot libibnetdisc gives a Voltaire or Mellanox
// node in its chassis, as "Line 3 Chip 1", "Spine 2 Chip 1" or
// "SRBD 4 Chip 2" (ibnd_get_chassis_slot_str), "" for none. It is "" for a
// node that is in no chassis, so it means something only after
// GroupChassis.
func (n *Node) ChassisSlot() string {
	if v := n.Info.VendorID; v != vendorVoltaire && v != vendorMellanox {
		return ""
	}
	if n.Chassis == 0 {
		return ""
	}
	s := localRecord(n)
	if s.slot == unresolvedSlot || int(s.slot) >= len(slotKindNames) {
		return ""
	}
	return fmt.Sprintf("%s %d Chip %d", slotKindNames[s.slot], s.slotNum, s.chip)
}

// IsXsigoGUID reports whether the GUID is one of Xsigo's
// (ibnd_is_xsigo_guid).
func IsXsigoGUID(g rdma.GUID) bool { return g&0xffffff0000000000 == 0x0013970000000000 }

// IsXsigoHCA reports whether the GUID is that of a Xsigo HCA
// (ibnd_is_xsigo_hca).
func IsXsigoHCA(g rdma.GUID) bool { return g&0xffffffff00000000 == 0x0013970200000000 }

// IsXsigoTCA reports whether the GUID is that of a Xsigo TCA
// (ibnd_is_xsigo_tca).
func IsXsigoTCA(g rdma.GUID) bool { return g&0xffffffff00000000 == 0x0013970300000000 }

func isXsigoSwitch(g rdma.GUID) bool  { return g&0xffffffff00000000 == 0x0013970100000000 }
func isXsigoLeafOne(g rdma.GUID) bool { return g&0xffffffffff000000 == 0x0013970102000000 }

// slotByteMask clears byte 4 of a Topspin or Xsigo SystemImageGUID, the
// slot (location ID) or port type.
const slotByteMask = 0xffffffff00ffffff

// chassisGUIDOf returns the chassis GUID nodes are grouped by
// (get_chassisguid).
func chassisGUIDOf(n *Node) rdma.GUID {
	sys := n.Info.SystemImageGUID
	switch v := n.Info.VendorID; {
	case v == vendorTopspin || v == vendorInfiniCon:
		return sys & slotByteMask
	case v == vendorXsigo || IsXsigoGUID(sys):
		return xsigoChassisGUID(n)
	}
	return sys
}

// xsigoChassisGUID is xsigo_chassisguid: a Xsigo CA on the first leaf of
// a chassis takes that leaf's chassis GUID.
func xsigoChassisGUID(n *Node) rdma.GUID {
	sys := n.Info.SystemImageGUID
	if !IsXsigoHCA(sys) && !IsXsigoTCA(sys) {
		if isXsigoSwitch(sys) {
			return sys & slotByteMask
		}
		return sys
	}
	p := n.Port(1)
	if p == nil {
		return 0
	}
	if p.Remote == nil {
		return sys
	}
	if r := p.Remote.Node.Info.SystemImageGUID; isXsigoLeafOne(r) {
		return r & slotByteMask
	}
	return sys
}
