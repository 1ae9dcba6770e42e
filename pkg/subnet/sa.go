package subnet

import (
	"context"
	"fmt"
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// The SA records DiscoverSA reads (IBA 15.2.5).
var (
	nodeRecordLayout       = (&mad.NodeRecord{}).Layout()
	portInfoRecordLayout   = (&mad.PortInfoRecord{}).Layout()
	switchInfoRecordLayout = (&mad.SwitchInfoRecord{}).Layout()
	linkRecordLayout       = (&mad.LinkRecord{}).Layout()
)

// embeddedAt returns the byte offset of the attribute a record embeds,
// by the record's layout and the embedded attribute's first field:
// where the cache's raw copy of that attribute starts.
func embeddedAt(l *mad.Layout, first string) int {
	f, ok := l.Field(first)
	if !ok {
		panic("subnet: " + l.Name + " has no field " + first)
	}
	return f.Offset / 8
}

var (
	// portInfoAt and switchInfoAt are where a PortInfoRecord's PortInfo
	// and a SwitchInfoRecord's SwitchInfo start; the cache keeps their
	// bytes as received, reserved bits included.
	portInfoAt    = embeddedAt(portInfoRecordLayout, "PortInfo.MKey")
	switchInfoAt  = embeddedAt(switchInfoRecordLayout, "SwitchInfo.LinearFDBCap")
	portInfoLen   = (&mad.PortInfo{}).Layout().Size
	switchInfoLen = (&mad.SwitchInfo{}).Layout().Size
)

// SAOptions choose what DiscoverSA reads.
type SAOptions struct {
	// NoPortInfo leaves out the PortInfoRecords, the largest table (a
	// record a port: on a fat tree three quarters of what the SA sends).
	// The ports then have no PortInfo; a port's link counts as up when a
	// LinkRecord names it, as the SM knows a port's peer only across a
	// link that is up; each switch has all its ports, as it answers
	// PortInfo for each; each port has its NodeRecord's LID and LMC 0.
	// Nodes, their LIDs and the walk's order are the same as with the
	// PortInfoRecords. For tools that need no more (ibqueryerrors).
	NoPortInfo bool
}

// DiscoverSA builds the fabric from the subnet administrator's records
// instead of walking it (python-rdma's SA discovery): the NodeRecords,
// PortInfoRecords, SwitchInfoRecords and LinkRecords, four SubnAdmGetTable
// queries however large the fabric. It then replays libibnetdisc's walk
// from the local port over what it found, sending nothing, so that nodes
// come in infiniband-diags' order with the directed routes its walk would
// have reached them by, and each node's NodeInfo says the port that walk
// would have entered it by. The fabric is the SM's view of the subnet; the
// SA keeps no MlnxExtPortInfo, so FDR10 links show as QDR.
func DiscoverSA(ctx context.Context, x *madrpc.Transactor, opts SAOptions) (*Fabric, error) {
	sa, ok := x.SAAddress()
	if !ok {
		return nil, fmt.Errorf("SA discovery: the local port knows no SM LID to ask the SA")
	}
	queries := []*mad.Layout{nodeRecordLayout, portInfoRecordLayout, switchInfoRecordLayout, linkRecordLayout}
	recs := make([][][]byte, len(queries))
	errs := make([]error, len(queries))
	sent := make([]int, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		if opts.NoPortInfo && q == portInfoRecordLayout {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The run's SM_Key (--smkey, ibdiag.conf's sa_key), as the
			// queries --sa sends carry it.
			res, err := x.QuerySA(ctx, &madrpc.SAQuery{Method: mad.MethodGetTable, AttrID: q.ID, Name: q.Name, SMKey: sa.SMKey})
			if err != nil {
				errs[i] = fmt.Errorf("SA discovery: %w", err)
				return
			}
			if len(res.Records) > 0 && res.RecordLen < q.Size {
				errs[i] = fmt.Errorf("SA discovery: %ss of %d bytes, want %d", q.Name, res.RecordLen, q.Size)
				return
			}
			recs[i] = res.Records
			sent[i] = res.Response.Sent
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	f, err := fabricFromRecords(recs[0], recs[1], recs[2], recs[3], sa.PortGUID, opts.NoPortInfo)
	if err != nil {
		return nil, err
	}
	// The MADs sent: the queries (and their resends) and, where ibtool
	// runs RMPP itself, the ACKs of the answers' segments.
	for _, n := range sent {
		f.MADs += n
	}
	return f, nil
}

// fabricFromRecords builds and orders the fabric from the SA's records, the
// local port being the one with port GUID local; with noPortInfo, from
// those without the PortInfoRecords (SAOptions.NoPortInfo).
func fabricFromRecords(nodeRecs, portRecs, switchRecs, linkRecs [][]byte, local rdma.GUID, noPortInfo bool) (*Fabric, error) {
	f := newFabric()
	f.noPortInfo = noPortInfo
	byGUID := make(map[rdma.GUID]*Node, len(nodeRecs))
	// By LID, up to the highest a NodeRecord holds: the records name
	// ports by LID once per port and link end, so a slice index beats a
	// map lookup there.
	nodes := make([]mad.NodeRecord, len(nodeRecs))
	top := 0
	for i, r := range nodeRecs {
		if err := nodes[i].UnmarshalBinary(r); err != nil {
			return nil, fmt.Errorf("SA discovery: %w", err)
		}
		top = max(top, int(nodes[i].LID))
	}
	switchByLID := make([]*Node, top+1)
	caPortByLID := make([]*Port, top+1)
	// Each switch's ports are handed out from one block, made with the
	// node, as its records name them.
	switchPorts := make([][]Port, top+1)
	// The NodeInfo of each CA port as the SA has it (the port's GUID and
	// number): the node takes that of the port the walk enters it by.
	caInfo := make(map[*Port]mad.NodeInfo, len(nodeRecs))

	for i := range nodes {
		lid, ni := rdma.LID(nodes[i].LID), nodes[i].NodeInfo
		if ni.NodeGUID == 0 || ni.NumPorts == 0 {
			continue
		}
		n := byGUID[ni.NodeGUID]
		if n == nil {
			n = &Node{GUID: ni.NodeGUID, Type: ni.NodeType, NumPorts: int(ni.NumPorts), Info: ni,
				Ports: make([]*Port, int(ni.NumPorts)+1)}
			// NodeInfo has no reserved bits: its encoding is the bytes
			// received.
			ni.AppendBinary(n.InfoRaw[:0])
			n.DescRaw = nodes[i].NodeDescription.NodeDescription
			n.Desc = nodeDesc(n.DescRaw[:])
			byGUID[n.GUID] = n
			f.Nodes = append(f.Nodes, n)
		}
		if n.Type == mad.NodeTypeSwitch {
			switchByLID[lid] = n
			switchPorts[lid] = make([]Port, n.NumPorts+1)
			if noPortInfo {
				n.SMALID = lid
				for num := range switchPorts[lid] {
					p := &switchPorts[lid][num]
					*p = n.newPort(num)
					p.BaseLID = lid
					n.Ports[num] = p
				}
			}
			continue
		}
		num := int(ni.LocalPortNum)
		if num < 1 || num > n.NumPorts {
			return nil, fmt.Errorf("SA discovery: NodeRecord of LID %d: port %d of a %d-port node", lid, num, n.NumPorts)
		}
		p := n.port(num)
		p.GUID = ni.PortGUID
		if noPortInfo {
			p.BaseLID = lid
		}
		caPortByLID[lid] = p
		caInfo[p] = ni
	}
	// portAt finds the port an SA record names by LID and number.
	portAt := func(lid rdma.LID, num int) *Port {
		if int(lid) > top {
			return nil
		}
		if n := switchByLID[lid]; n != nil {
			if num > n.NumPorts {
				return nil
			}
			if p := n.Ports[num]; p != nil {
				return p
			}
			p := &switchPorts[lid][num]
			*p = n.newPort(num)
			n.Ports[num] = p
			return p
		}
		if p := caPortByLID[lid]; p != nil && p.Num == num {
			return p
		}
		return nil
	}
	ports := make([]mad.PortInfoRecord, len(portRecs)) // one allocation for them all
	for i, r := range portRecs {
		rec := &ports[i]
		if err := rec.UnmarshalBinary(r); err != nil {
			return nil, fmt.Errorf("SA discovery: %w", err)
		}
		p := portAt(rdma.LID(rec.EndportLID), int(rec.PortNum))
		if p == nil {
			continue
		}
		copy(p.InfoRaw[:], r[portInfoAt:portInfoAt+portInfoLen])
		p.Info = &rec.PortInfo
	}
	for _, r := range switchRecs {
		var rec mad.SwitchInfoRecord
		if err := rec.UnmarshalBinary(r); err != nil {
			return nil, fmt.Errorf("SA discovery: %w", err)
		}
		lid := int(rec.LID)
		if lid > top || switchByLID[lid] == nil {
			continue
		}
		n := switchByLID[lid]
		copy(n.SwitchInfoRaw[:], r[switchInfoAt:switchInfoAt+switchInfoLen])
		n.SwitchInfo, n.EnhancedPort0 = &rec.SwitchInfo, rec.SwitchInfo.EnhancedPort0 != 0
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Info != nil {
				p.BaseLID, p.LMC = rdma.LID(p.Info.LID), p.Info.LMC
			}
		}
		if n.Type == mad.NodeTypeSwitch && n.Ports[0] != nil {
			n.SMALID, n.SMALMC = n.Ports[0].BaseLID, n.Ports[0].LMC
			for _, p := range n.Ports[1:] {
				if p != nil {
					p.BaseLID, p.LMC = n.SMALID, n.SMALMC
				}
			}
		}
	}
	for _, r := range linkRecs {
		var rec mad.LinkRecord
		if err := rec.UnmarshalBinary(r); err != nil {
			return nil, fmt.Errorf("SA discovery: %w", err)
		}
		a := portAt(rdma.LID(rec.FromLID), int(rec.FromPort))
		b := portAt(rdma.LID(rec.ToLID), int(rec.ToPort))
		if a != nil && b != nil && (noPortInfo || a.Info != nil && b.Info != nil) {
			link(a, b)
		}
	}

	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.GUID == local && (n.Type != mad.NodeTypeSwitch || p.Num == 0) {
				f.From, f.FromPort = n, p.Num
			}
		}
	}
	if f.From == nil {
		return nil, fmt.Errorf("SA discovery: the SA has no record of the local port %s", local)
	}
	if p := f.From.Port(f.FromPort); p == nil || !f.portKnown(p) {
		return nil, fmt.Errorf("SA discovery: the SA has no PortInfoRecord of the local port %s", local)
	}
	f.replay([]uint8{0}, false)
	// Each node's NodeInfo as the walk's first NodeInfo would have read
	// it: LocalPortNum the port it entered by, and for a CA that port's
	// GUID.
	for _, v := range f.Visits {
		if !v.New {
			continue
		}
		n := v.Node
		if ni, ok := caInfo[n.Port(v.Port)]; ok {
			n.Info = ni
		}
		n.Info.LocalPortNum = uint8(v.Port)
		n.Info.AppendBinary(n.InfoRaw[:0])
		n.entry = uint8(v.Port)
	}
	return f, nil
}
