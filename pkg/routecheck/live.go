package routecheck

import (
	"context"
	"math/bits"
	"sort"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/madtext"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/route"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// SweepOptions say how Sweep reads the switches' tables.
type SweepOptions struct {
	// ViaSA asks the SA for every switch's forwarding table records
	// first (route.CollectOptions.ViaSA); what it lacks is read by SMP.
	ViaSA bool
	// SMKey is the SM_Key of the SA queries.
	SMKey uint64
	// SL2VL also reads every switch's SL to VL tables by SMP, for each
	// pair of ports routes use (from port 0 or a linked port to another
	// linked port), for the credit-loop check.
	SL2VL bool
	// PathSLs also asks the SA for the SL of every CA port's path to
	// every port (PathRecords, one GetTable per CA port), for the
	// credit-loop check.
	PathSLs bool
}

// SweepResult is what Sweep read: the snapshot, and the reads that failed.
type SweepResult struct {
	Snapshot *Snapshot
	// Unicast and Multicast are the tables as route.Collect read them.
	Unicast, Multicast *route.Tables
	// Errs are the table reads that failed (each a *route.ReadError or
	// *SL2VLReadError): their entries are missing from the snapshot
	// (Unassigned).
	Errs []error
}

// Sweep reads every switch's linear and multicast forwarding tables of a
// discovered fabric through x, each switch by the directed route
// discovery found it by, all blocks in flight at once up to the
// transactor's window, and returns the snapshot of the fabric's routing.
// A block that cannot be read is left out and recorded in Errs; Sweep
// itself fails only when ctx ends.
func Sweep(ctx context.Context, x *madrpc.Transactor, sub *subnet.Fabric, o SweepOptions) (*SweepResult, error) {
	switches := sub.ByType(mad.NodeTypeSwitch)
	res := &SweepResult{}
	var err error
	co := route.CollectOptions{ViaSA: o.ViaSA, SMKey: o.SMKey}
	if res.Unicast, err = route.Collect(ctx, x, switches, co); err != nil {
		return nil, err
	}
	co.Multicast = true
	if res.Multicast, err = route.Collect(ctx, x, switches, co); err != nil {
		return nil, err
	}
	for _, t := range []*route.Tables{res.Unicast, res.Multicast} {
		for _, st := range t.Switches {
			res.Errs = append(res.Errs, st.Errs...)
		}
	}
	res.Snapshot = SnapshotOf(sub, res.Unicast, res.Multicast)
	if o.SL2VL {
		var sw []*subnet.Node
		for _, n := range res.Snapshot.switchOrder(sub) {
			if n.SwitchInfo != nil {
				sw = append(sw, n)
			}
		}
		entries, errs := readSL2VL(ctx, x, sw)
		res.Snapshot.SL2VL = entries
		res.Errs = append(res.Errs, errs...)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if o.PathSLs {
		var cas []*subnet.Node
		for _, n := range res.Snapshot.nodeOrder(sub) {
			if n.Type != mad.NodeTypeSwitch {
				cas = append(cas, n)
			}
		}
		sls, errs := readPathSLs(ctx, x, cas, sub, o.SMKey)
		res.Snapshot.PathSLs = sls
		res.Errs = append(res.Errs, errs...)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// SnapshotOf returns the routing snapshot of a discovered fabric and the
// switches' tables route.Collect read (either may be nil): the links as
// opensm-subnet.lst lists them (nodes in opensm's order), the LFTs up to each switch's
// LinearFDBTop, the MFT entries. Its LMC is the largest of the CA ports'.
func SnapshotOf(sub *subnet.Fabric, ucast, mcast *route.Tables) *Snapshot {
	s := &Snapshot{}
	nodes := s.nodeOrder(sub)
	for _, n := range nodes {
		if n.Type != mad.NodeTypeSwitch {
			for _, p := range n.Ports {
				if p != nil && p.Remote != nil && p.LMC > s.LMC {
					s.LMC = p.LMC
				}
			}
		}
		for num := 1; num < len(n.Ports); num++ {
			p := n.Ports[num]
			if p == nil || p.Remote == nil {
				continue
			}
			s.Links = append(s.Links, Link{A: linkEnd(p), B: linkEnd(p.Remote),
				Width: widthText(p), State: stateText(p), Speed: speedText(p)})
		}
	}
	byGUID := map[rdma.GUID]*SwitchFDB{}
	for _, n := range nodes {
		if n.Type == mad.NodeTypeSwitch {
			s.Switches = append(s.Switches, SwitchFDB{GUID: uint64(n.GUID)})
		}
	}
	for i := range s.Switches {
		byGUID[rdma.GUID(s.Switches[i].GUID)] = &s.Switches[i]
	}
	if ucast != nil {
		for _, st := range ucast.Switches {
			if fdb := byGUID[st.Switch.GUID]; fdb != nil && st.LFT != nil && st.Switch.SwitchInfo != nil {
				fdb.LFT = lftOf(st)
			}
		}
	}
	if mcast != nil {
		for _, st := range mcast.Switches {
			if fdb := byGUID[st.Switch.GUID]; fdb != nil && st.MFT != nil && st.Switch.SwitchInfo != nil {
				fdb.MFT = mftOf(st)
			}
		}
	}
	return s
}

// nodeOrder returns the fabric's nodes in opensm's order.
func (s *Snapshot) nodeOrder(sub *subnet.Fabric) []*subnet.Node {
	nodes := append([]*subnet.Node(nil), sub.Nodes...)
	sortOpenSM(nodes)
	return nodes
}

// sortOpenSM sorts nodes as opensm keeps them in its maps: by the GUID in
// network byte order, compared as a host (little-endian) integer, that is
// by the byte-swapped GUID.
func sortOpenSM(nodes []*subnet.Node) {
	sort.Slice(nodes, func(i, j int) bool {
		return bits.ReverseBytes64(uint64(nodes[i].GUID)) < bits.ReverseBytes64(uint64(nodes[j].GUID))
	})
}

// switchOrder returns the fabric's switches in the snapshot's order.
func (s *Snapshot) switchOrder(sub *subnet.Fabric) []*subnet.Node {
	var out []*subnet.Node
	for _, sw := range s.Switches {
		if n := sub.NodeByGUID(rdma.GUID(sw.GUID)); n != nil {
			out = append(out, n)
		}
	}
	return out
}

// lftOf returns a switch's LFT from LID 0 to its top, Unassigned where a
// block was not read.
func lftOf(st *route.SwitchTables) []uint8 {
	top := st.LFT.Top
	if top > mad.MaxUnicastLID {
		top = mad.MaxUnicastLID
	}
	lft := make([]uint8, top+1)
	for lid := range lft {
		lft[lid] = Unassigned
		if p, ok := st.LFT.Port(rdma.LID(lid)); ok && p <= 255 {
			lft[lid] = uint8(p)
		}
	}
	return lft
}

// mftOf returns a switch's multicast entries: the MLIDs of the blocks read
// that forward to some port.
func mftOf(st *route.SwitchTables) map[uint16][]int {
	mlids := map[int]bool{}
	for mod := range st.MFT.Blocks {
		block := int(mod & 0x1ff) // the block number; the position is above it
		for i := 0; i < mad.MFTBlockSize; i++ {
			mlids[mad.MinMulticastLID+block*mad.MFTBlockSize+i] = true
		}
	}
	out := map[uint16][]int{}
	for mlid := range mlids {
		if ports := st.Ports(rdma.LID(mlid)); len(ports) > 0 {
			out[uint16(mlid)] = ports
		}
	}
	return out
}

func linkEnd(p *subnet.Port) LinkEnd {
	n := p.Node
	e := LinkEnd{
		Type:       CA,
		Router:     n.Type == mad.NodeTypeRouter,
		NumPorts:   n.NumPorts,
		SystemGUID: uint64(n.Info.SystemImageGUID),
		NodeGUID:   uint64(n.GUID),
		PortGUID:   uint64(p.GUID),
		VendorID:   n.Info.VendorID,
		DeviceID:   n.Info.DeviceID,
		Revision:   n.Info.Revision,
		Desc:       n.Desc,
		LID:        int(p.BaseLID),
		LMC:        p.LMC,
		Port:       p.Num,
	}
	def := p // the port whose PortInfo names the LID and the SM: port 0 of a switch
	if n.Type == mad.NodeTypeSwitch {
		e.Type = Switch
		e.LID, e.LMC = int(n.SMALID), n.SMALMC
		e.PortGUID = uint64(n.Info.PortGUID)
		if q := n.Port(0); q != nil {
			def = q
		}
	}
	if def.Info != nil && def.Info.LID != 0 && def.Info.LID == def.Info.SMLID {
		e.SM = true
	}
	return e
}

func widthText(p *subnet.Port) string {
	if p.Info == nil {
		return "??"
	}
	return madtext.LinkWidthCompat(p.Info.LinkWidthActive)
}

// stateText is the link's state as opensm-subnet.lst spells it; a port
// whose PortInfo was not read (discovery reached the node through it, so
// it is up) counts as active.
func stateText(p *subnet.Port) string {
	if p.Info == nil {
		return "ACT"
	}
	switch p.Info.LinkState {
	case mad.PortStateActive:
		return "ACT"
	case mad.PortStateArmed:
		return "ARM"
	case mad.PortStateInit:
		return "INI"
	}
	return "DWN"
}

func speedText(p *subnet.Port) string {
	if p.Info == nil {
		return "??"
	}
	s := "??"
	switch p.Info.LinkSpeedActive {
	case 1:
		s = "2.5"
	case 2:
		s = "5"
	case 4:
		s = "10"
	}
	if p.ExtInfo != nil && p.ExtInfo.LinkSpeedActive&1 != 0 {
		s = "FDR10"
	}
	switch ext := p.LinkSpeedExtActive(); {
	case ext == 1:
		s = "14"
	case ext == 2:
		s = "25"
	case ext != 0:
		s = "??"
	}
	return s
}
