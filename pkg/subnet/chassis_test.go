package subnet

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// chSpec is a node of a hand made fabric. The specs of a fabric are in the
// order of discovery: the last one is the newest, the first that
// libibnetdisc's node and switch lists hold.
type chSpec struct {
	desc   string
	typ    mad.NodeType
	ports  int
	guid   rdma.GUID
	vendor uint32
	dev    uint16
	sys    rdma.GUID
}

// chWire is a link between port pa of node a and port pz of node z.
type chWire struct {
	a  string
	pa int
	z  string
	pz int
}

// chassisFabric makes a fabric of the nodes, every port of each present,
// and the links.
func chassisFabric(t *testing.T, specs []chSpec, wires []chWire) *Fabric {
	t.Helper()
	f := newFabric()
	byDesc := make(map[string]*Node)
	for _, s := range specs {
		n := &Node{GUID: s.guid, Type: s.typ, NumPorts: s.ports, Desc: s.desc,
			Info: mad.NodeInfo{NodeType: s.typ, NumPorts: uint8(s.ports), SystemImageGUID: s.sys,
				NodeGUID: s.guid, PortGUID: s.guid, DeviceID: s.dev, VendorID: s.vendor}}
		n.Ports = make([]*Port, s.ports+1)
		first := 1
		if s.typ == mad.NodeTypeSwitch {
			first = 0
		}
		for num := first; num <= s.ports; num++ {
			n.port(num)
		}
		if byDesc[s.desc] != nil {
			t.Fatalf("two nodes %q", s.desc)
		}
		byDesc[s.desc] = n
		f.Nodes = append(f.Nodes, n)
	}
	for _, w := range wires {
		a, z := byDesc[w.a], byDesc[w.z]
		if a == nil || z == nil || a.Port(w.pa) == nil || z.Port(w.pz) == nil {
			t.Fatalf("bad link %v", w)
		}
		link(a.Port(w.pa), z.Port(w.pz))
	}
	f.index()
	return f
}

// chassisView is what a test checks of a Chassis, nodes by description.
type chassisView struct {
	Num    int
	GUID   rdma.GUID
	Nodes  []string
	Spines map[int]string
	Lines  map[int]string
}

// nodeView is what a test checks of a node after grouping.
type nodeView struct {
	Chassis int
	Type    string
	Slot    string
	Ext     map[int]int // port: ExtNum, where not 0
}

func viewChassis(list []*Chassis) []chassisView {
	var out []chassisView
	for _, c := range list {
		v := chassisView{Num: c.Num, GUID: c.GUID, Spines: map[int]string{}, Lines: map[int]string{}}
		for _, n := range c.Nodes {
			v.Nodes = append(v.Nodes, n.Desc)
		}
		for i, n := range c.Spines {
			if n != nil {
				v.Spines[i] = n.Desc
			}
		}
		for i, n := range c.Lines {
			if n != nil {
				v.Lines[i] = n.Desc
			}
		}
		out = append(out, v)
	}
	return out
}

// viewNodes returns the view of every node that is not all zero.
func viewNodes(f *Fabric) map[string]nodeView {
	out := make(map[string]nodeView)
	for _, n := range f.Nodes {
		v := nodeView{Chassis: n.Chassis, Type: n.ChassisType(), Slot: n.ChassisSlot(), Ext: map[int]int{}}
		for _, p := range n.Ports {
			if p != nil && p.ExtNum != 0 {
				v.Ext[p.Num] = p.ExtNum
			}
		}
		if v.Chassis != 0 || v.Type != "" || v.Slot != "" || len(v.Ext) > 0 {
			out[n.Desc] = v
		}
	}
	return out
}

// extNums returns {first: nums[0], first+1: nums[1], ...}.
func extNums(first int, nums ...int) map[int]int {
	m := make(map[int]int)
	for i, e := range nums {
		m[first+i] = e
	}
	return m
}

// Front panel numbers (chassis.c, voltaire_portmap and its int2ext_map_*
// tables) of ports 13-24 of an sLB-24 and an sLB-8 by chip, 13-24 of an
// sLB-2024's chip 1, 19-36 of an sLB-4018 and of an sFB-4700X2's chip 2.
var (
	extSLB24Chip1   = extNums(13, 6, 5, 4, 18, 17, 16, 1, 2, 3, 13, 14, 15)
	extSLB24Chip2   = extNums(13, 12, 11, 10, 24, 23, 22, 7, 8, 9, 19, 20, 21)
	extSLB8Chip1    = extNums(13, 2, 2, 2, 6, 6, 6, 1, 1, 1, 5, 5, 5)
	extSLB2024Chip1 = extNums(13, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24)
	extSLB4018      = extNums(19, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18)
	extSFB4700X2C2  = extNums(19, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6)
	// fill_mellanox_chassis_record: a line's ports 1-18 are 1-18.
	extMellanoxLine = extNums(1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18)
)

const (
	vtr   = vendorVoltaire
	mlx   = vendorMellanox
	vtrSy = rdma.GUID(0x0008f104004011ff) // a Voltaire chassis's SystemImageGUID, which grouping ignores
	mlxSy = rdma.GUID(0x0002c903000abcde) // the Mellanox director's
)

func TestGroupChassis(t *testing.T) {
	for _, tc := range []struct {
		name   string
		specs  []chSpec
		wires  []chWire
		want   []chassisView
		nodes  map[string]nodeView
		guid1  rdma.GUID // ChassisGUID(list, 1)
		errIdx *int      // GroupChassisErr fails at this index
	}{{
		// ibsim's fabrics: vendor 0, SystemImageGUID = NodeGUID. Each
		// node is a chassis of one, which has no number (group_nodes),
		// so none is returned and nothing is in a chassis.
		name: "ibsim",
		specs: []chSpec{
			{desc: "Hca1", typ: mad.NodeTypeCA, ports: 2, guid: 0x100000, sys: 0x100000},
			{desc: "Switch1", typ: mad.NodeTypeSwitch, ports: 8, guid: 0x200000, sys: 0x200000},
			{desc: "Hca2", typ: mad.NodeTypeCA, ports: 2, guid: 0x100003, sys: 0x100003},
			{desc: "Switch2", typ: mad.NodeTypeSwitch, ports: 8, guid: 0x200001, sys: 0x200001},
			{desc: "Hca3", typ: mad.NodeTypeCA, ports: 2, guid: 0x100006, sys: 0x100006},
			{desc: "Hca4", typ: mad.NodeTypeCA, ports: 2, guid: 0x100009, sys: 0x100009},
		},
		wires: []chWire{{"Hca1", 1, "Switch1", 1}, {"Hca2", 2, "Switch1", 2}, {"Switch1", 3, "Switch2", 3},
			{"Switch1", 4, "Switch2", 4}, {"Hca3", 1, "Switch2", 1}, {"Hca4", 1, "Switch2", 2}},
		nodes: map[string]nodeView{},
	}, {
		// The same with no SystemImageGUID at all: group_nodes skips
		// the nodes.
		name: "no SystemImageGUID",
		specs: []chSpec{
			{desc: "Hca1", typ: mad.NodeTypeCA, ports: 1, guid: 0x100000},
			{desc: "Switch1", typ: mad.NodeTypeSwitch, ports: 8, guid: 0x200000},
		},
		wires: []chWire{{"Hca1", 1, "Switch1", 1}},
		nodes: map[string]nodeView{},
	}, {
		// An ISR9288: sFB-12 spines and sLB-24 lines. The chassis is
		// built from S2, the newest spine (group_nodes); S1 comes in
		// through L1 (pass_on_lines_catch_spines), L2 through S1
		// (pass_on_spines_catch_lines).
		name: "ISR9288",
		specs: []chSpec{
			{desc: "host-a", typ: mad.NodeTypeCA, ports: 1, guid: 0x0002c90300000a00, vendor: mlx, dev: 0x6282, sys: 0x0002c90300000a01},
			{desc: "L1", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400401001, vendor: vtr, dev: devSLB24, sys: vtrSy},
			{desc: "S1", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400401011, vendor: vtr, dev: devSFB12, sys: vtrSy},
			{desc: "S2", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400401012, vendor: vtr, dev: devSFB12DDR, sys: vtrSy},
			{desc: "L2", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400401002, vendor: vtr, dev: devSLB24DDR, sys: vtrSy},
			{desc: "host-b", typ: mad.NodeTypeCA, ports: 1, guid: 0x0002c90300000b00, vendor: mlx, dev: 0x6282, sys: 0x0002c90300000b01},
		},
		wires: []chWire{{"L1", 1, "S1", 1}, {"L1", 2, "S2", 1}, {"L2", 1, "S1", 4},
			{"host-a", 1, "L1", 13}, {"host-b", 1, "L2", 20}},
		want: []chassisView{{
			// pass_on_spines_interpolate_chguid: S1's GUID less one.
			Num: 1, GUID: 0x0008f10400401010,
			// get_spine_index: 3*(slot-1)+chip; get_line_index
			// the same.
			Spines: map[int]string{1: "S1", 2: "S2"},
			Lines:  map[int]string{1: "L1", 5: "L2"},
		}},
		nodes: map[string]nodeView{
			// get_sfb_slot from the line port of the first switch
			// link: L1 port 1, spine12_slot_2_slb[1] = 1 and
			// anafa_spine12_slot_2_slb[1] = 1; for S2 L1 port 2.
			"S1": {Chassis: 1, Type: "ISR9288", Slot: "Spine 1 Chip 1", Ext: map[int]int{}},
			"S2": {Chassis: 1, Type: "ISR9288", Slot: "Spine 1 Chip 2", Ext: map[int]int{}},
			// get_slb_slot from the spine port of the first link:
			// S1 port 1 (line_slot_2_sfb12 1, chip 1), S1 port 4
			// (slot 2, chip 2).
			"L1": {Chassis: 1, Type: "ISR9288", Slot: "Line 1 Chip 1", Ext: extSLB24Chip1},
			"L2": {Chassis: 1, Type: "ISR9288", Slot: "Line 2 Chip 2", Ext: extSLB24Chip2},
		},
		guid1: 0x0008f10400401010,
	}, {
		// An ISR9096 and an ISR2012 joined by a cable. The chassis are
		// numbered in the switch list's order, newest first: the
		// ISR2012 (found last) is chassis 1. The CA and router on spine
		// ports are placed by get_router_slot and sit among the lines.
		name: "ISR9096 and ISR2012",
		specs: []chSpec{
			{desc: "9096-LA", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400500001, vendor: vtr, dev: devSLB8, sys: 0x0008f104005000ff},
			{desc: "9096-SP", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400500010, vendor: vtr, dev: devSFB4, sys: 0x0008f104005000ff},
			{desc: "9096-LB", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400500002, vendor: vtr, dev: devSLB24DDR, sys: 0x0008f104005000ff},
			{desc: "9096-RT", typ: mad.NodeTypeRouter, ports: 2, guid: 0x0008f10400500020, vendor: vtr, dev: devIBIPRouter, sys: 0x0008f104005000ff},
			{desc: "2012-LC", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400600001, vendor: vtr, dev: devSLB2024, sys: 0x0008f104006000ff},
			{desc: "2012-SF", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400600011, vendor: vtr, dev: devSFB2012, sys: 0x0008f104006000ff},
			{desc: "2012-CA", typ: mad.NodeTypeCA, ports: 1, guid: 0x0008f10400600030, vendor: vtr, dev: 0x5a44, sys: 0x0008f10400600030},
		},
		wires: []chWire{{"9096-LA", 1, "9096-SP", 7}, {"9096-LB", 4, "9096-SP", 4}, {"9096-RT", 1, "9096-SP", 20},
			{"2012-LC", 2, "2012-SF", 3}, {"2012-CA", 1, "2012-SF", 10}, {"9096-LB", 13, "2012-LC", 13}},
		want: []chassisView{{
			Num: 1, GUID: 0x0008f10400600010,
			// get_spine_index 3*(1-1)+2; get_line_index
			// 3*(2-1)+1 for LC and 3*(5-1)+3 for the CA.
			Spines: map[int]string{2: "2012-SF"},
			Lines:  map[int]string{4: "2012-LC", 15: "2012-CA"},
		}, {
			Num: 2, GUID: 0x0008f1040050000f,
			// get_spine_index: the slot for an sFB-4.
			Spines: map[int]string{2: "9096-SP"},
			Lines:  map[int]string{2: "9096-LB", 4: "9096-LA", 11: "9096-RT"},
		}},
		nodes: map[string]nodeView{
			// get_sfb_slot, LC port 2: spine12_slot_2_slb 1,
			// anafa 2.
			"2012-SF": {Chassis: 1, Type: "ISR2012", Slot: "Spine 1 Chip 2", Ext: map[int]int{}},
			// get_slb_slot, SF port 3: line_slot_2_sfb12 2, anafa 1.
			"2012-LC": {Chassis: 1, Type: "ISR2012", Slot: "Line 2 Chip 1", Ext: extSLB2024Chip1},
			// get_router_slot, SF port 10: line_slot_2_sfb12 5;
			// the chip is guessed from SF's GUID, 1 modulo 4: 3.
			"2012-CA": {Chassis: 1, Type: "ISR2012", Slot: "SRBD 5 Chip 3", Ext: map[int]int{}},
			// get_sfb_slot, LB port 4 (its first switch link):
			// spine4_slot_2_slb 2, anafa 1.
			"9096-SP": {Chassis: 2, Type: "ISR9096", Slot: "Spine 2 Chip 1", Ext: map[int]int{}},
			// get_slb_slot, SP port 4: line_slot_2_sfb4 1,
			// anafa_line_slot_2_sfb4 2.
			"9096-LB": {Chassis: 2, Type: "ISR9096", Slot: "Line 1 Chip 2", Ext: extSLB24Chip2},
			// SP port 7: slot 2, chip 1.
			"9096-LA": {Chassis: 2, Type: "ISR9096", Slot: "Line 2 Chip 1", Ext: extSLB8Chip1},
			// get_router_slot, SP port 20: line_slot_2_sfb4 4,
			// ipr_slot_2_sfb4_port 2.
			"9096-RT": {Chassis: 2, Type: "ISR9096", Slot: "SRBD 4 Chip 2", Ext: map[int]int{}},
		},
		guid1: 0x0008f10400600010,
	}, {
		// An ISR4700: an sFB-4700X2 spine and an sLB-4018 line; ports
		// 19-36 of both are front panel ports, which chassis.c does
		// not follow, so the CA on spine port 25 is not placed.
		name: "ISR4700",
		specs: []chSpec{
			{desc: "LN", typ: mad.NodeTypeSwitch, ports: 36, guid: 0x0008f10400700001, vendor: vtr, dev: devSLB4018, sys: 0x0008f104007000ff},
			{desc: "SPX", typ: mad.NodeTypeSwitch, ports: 36, guid: 0x0008f10400700010, vendor: vtr, dev: devSFB4700X2, sys: 0x0008f104007000ff},
			{desc: "ext-ca", typ: mad.NodeTypeCA, ports: 1, guid: 0x0008f10400700030, vendor: vtr, dev: 0x5a44, sys: 0x0008f10400700030},
			{desc: "host", typ: mad.NodeTypeCA, ports: 1, guid: 0x0002c90300000c00, vendor: mlx, dev: 0x6282, sys: 0x0002c90300000c00},
		},
		wires: []chWire{{"LN", 3, "SPX", 5}, {"ext-ca", 1, "SPX", 25}, {"host", 1, "LN", 20}},
		want: []chassisView{{
			Num: 1, GUID: 0x0008f1040070000f,
			// get_spine_index 2*(2-1)+2; get_line_index: the
			// slot for an sLB-4018.
			Spines: map[int]string{4: "SPX"},
			Lines:  map[int]string{5: "LN"},
		}},
		nodes: map[string]nodeView{
			// get_sfb_slot, LN port 3: spine18_slot_2_slb 2,
			// anafa_spine18x2_slot_2_slb 2.
			"SPX": {Chassis: 1, Type: "ISR4700", Slot: "Spine 2 Chip 2", Ext: extSFB4700X2C2},
			// get_slb_slot, SPX port 5: line_slot_2_sfb18x2 5,
			// anafa 1.
			"LN": {Chassis: 1, Type: "ISR4700", Slot: "Line 5 Chip 1", Ext: extSLB4018},
		},
		guid1: 0x0008f1040070000f,
	}, {
		// A Mellanox IS4 director: slots from the NodeDescriptions
		// (fill_mellanox_chassis_record), grouped by SystemImageGUID.
		name: "Mellanox",
		specs: []chSpec{
			{desc: "hca", typ: mad.NodeTypeCA, ports: 1, guid: 0x0002c90300001110, vendor: mlx, dev: 0x673c, sys: 0x0002c90300001111},
			{desc: "MF0;ib-director:IS5100/L05/U1", typ: mad.NodeTypeSwitch, ports: 36, guid: 0x0002c903000a0005, vendor: mlx, dev: devMellanoxIS4, sys: mlxSy},
			{desc: "MF0;ib-director:IS5100/S02/U1", typ: mad.NodeTypeSwitch, ports: 36, guid: 0x0002c903000a0102, vendor: mlx, dev: devMellanoxIS4, sys: mlxSy},
			{desc: "MF0;ib-director:ABCDEFGHIJKLMNOPQRSTUVWXYZ/S03/U2", typ: mad.NodeTypeSwitch, ports: 36, guid: 0x0002c903000a0103, vendor: mlx, dev: devMellanoxIS4, sys: mlxSy},
			{desc: "MF0;ib-director:IS5100/L12:LeafBoard/U1", typ: mad.NodeTypeSwitch, ports: 36, guid: 0x0002c903000a000c, vendor: mlx, dev: devMellanoxIS4, sys: mlxSy},
			{desc: "MF0;ib-director:IS5100/L05/U1 again", typ: mad.NodeTypeSwitch, ports: 36, guid: 0x0002c903000a0015, vendor: mlx, dev: devMellanoxIS4, sys: mlxSy},
			{desc: "mgmt", typ: mad.NodeTypeSwitch, ports: 8, guid: 0x0002c903000a0200, vendor: mlx, dev: 0xb924, sys: mlxSy},
			{desc: "MF0;ib-director:IS5100/S19/U1", typ: mad.NodeTypeSwitch, ports: 36, guid: 0x0002c903000a0119, vendor: mlx, dev: devMellanoxIS4, sys: mlxSy},
			{desc: "chassis-ca", typ: mad.NodeTypeCA, ports: 1, guid: 0x0002c903000a0300, vendor: mlx, dev: 0x673c, sys: mlxSy},
			{desc: "MF0;ib-director:IS5100/L40/U1", typ: mad.NodeTypeSwitch, ports: 36, guid: 0x0002c903000a0028, vendor: mlx, dev: devMellanoxIS4, sys: mlxSy},
		},
		wires: []chWire{
			{"hca", 1, "MF0;ib-director:IS5100/L05/U1", 1},
			{"MF0;ib-director:IS5100/L05/U1", 19, "MF0;ib-director:IS5100/S02/U1", 1},
			{"MF0;ib-director:IS5100/L12:LeafBoard/U1", 19, "MF0;ib-director:IS5100/S02/U1", 2},
			{"mgmt", 1, "chassis-ca", 1},
		},
		want: []chassisView{{
			Num: 1, GUID: mlxSy,
			// add_node_to_chassis, newest first, so in the order of
			// discovery by next_chassis_node.
			Nodes: []string{"mgmt", "chassis-ca"},
			// insert_mellanox_line_and_spine by slot number: the
			// newest L05 takes the slot, the other stays out.
			Spines: map[int]string{2: "MF0;ib-director:IS5100/S02/U1", 3: "MF0;ib-director:ABCDEFGHIJKLMNOPQRSTUVWXYZ/S03/U2"},
			Lines:  map[int]string{5: "MF0;ib-director:IS5100/L05/U1 again", 12: "MF0;ib-director:IS5100/L12:LeafBoard/U1"},
		}},
		nodes: map[string]nodeView{
			"MF0;ib-director:IS5100/S02/U1": {Chassis: 1, Type: "IS5100", Slot: "Spine 2 Chip 1", Ext: map[int]int{}},
			// ch_type_str keeps 19 characters.
			"MF0;ib-director:ABCDEFGHIJKLMNOPQRSTUVWXYZ/S03/U2": {Chassis: 1, Type: "ABCDEFGHIJKLMNOPQRS", Slot: "Spine 3 Chip 2", Ext: map[int]int{}},
			"MF0;ib-director:IS5100/L12:LeafBoard/U1":           {Chassis: 1, Type: "IS5100", Slot: "Line 12 Chip 1", Ext: extMellanoxLine},
			"MF0;ib-director:IS5100/L05/U1 again":               {Chassis: 1, Type: "IS5100", Slot: "Line 5 Chip 1", Ext: extMellanoxLine},
			// Its slot was taken: no chassis, but the front panel
			// numbers stay (fill_mellanox_chassis_record).
			"MF0;ib-director:IS5100/L05/U1": {Ext: extMellanoxLine},
			// Slot 40 is past LINES_MAX_NUM + 1: slot 0, no type,
			// no front panel numbers. It goes in linenode[0],
			// which nothing lists.
			"MF0;ib-director:IS5100/L40/U1": {Chassis: 1, Slot: "Line 0 Chip 1", Ext: map[int]int{}},
			// S19 is not here (all zero): spinenode[19] is
			// linenode[0], which L40 (newer) took.
			// Not an IS4, and a CA: no slot record, grouped by
			// SystemImageGUID.
			"mgmt":       {Chassis: 1, Ext: map[int]int{}},
			"chassis-ca": {Chassis: 1, Ext: map[int]int{}},
		},
		guid1: mlxSy,
	}, {
		// Topspin (and InfiniCon) SystemImageGUIDs carry the slot in
		// byte 4 (topspin_chassisguid).
		name: "Topspin",
		specs: []chSpec{
			{desc: "ts-ca", typ: mad.NodeTypeCA, ports: 2, guid: 0x0005ad0003234500, vendor: vendorTopspin, dev: 0x5a44, sys: 0x0005ad0003234567},
			{desc: "ts-sw1", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0005ad0001234500, vendor: vendorTopspin, dev: 0xa87c, sys: 0x0005ad0001234567},
			{desc: "lone", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0005ad0001777700, vendor: vendorTopspin, dev: 0xa87c, sys: 0x0005ad0001777777},
			{desc: "ts-sw2", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0005ad0002234500, vendor: vendorTopspin, dev: 0xa87c, sys: 0x0005ad0002234567},
			{desc: "ic-sw", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x00066a0009234500, vendor: vendorInfiniCon, dev: 0xa87c, sys: 0x0005ad0009234567},
		},
		wires: []chWire{{"ts-ca", 1, "ts-sw1", 1}, {"ts-sw1", 2, "ts-sw2", 2}, {"ts-sw2", 3, "ic-sw", 3}, {"lone", 1, "ic-sw", 1}},
		want: []chassisView{{
			Num: 1, GUID: 0x0005ad0000234567,
			Nodes:  []string{"ts-ca", "ts-sw1", "ts-sw2", "ic-sw"},
			Spines: map[int]string{}, Lines: map[int]string{},
		}},
		nodes: map[string]nodeView{
			// ibnd_get_chassis_type and _slot_str know only
			// Voltaire and Mellanox.
			"ts-ca":  {Chassis: 1, Ext: map[int]int{}},
			"ts-sw1": {Chassis: 1, Ext: map[int]int{}},
			"ts-sw2": {Chassis: 1, Ext: map[int]int{}},
			"ic-sw":  {Chassis: 1, Ext: map[int]int{}},
		},
		guid1: 0x0005ad0000234567,
	}, {
		// Xsigo (xsigo_chassisguid): switches mask byte 4; a CA on
		// leaf 1 takes the leaf's chassis GUID, one elsewhere keeps its
		// own. xs-hca is not Xsigo's by vendor, only by GUID.
		name: "Xsigo",
		specs: []chSpec{
			{desc: "xs-hca", typ: mad.NodeTypeCA, ports: 1, guid: 0x0013970200001234, vendor: mlx, dev: 0x6282, sys: 0x0013970200001234},
			{desc: "xs-leaf1", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0013970102aabb00, vendor: vendorXsigo, dev: 0x1, sys: 0x0013970102aabbcc},
			{desc: "xs-leaf2", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0013970103aabb00, vendor: vendorXsigo, dev: 0x1, sys: 0x0013970103aabbcc},
			{desc: "xs-tca", typ: mad.NodeTypeCA, ports: 1, guid: 0x0013970300005678, vendor: vendorXsigo, dev: 0x2, sys: 0x0013970300005678},
		},
		wires: []chWire{{"xs-hca", 1, "xs-leaf1", 1}, {"xs-tca", 1, "xs-leaf2", 1}, {"xs-leaf1", 10, "xs-leaf2", 10}},
		want: []chassisView{{
			Num: 1, GUID: 0x0013970100aabbcc,
			Nodes:  []string{"xs-hca", "xs-leaf1", "xs-leaf2"},
			Spines: map[int]string{}, Lines: map[int]string{},
		}},
		nodes: map[string]nodeView{
			"xs-hca":   {Chassis: 1, Ext: map[int]int{}},
			"xs-leaf1": {Chassis: 1, Ext: map[int]int{}},
			"xs-leaf2": {Chassis: 1, Ext: map[int]int{}},
		},
		guid1: 0x0013970100aabbcc,
	}, {
		// Numbering (group_nodes): Voltaire chassis first, then the
		// others as the node list (newest first) meets them. P was
		// found before Q, so Q is 2 and P 3, and the list is in that
		// order too.
		name: "numbering",
		specs: []chSpec{
			{desc: "p1", typ: mad.NodeTypeSwitch, ports: 8, guid: 0x10, sys: 0xaaa},
			{desc: "p2", typ: mad.NodeTypeCA, ports: 1, guid: 0x11, sys: 0xaaa},
			{desc: "LB", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400500002, vendor: vtr, dev: devSLB24, sys: vtrSy},
			{desc: "SP", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400500010, vendor: vtr, dev: devSFB4, sys: vtrSy},
			{desc: "q1", typ: mad.NodeTypeSwitch, ports: 8, guid: 0x20, sys: 0xbbb},
			{desc: "q2", typ: mad.NodeTypeSwitch, ports: 8, guid: 0x21, sys: 0xbbb},
		},
		wires: []chWire{{"LB", 1, "SP", 1}, {"p1", 1, "LB", 13}, {"p1", 2, "p2", 1}, {"q1", 1, "q2", 1}, {"q1", 2, "p1", 3}},
		want: []chassisView{{
			Num: 1, GUID: 0x0008f1040050000f,
			Spines: map[int]string{1: "SP"}, Lines: map[int]string{1: "LB"},
		}, {
			Num: 2, GUID: 0xbbb, Nodes: []string{"q1", "q2"}, Spines: map[int]string{}, Lines: map[int]string{},
		}, {
			Num: 3, GUID: 0xaaa, Nodes: []string{"p1", "p2"}, Spines: map[int]string{}, Lines: map[int]string{},
		}},
		nodes: map[string]nodeView{
			// get_sfb_slot, LB port 1: spine4_slot_2_slb 1;
			// get_slb_slot, SP port 1: line_slot_2_sfb4 1,
			// anafa 1.
			"SP": {Chassis: 1, Type: "ISR9096", Slot: "Spine 1 Chip 1", Ext: map[int]int{}},
			"LB": {Chassis: 1, Type: "ISR9096", Slot: "Line 1 Chip 1", Ext: extSLB24Chip1},
			"q1": {Chassis: 2, Ext: map[int]int{}},
			"q2": {Chassis: 2, Ext: map[int]int{}},
			"p1": {Chassis: 3, Ext: map[int]int{}},
			"p2": {Chassis: 3, Ext: map[int]int{}},
		},
		guid1: 0x0008f1040050000f,
	}, {
		// Two nodes whose SystemImageGUID is the Voltaire chassis's
		// GUID. find_chassisguid searches fabric->chassis, still NULL
		// for the first: it makes a chassis of its own; the second
		// finds the Voltaire chassis, whose count (not counting its
		// own nodes) is then 1. Neither joins a chassis.
		name: "GUID of a Voltaire chassis",
		specs: []chSpec{
			{desc: "LB", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400500002, vendor: vtr, dev: devSLB24, sys: vtrSy},
			{desc: "SP", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400500010, vendor: vtr, dev: devSFB4, sys: vtrSy},
			{desc: "odd2", typ: mad.NodeTypeCA, ports: 1, guid: 0x30, sys: 0x0008f1040050000f},
			{desc: "odd1", typ: mad.NodeTypeCA, ports: 1, guid: 0x31, sys: 0x0008f1040050000f},
		},
		wires: []chWire{{"LB", 1, "SP", 1}, {"odd1", 1, "LB", 13}, {"odd2", 1, "LB", 14}},
		want: []chassisView{{
			Num: 1, GUID: 0x0008f1040050000f,
			Spines: map[int]string{1: "SP"}, Lines: map[int]string{1: "LB"},
		}},
		nodes: map[string]nodeView{
			"SP": {Chassis: 1, Type: "ISR9096", Slot: "Spine 1 Chip 1", Ext: map[int]int{}},
			"LB": {Chassis: 1, Type: "ISR9096", Slot: "Line 1 Chip 1", Ext: extSLB24Chip1},
		},
		guid1: 0x0008f1040050000f,
	}, {
		// A spine with no switch on its ports has slot 0:
		// get_spine_index fails, and with it group_nodes and the whole
		// discovery.
		name: "spine without lines",
		specs: []chSpec{
			{desc: "SP", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400500010, vendor: vtr, dev: devSFB4, sys: vtrSy},
			{desc: "ca", typ: mad.NodeTypeCA, ports: 1, guid: 0x40, sys: 0x40},
		},
		wires:  []chWire{{"ca", 1, "SP", 1}},
		nodes:  map[string]nodeView{},
		errIdx: new(0),
	}, {
		// A Voltaire switch that is no chassis board (an ISR9024) on a
		// spine port: get_line_index gives 3*(0-1)+0; build_chassis
		// ignores that the first time, pass_on_spines_catch_lines
		// fails.
		name: "other Voltaire switch on a spine",
		specs: []chSpec{
			{desc: "LB", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400500002, vendor: vtr, dev: devSLB24, sys: vtrSy},
			{desc: "SP", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400500010, vendor: vtr, dev: devSFB4, sys: vtrSy},
			{desc: "isr9024", typ: mad.NodeTypeSwitch, ports: 24, guid: 0x0008f10400800000, vendor: vtr, dev: 0x5a06, sys: 0x0008f10400800000},
		},
		wires: []chWire{{"LB", 4, "SP", 1}, {"isr9024", 1, "SP", 2}},
		// The front panel numbers were set before the failure.
		nodes:  map[string]nodeView{"LB": {Ext: extSLB24Chip1}},
		errIdx: new(-3),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := chassisFabric(t, tc.specs, tc.wires)
			list, err := f.GroupChassisErr()
			if tc.errIdx != nil {
				var ce *ChassisError
				if !errors.As(err, &ce) || ce.Index != *tc.errIdx {
					t.Fatalf("GroupChassisErr: %v, want a ChassisError at index %d", err, *tc.errIdx)
				}
				if got := f.GroupChassis(); got != nil {
					t.Errorf("GroupChassis after the error = %v, want nil", got)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, viewChassis(list), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("chassis (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.nodes, viewNodes(f), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
			if got := ChassisGUID(list, 1); got != tc.guid1 {
				t.Errorf("ChassisGUID(1) = %s, want %s", got, tc.guid1)
			}

			// Grouping again gives the same, whatever was set.
			for _, n := range f.Nodes {
				n.Chassis = 99
				for _, p := range n.Ports {
					if p != nil {
						p.ExtNum = 99
					}
				}
			}
			again := f.GroupChassis()
			if diff := cmp.Diff(tc.want, viewChassis(again), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("chassis grouped again (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.nodes, viewNodes(f), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("nodes grouped again (-want +got):\n%s", diff)
			}
		})
	}
}

// TestChassisNumberWraps checks that chassis numbers are an unsigned char
// as in ibnd_chassis_t, and what group_nodes then does: pairs of nodes
// sharing a SystemImageGUID are numbered newest first, so pair i of 257 is
// chassis 257-i; the first node of pair 1 gets 256, that is 0, and the
// second node, finding its chassis without a number, numbers it again: 1.
// Pair 0 is then 2. ChassisGUID finds the first chassis 1, pair 256.
func TestChassisNumberWraps(t *testing.T) {
	var specs []chSpec
	for i := range 257 {
		sys := rdma.GUID(0x1000 + 257 - i)
		specs = append(specs,
			chSpec{desc: fmt.Sprintf("a%d", i), typ: mad.NodeTypeSwitch, ports: 1, guid: rdma.GUID(2*i + 1), sys: sys},
			chSpec{desc: fmt.Sprintf("b%d", i), typ: mad.NodeTypeSwitch, ports: 1, guid: rdma.GUID(2*i + 2), sys: sys})
	}
	f := chassisFabric(t, specs, nil)
	list := f.GroupChassis()
	if len(list) != 257 {
		t.Fatalf("%d chassis, want 257", len(list))
	}
	var nums []int
	for _, c := range list[253:] {
		nums = append(nums, c.Num)
	}
	if diff := cmp.Diff([]int{254, 255, 1, 2}, nums); diff != "" {
		t.Errorf("last numbers (-want +got):\n%s", diff)
	}
	if got, want := ChassisGUID(list, 1), rdma.GUID(0x1001); got != want {
		t.Errorf("ChassisGUID(1) = %s, want %s", got, want)
	}
	var got []int
	for _, n := range f.Nodes[:4] {
		got = append(got, n.Chassis)
	}
	if diff := cmp.Diff([]int{2, 2, 1, 1}, got); diff != "" {
		t.Errorf("Chassis of pairs 0 and 1 (-want +got):\n%s", diff)
	}
}

func TestXsigoGUIDs(t *testing.T) {
	type got struct{ GUID, HCA, TCA bool }
	for _, tc := range []struct {
		guid rdma.GUID
		want got
	}{
		{0x0013970102aabbcc, got{GUID: true}},
		{0x0013970200001234, got{GUID: true, HCA: true}},
		{0x0013970300005678, got{GUID: true, TCA: true}},
		{0x00139704ffffffff, got{GUID: true}},
		{0x0013980200001234, got{}},
		{0x0002c90300001234, got{}},
		{0, got{}},
	} {
		g := got{IsXsigoGUID(tc.guid), IsXsigoHCA(tc.guid), IsXsigoTCA(tc.guid)}
		if diff := cmp.Diff(tc.want, g); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.guid, diff)
		}
	}
}

// TestMellanoxRecord checks the NodeDescription parse of
// fill_mellanox_chassis_record.
func TestMellanoxRecord(t *testing.T) {
	type rec struct {
		Found   bool
		Slot    slotKind
		SlotNum uint8
		Chip    uint8
		Type    string
		Ext     bool
	}
	for _, tc := range []struct {
		desc string
		dev  uint16
		want rec
	}{
		{"MF0;sys:SX1:/L01/U1", devMellanoxIS4, rec{true, lineSlot, 1, 1, "SX1:", true}},
		{"MF0;sys:IS5300/S18/U1", devMellanoxIS4, rec{true, spineSlot, 18, 1, "IS5300", false}},
		{"MF0;sys:IS5300/L07:board/U3", devMellanoxIS4, rec{true, lineSlot, 7, 3, "IS5300", true}},
		// atoi: white space and sign, digits up to another
		// character, unsigned char.
		{"MF0;sys:IS5300/L 9x/U+2y", devMellanoxIS4, rec{true, lineSlot, 9, 2, "IS5300", true}},
		{"MF0;sys:IS5300/S/U-1", devMellanoxIS4, rec{true, spineSlot, 0, 255, "IS5300", false}},
		{"MF0;sys:IS5300/L293/U1", devMellanoxIS4, rec{true, lineSlot, 37, 1, "IS5300", true}},
		{"MF0;sys:IS5300/S20/U1", devMellanoxIS4, rec{true, spineSlot, 0, 1, "", false}},
		// LONG_MAX, 255 as an unsigned char: past the last slot.
		{"MF0;sys:IS5300/L99999999999999999999999/U1", devMellanoxIS4, rec{true, lineSlot, 0, 1, "", false}},
		// Not a slot: the chip is read, nothing else.
		{"MF0;sys:IS5300/X01/U1", devMellanoxIS4, rec{Chip: 1}},
		{"MF0;sys:IS5300//U1", devMellanoxIS4, rec{Chip: 1}},
		// Not the format.
		{"MF0;sys:IS5300/L01/V1", devMellanoxIS4, rec{}},
		{"MF0;sys:IS5300/L01", devMellanoxIS4, rec{}},
		{"MF0;sys:IS5300/L01:board", devMellanoxIS4, rec{}},
		{"MF0;sys/L01/U1", devMellanoxIS4, rec{}},
		{"MF0;sys:IS5300", devMellanoxIS4, rec{}},
		{"MF1;sys:IS5300/L01/U1", devMellanoxIS4, rec{}},
		{"MF0;sys:IS5300/L01/U1", 0xc738, rec{}},
	} {
		s, extPorts := mellanoxRecord(&Node{Desc: tc.desc, Info: mad.NodeInfo{DeviceID: tc.dev}})
		got := rec{s.found, s.slot, s.slotNum, s.chip, s.typeStr, extPorts}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.desc, diff)
		}
	}
}
