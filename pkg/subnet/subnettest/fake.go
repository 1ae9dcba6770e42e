package subnettest

import (
	"cmp"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// Fabric is a set of nodes and the port SMPs enter it by.
type Fabric struct {
	Nodes []*Node
	// Local is the node the transport is attached to, LocalPort its port.
	Local     *Node
	LocalPort int

	mu    sync.Mutex
	asked map[string]int // "attr path" -> times asked
	sent  atomic.Int64
}

// Node is one node of a fake fabric.
type Node struct {
	ID       string // the net file's node ID
	Type     mad.NodeType
	GUID     rdma.GUID
	Desc     string
	DeviceID uint16
	VendorID uint32
	// SystemImageGUID is NodeInfo's; 0 gives the node's GUID.
	SystemImageGUID rdma.GUID
	Ports           []*Port // 0..N; a CA's port 0 is nil
	// Dead nodes answer nothing.
	Dead bool
	// NoLIDRoute nodes answer only directed-route SMPs, as a switch
	// whose LFT does not lead there.
	NoLIDRoute bool
	// DropEvery, when not 0, drops every DropEvery-th SMP to the node;
	// a resend of a dropped SMP (same TID) goes through.
	DropEvery int
	drops     int
	dropped   map[uint64]bool
	// LFT is a switch's linear forwarding table, by LID (Fabric.Route
	// fills it); MFT its multicast table: each MLID's ports (Node.Join).
	LFT []uint8
	MFT map[uint16][]bool
}

// Port is one port of a fake node.
type Port struct {
	Node   *Node
	Num    int
	GUID   rdma.GUID
	LID    rdma.LID
	LMC    uint8
	Remote *Port
	// Down ports keep their cable but the link is not up.
	Down bool
	// Speed and Width are LinkSpeedActive and LinkWidthActive.
	Speed   mad.LinkSpeed
	Width   mad.LinkWidth
	CapMask uint32
	// FDR10 makes the port's MlnxExtPortInfo say it runs FDR10 (a
	// Mellanox link that PortInfo shows as QDR).
	FDR10 bool
}

// FromNet builds a fabric from an ibsim net file, numbering GUIDs as ibsim
// does (switches from 0x200000, CAs from 0x100000 with a GUID for each
// port) and LIDs in file order; it attaches to port 1 of the node named
// local.
func FromNet(data, local string) (*Fabric, error) {
	net, err := simfabric.ParseNet("net", []byte(data))
	if err != nil {
		return nil, err
	}
	f := &Fabric{asked: make(map[string]int)}
	byID := make(map[string]*Node)
	swGUID, caGUID := rdma.GUID(0x200000), rdma.GUID(0x100000)
	lid := rdma.LID(1)
	for _, nn := range net.Nodes {
		n := &Node{ID: nn.ID, Desc: nn.Desc, VendorID: 0, DeviceID: 0}
		if n.Desc == "" {
			n.Desc = nn.ID
		}
		n.Ports = make([]*Port, nn.Ports+1)
		if nn.Type == simfabric.NodeSwitch {
			n.Type, n.GUID = mad.NodeTypeSwitch, swGUID
			swGUID++
			n.Ports[0] = &Port{Node: n, Num: 0, GUID: n.GUID, LID: lid, CapMask: 0x00000008}
			lid++
			for i := 1; i <= nn.Ports; i++ {
				n.Ports[i] = &Port{Node: n, Num: i, GUID: n.GUID, Speed: mad.LinkSpeedSDR, Width: mad.LinkWidth4X}
			}
		} else {
			n.Type, n.GUID = mad.NodeTypeCA, caGUID
			caGUID++
			for i := 1; i <= nn.Ports; i++ {
				n.Ports[i] = &Port{Node: n, Num: i, GUID: caGUID, LID: lid, Speed: mad.LinkSpeedSDR, Width: mad.LinkWidth4X, CapMask: 0x02010048}
				caGUID++
				lid++
			}
		}
		byID[n.ID] = n
		f.Nodes = append(f.Nodes, n)
	}
	for _, nn := range net.Nodes {
		for _, l := range nn.Links {
			a, b := byID[nn.ID], byID[l.RemoteID]
			if b == nil || l.Port >= len(a.Ports) || l.RemotePort >= len(b.Ports) {
				return nil, fmt.Errorf("%s[%d]: no node %q port %d", nn.ID, l.Port, l.RemoteID, l.RemotePort)
			}
			pa, pb := a.Ports[l.Port], b.Ports[l.RemotePort]
			pa.Remote, pb.Remote = pb, pa
		}
	}
	if f.Local = byID[local]; f.Local == nil {
		return nil, fmt.Errorf("no node %q", local)
	}
	f.LocalPort = 1
	if f.Local.Type == mad.NodeTypeSwitch {
		f.LocalPort = 0
	}
	return f, nil
}

// Node returns the node with the net file ID.
func (f *Fabric) Node(id string) *Node {
	for _, n := range f.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// Transport returns a transport attached to the fabric's local port.
func (f *Fabric) Transport() *madtest.Transport { return madtest.New(f.Handle) }

// Sent returns how many SMPs reached the fabric.
func (f *Fabric) Sent() int { return int(f.sent.Load()) }

// Asked returns how many times the attribute was asked along the
// directed route with the modifier, written "PortInfo 0,1,3:2".
func (f *Fabric) Asked(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked[key]
}

// Repeats returns the SMPs asked more than once, with their counts.
func (f *Fabric) Repeats() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int)
	for k, v := range f.asked {
		if v > 1 {
			out[k] = v
		}
	}
	return out
}

// Handle answers one SMP: madtest's Handler.
func (f *Fabric) Handle(req *mad.Packet) []mad.Packet {
	f.sent.Add(1)
	var h mad.Header
	if h.UnmarshalBinary(req.MAD) != nil || h.Method != mad.MethodGet {
		return nil
	}
	var n *Node
	var entry int
	var route string
	switch h.MgmtClass {
	case mad.ClassSMIDirect:
		var dr mad.DRSMPHeader
		dr.UnmarshalBinary(req.MAD)
		n, entry = f.walk(dr.InitialPath[:dr.HopCount+1])
		route = subnet.FormatPath(dr.InitialPath[:dr.HopCount+1])
	case mad.ClassSMI:
		n, entry = f.byLID(req.Addr.LID)
		route = fmt.Sprintf("lid %d", req.Addr.LID)
		if n != nil && n.NoLIDRoute {
			return nil
		}
	default:
		return nil
	}
	if n == nil || n.Dead {
		return nil
	}
	f.mu.Lock()
	f.asked[fmt.Sprintf("%s %s:%d", attrName(h.AttrID), route, h.AttrMod)]++
	drop := false
	if tid := madtest.TID(req); n.DropEvery > 0 && !n.dropped[tid] {
		n.drops++
		if drop = n.drops%n.DropEvery == 0; drop {
			if n.dropped == nil {
				n.dropped = make(map[uint64]bool)
			}
			n.dropped[tid] = true
		}
	}
	f.mu.Unlock()
	if drop {
		return []mad.Packet{madtest.Dropped(req)}
	}
	data, st := n.answer(h.AttrID, h.AttrMod, entry)
	return []mad.Packet{madtest.Reply(req, st, mad.SMPDataOffset, data)}
}

// walk follows a directed route from the local port; it returns the node
// reached and the port the SMP entered it by, or nil where the route
// breaks.
func (f *Fabric) walk(path []byte) (*Node, int) {
	n, entry := f.Local, f.LocalPort
	for i := 1; i < len(path); i++ {
		if n.Dead || (n.Type != mad.NodeTypeSwitch && i > 1) {
			return nil, 0
		}
		out := int(path[i])
		if out == 0 || out >= len(n.Ports) {
			return nil, 0
		}
		p := n.Ports[out]
		if p.Remote == nil || p.Down || p.Remote.Down {
			return nil, 0
		}
		n, entry = p.Remote.Node, p.Remote.Num
	}
	return n, entry
}

// byLID returns the node holding lid and the port it is on.
func (f *Fabric) byLID(lid rdma.LID) (*Node, int) {
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.LID != 0 && lid >= p.LID && int(lid) < int(p.LID)+1<<p.LMC {
				return n, p.Num
			}
		}
	}
	return nil, 0
}

const (
	statusBadAttr mad.Status = 0x0c // unsupported method/attribute combination
	statusBadMod  mad.Status = 0x1c // invalid attribute or modifier
)

// answer builds the attribute data of a SubnGet.
func (n *Node) answer(id mad.AttrID, mod uint32, entry int) ([]byte, mad.Status) {
	var a interface{ MarshalBinary() ([]byte, error) }
	switch id {
	case mad.AttrNodeInfo:
		ni := &mad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: n.Type, NumPorts: uint8(len(n.Ports) - 1),
			SystemImageGUID: cmp.Or(n.SystemImageGUID, n.GUID), NodeGUID: n.GUID, PortGUID: n.Ports[max(entry, 0)].GUID, PartitionCap: 64,
			DeviceID: n.DeviceID, LocalPortNum: uint8(entry), VendorID: n.VendorID}
		a = ni
	case mad.AttrNodeDescription:
		var d mad.NodeDescription
		copy(d.NodeDescription[:], n.Desc)
		a = &d
	case mad.AttrSwitchInfo:
		if n.Type != mad.NodeTypeSwitch {
			return nil, statusBadAttr
		}
		a = &mad.SwitchInfo{LinearFDBCap: 0xc000, MulticastFDBCap: 0x200, LinearFDBTop: 0x10, LifeTimeValue: 18}
	case mad.AttrMlnxExtPortInfo:
		num := int(mod & 0xff)
		if num >= len(n.Ports) || n.Ports[num] == nil {
			return nil, statusBadMod
		}
		e := &mad.MlnxExtPortInfo{LinkSpeedSupported: 1}
		if n.Ports[num].FDR10 {
			e.LinkSpeedActive, e.LinkSpeedEnabled = 1, 1
		}
		a = e
	case mad.AttrPortInfo:
		num := int(mod & 0xff)
		if n.Type != mad.NodeTypeSwitch && num == 0 {
			num = entry
		}
		if num >= len(n.Ports) || n.Ports[num] == nil {
			return nil, statusBadMod
		}
		a = n.Ports[num].info(entry)
	default:
		return n.answerForwarding(id, mod)
	}
	data, err := a.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return data, 0
}

// info returns the port's PortInfo as asked through entry.
func (p *Port) info(entry int) *mad.PortInfo {
	lidPort := p
	if p.Node.Type == mad.NodeTypeSwitch {
		lidPort = p.Node.Ports[0]
	}
	pi := &mad.PortInfo{LID: uint16(lidPort.LID), LMC: lidPort.LMC, CapabilityMask: p.CapMask,
		LocalPortNum: uint8(entry), LinkWidthEnabled: mad.LinkWidthEnabled(mad.LinkWidth1X | mad.LinkWidth4X), LinkWidthSupported: mad.LinkWidthSupported(mad.LinkWidth1X | mad.LinkWidth4X), LinkWidthActive: p.Width,
		LinkSpeedSupported: mad.LinkSpeedSupported(mad.LinkSpeedSDR), LinkSpeedActive: p.Speed, LinkSpeedEnabled: mad.LinkSpeedEnabled(mad.LinkSpeedSDR),
		VLCap: mad.VLCapVL0To7, MTUCap: mad.MTU2048, NeighborMTU: mad.MTU2048}
	switch {
	case p.Num == 0:
		pi.LinkState, pi.PhysLinkState = mad.PortStateActive, mad.PhysPortStateLinkUp
	case p.Remote == nil:
		pi.LinkState, pi.PhysLinkState = mad.PortStateDown, mad.PhysPortStatePolling
	case p.Down || p.Remote.Down:
		pi.LinkState, pi.PhysLinkState = mad.PortStateDown, mad.PhysPortStateDisabled
	default:
		pi.LinkState, pi.PhysLinkState = mad.PortStateActive, mad.PhysPortStateLinkUp
	}
	return pi
}

func attrName(id mad.AttrID) string {
	switch id {
	case mad.AttrNodeInfo:
		return "NodeInfo"
	case mad.AttrNodeDescription:
		return "NodeDesc"
	case mad.AttrPortInfo:
		return "PortInfo"
	case mad.AttrSwitchInfo:
		return "SwitchInfo"
	case mad.AttrMlnxExtPortInfo:
		return "MlnxExtPortInfo"
	case mad.AttrLinearForwardingTable:
		return "LinearForwardingTable"
	case mad.AttrMulticastForwardingTable:
		return "MulticastForwardingTable"
	}
	return fmt.Sprintf("%#04x", uint16(id))
}
