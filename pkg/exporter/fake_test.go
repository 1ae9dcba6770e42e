package exporter

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// fakePMA answers PerfMgt Gets as one node's PMA: its ClassPortInfo
// capabilities and each port's counters; dead leaves every request
// unanswered, delay holds every answer back.
type fakePMA struct {
	caps mad.PMACapabilities
	pc   map[int]mad.PortCounters
	pce  map[int]mad.PortCountersExtended
	// red are the ports' PortRcvErrorDetails; nil: the PMA has none.
	red   map[int]mad.PortRcvErrorDetails
	dead  bool
	delay time.Duration
}

// fakeFabric routes PerfMgt requests to fake PMAs by LID and counts them.
type fakeFabric struct {
	mu   sync.Mutex
	pmas map[rdma.LID]*fakePMA
	gets atomic.Int64
	// wait, when set, holds every answer until it is closed.
	wait chan struct{}
}

func (f *fakeFabric) handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	if err := h.UnmarshalBinary(req.MAD); err != nil || h.MgmtClass != mad.ClassPerf {
		return nil
	}
	f.gets.Add(1)
	f.mu.Lock()
	p := f.pmas[req.Addr.LID]
	f.mu.Unlock()
	if p == nil || p.dead {
		return nil
	}
	if f.wait != nil {
		<-f.wait
	}
	if p.delay > 0 {
		time.Sleep(p.delay)
	}
	port := int(req.MAD[mad.SMPDataOffset+1])
	var a mad.Attribute
	switch h.AttrID {
	case mad.AttrClassPortInfo:
		a = &mad.ClassPortInfo{CapabilityMask: uint16(p.caps.Mask), CapabilityMask2: uint32(p.caps.Mask2)}
	case mad.AttrPortCounters:
		pc := p.pc[port]
		pc.PortSelect = uint8(port)
		a = &pc
	case mad.AttrPortCountersExtended:
		pce := p.pce[port]
		pce.PortSelect = uint8(port)
		a = &pce
	case mad.AttrPortRcvErrorDetails:
		if p.red == nil {
			return []mad.Packet{madtest.Reply(req, mad.StatusMethodAttrUnsupported, mad.SMPDataOffset, nil)}
		}
		red := p.red[port]
		red.PortSelect = uint8(port)
		a = &red
	default:
		return []mad.Packet{madtest.Reply(req, mad.StatusMethodAttrUnsupported, mad.SMPDataOffset, nil)}
	}
	data, _ := a.AppendBinary(nil)
	return []mad.Packet{madtest.Reply(req, mad.StatusOK, mad.SMPDataOffset, data)}
}

// newFakeTransactor returns a transactor on f with a short timeout and
// no retries.
func newFakeTransactor(f *fakeFabric, timeout time.Duration) *madrpc.Transactor {
	return madrpc.NewTransactor(madtest.New(f.handle), madrpc.TransactorOptions{Timeout: timeout, Retries: -1, Window: 8})
}

// fakeSwitch returns a switch device at lid with the given connected
// ports, each linked to a CA.
func fakeSwitch(guid rdma.GUID, lid rdma.LID, ports ...int) *Device {
	n := &subnet.Node{GUID: guid, Type: mad.NodeTypeSwitch, NumPorts: 8, SMALID: lid, Desc: "sw"}
	n.Ports = make([]*subnet.Port, 9)
	n.Ports[0] = &subnet.Port{Node: n, Num: 0, GUID: guid}
	d := &Device{Type: mad.NodeTypeSwitch, GUID: guid, LID: lid, Node: n, Name: "sw"}
	for _, num := range ports {
		p := &subnet.Port{Node: n, Num: num, GUID: guid}
		n.Ports[num] = p
		d.Ports = append(d.Ports, p)
	}
	return d
}
