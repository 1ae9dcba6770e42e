package exporter

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// switchPorts is what a walk reports of a switch: port 0 with its LID,
// and ports 1..8, those in up linked.
func switchPorts(guid rdma.GUID, lid rdma.LID, up ...int) subnet.NodePorts {
	np := subnet.NodePorts{Info: mad.NodeInfo{NodeType: mad.NodeTypeSwitch, NodeGUID: guid, PortGUID: guid, NumPorts: 8}}
	np.Ports = append(np.Ports, subnet.PortRead{Num: 0, GUID: guid, LID: lid})
	for num := 1; num <= 8; num++ {
		r := subnet.PortRead{Num: num, GUID: guid, LID: lid}
		r.Info.PhysLinkState = mad.PhysPortStatePolling
		for _, u := range up {
			if u == num {
				r.Info.PhysLinkState = mad.PhysPortStateLinkUp
			}
		}
		np.Ports = append(np.Ports, r)
	}
	return np
}

// caPort is what a walk reports of one CA port.
func caPort(guid rdma.GUID, lid rdma.LID, num int, up bool) subnet.NodePorts {
	r := subnet.PortRead{Num: num, GUID: guid + rdma.GUID(num), LID: lid}
	if up {
		r.Info.PhysLinkState = mad.PhysPortStateLinkUp
	}
	return subnet.NodePorts{Info: mad.NodeInfo{NodeType: mad.NodeTypeCA, NodeGUID: guid, PortGUID: guid + 1, NumPorts: 2}, Ports: []subnet.PortRead{r}}
}

// TestPrefetch: the sweep after a prefetch takes the prefetched reading
// of each device the topology has with the same LID and ports, and reads
// the others (a device the walk did not report, one whose ports or LID
// differ in the topology) itself.
func TestPrefetch(t *testing.T) {
	caps := mad.PMACapabilities{Mask: mad.PMAExtendedWidth, Mask2: mad.PMAAdditionalPortCounters}
	pce := map[int]mad.PortCountersExtended{1: {PortXmitData: 10}, 2: {PortXmitData: 20}, 3: {PortXmitData: 30}}
	pma := func() *fakePMA { return &fakePMA{caps: caps, pce: pce} }
	fab := &fakeFabric{pmas: map[rdma.LID]*fakePMA{1: pma(), 2: pma(), 3: pma(), 4: pma(), 5: pma(), 9: pma()}}
	x := newFakeTransactor(fab, time.Second)
	defer x.Close()
	s := &Sweeper{X: x}
	ctx := context.Background()
	pre := s.Prefetch(ctx, true, true)
	pre.PortsRead(switchPorts(0x100, 1, 1, 2, 3)) // taken
	pre.PortsRead(switchPorts(0x200, 2, 1, 2))    // the topology has port 3 too: read again
	pre.PortsRead(switchPorts(0x300, 3, 1))       // the topology has LID 4: read again
	pre.PortsRead(switchPorts(0x500, 5))          // no port up: not read
	pre.PortsRead(caPort(0x900, 9, 1, true))      // taken
	pre.PortsRead(caPort(0x900, 0, 2, true))      // no LID: not read
	pre.PortsRead(caPort(0xa00, 10, 1, false))    // link down: not read
	pre.Close()
	pre.PortsRead(switchPorts(0x600, 6, 1)) // after Close: not read
	// Every queued read is done before the sweep, so the Gets the sweep
	// sends itself are counted apart: ClassPortInfo and a Get a port, of
	// 3 switches and a CA port.
	const prefetched = 4 + 3 + 2 + 2
	deadline := time.Now().Add(5 * time.Second)
	for fab.gets.Load() < prefetched && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if got := fab.gets.Load(); got != prefetched {
		t.Fatalf("%d PerfMgt Gets by the prefetch, want %d", got, prefetched)
	}
	ca := &Device{Type: mad.NodeTypeCA, GUID: 0x901, LID: 9, Name: "ca", Ports: []*subnet.Port{{Num: 1, GUID: 0x901}}}
	devices := []*Device{fakeSwitch(0x100, 1, 1, 2, 3), fakeSwitch(0x200, 2, 1, 2, 3), fakeSwitch(0x300, 4, 1), fakeSwitch(0x400, 5, 1, 2), ca}
	before := fab.gets.Load()
	results := s.Sweep(ctx, devices)
	// Read again: switch 0x200 (ClassPortInfo and 3 ports), 0x300 at
	// LID 4 (2), 0x400 (ClassPortInfo and 2 ports).
	if got, want := fab.gets.Load()-before, int64(4+2+3); got != want {
		t.Errorf("%d PerfMgt Gets by the sweep, want %d", got, want)
	}
	type res struct {
		GUID  rdma.GUID
		Ports []int
		Err   bool
	}
	var got []res
	for i, r := range results {
		if r.Device != devices[i] {
			t.Errorf("result %d is of device %v, want %v", i, r.Device.GUID, devices[i].GUID)
		}
		g := res{GUID: r.Device.GUID, Err: r.Err != nil}
		for _, p := range r.Ports {
			if p.Read {
				g.Ports = append(g.Ports, p.Port)
			}
		}
		got = append(got, g)
	}
	want := []res{{0x100, []int{1, 2, 3}, false}, {0x200, []int{1, 2, 3}, false}, {0x300, []int{1}, false}, {0x400, []int{1, 2}, false}, {0x901, []int{1}, false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sweep results (-want +got):\n%s", diff)
	}
	if devices[0].caps.Load() == nil {
		t.Error("a prefetched device's PMA capabilities are not kept for the next sweep")
	}
	// The prefetch is used once: the next sweep reads every device
	// (a port a Get: the capabilities are kept).
	before = fab.gets.Load()
	s.Sweep(ctx, devices[:1])
	if got := fab.gets.Load() - before; got != 3 {
		t.Errorf("%d PerfMgt Gets by a second sweep of a switch of 3 ports, want 3", got)
	}
}

// TestPrefetchCancelled: a prefetch whose context ends stops reading,
// and the sweep reads what it had not.
func TestPrefetchCancelled(t *testing.T) {
	caps := mad.PMACapabilities{Mask: mad.PMAExtendedWidth, Mask2: mad.PMAAdditionalPortCounters}
	fab := &fakeFabric{pmas: map[rdma.LID]*fakePMA{1: {caps: caps}}, wait: make(chan struct{})}
	x := newFakeTransactor(fab, time.Second)
	defer x.Close()
	s := &Sweeper{X: x}
	ctx, cancel := context.WithCancel(context.Background())
	pre := s.Prefetch(ctx, true, false)
	pre.PortsRead(switchPorts(0x100, 1, 1))
	for fab.gets.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	close(fab.wait)
	results := s.Sweep(context.Background(), []*Device{fakeSwitch(0x100, 1, 1)})
	if r := results[0]; r.Err != nil || len(r.Ports) != 1 || !r.Ports[0].Read {
		t.Errorf("after a cancelled prefetch: %+v, want port 1 read", r)
	}
}
