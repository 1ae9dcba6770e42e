package exporter

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// Prefetch reads the counters of the devices a discovery reports while
// the discovery still walks the fabric (subnet.Options.PortsRead), for
// the sweep that follows it: --exporter.runonce overlaps its discovery
// and its sweep this way. The next Sweep takes a prefetched reading for
// each device whose LID and ports the discovered topology confirms, and
// reads the others itself.
type Prefetch struct {
	s             *Sweeper
	ctx           context.Context
	switches, cas bool
	start         time.Time

	mu     sync.Mutex
	ready  *sync.Cond // a device queued, or Close
	queue  []*prefetched
	closed bool
	byKey  map[prefetchKey]*prefetched
}

// prefetchKey names a device as NewTopology makes it: a switch by its
// port 0's GUID, a CA port by its own.
type prefetchKey struct {
	typ  mad.NodeType
	guid rdma.GUID
}

// prefetched is one device a prefetch reads; done closes when r is set.
type prefetched struct {
	d    *Device
	done chan struct{}
	r    *DeviceResult
}

// Prefetch starts reading the counters of the switches (switches) and
// the CA ports (cas) that PortsRead is given, until ctx ends, and gives
// the next Sweep what it read. Close it when the discovery is over.
func (s *Sweeper) Prefetch(ctx context.Context, switches, cas bool) *Prefetch {
	p := &Prefetch{s: s, ctx: ctx, switches: switches, cas: cas, start: time.Now(), byKey: map[prefetchKey]*prefetched{}}
	p.ready = sync.NewCond(&p.mu)
	s.mu.Lock()
	s.prefetch = p
	s.mu.Unlock()
	go func() {
		<-ctx.Done()
		p.Close()
	}()
	for range max(1, s.X.Window()) {
		go p.work()
	}
	return p
}

// PortsRead queues the devices of what one step of a walk read of a
// node, as NewTopology will make them: a switch with a LID, its ports
// whose link is up; each CA port with a LID and its link up. It is a
// subnet.Options.PortsRead, and does not wait for the reads.
func (p *Prefetch) PortsRead(np subnet.NodePorts) {
	var devs []*Device
	switch np.Info.NodeType {
	case mad.NodeTypeSwitch:
		if !p.switches {
			return
		}
		d := &Device{Type: mad.NodeTypeSwitch, GUID: np.Info.PortGUID}
		for _, r := range np.Ports {
			switch {
			case r.Num == 0:
				d.GUID, d.LID = r.GUID, r.LID
			case r.Info.PhysLinkState == mad.PhysPortStateLinkUp:
				d.Ports = append(d.Ports, &subnet.Port{Num: r.Num})
			}
		}
		if d.LID != 0 && len(d.Ports) > 0 {
			devs = append(devs, d)
		}
	case mad.NodeTypeCA:
		if !p.cas {
			return
		}
		for _, r := range np.Ports {
			if r.LID != 0 && r.Info.PhysLinkState == mad.PhysPortStateLinkUp {
				devs = append(devs, &Device{Type: mad.NodeTypeCA, GUID: r.GUID, LID: r.LID, Ports: []*subnet.Port{{Num: r.Num}}})
			}
		}
	}
	if len(devs) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	for _, d := range devs {
		k := prefetchKey{d.Type, d.GUID}
		if _, dup := p.byKey[k]; dup {
			continue
		}
		pf := &prefetched{d: d, done: make(chan struct{})}
		p.byKey[k] = pf
		p.queue = append(p.queue, pf)
	}
	p.ready.Broadcast()
}

// Close ends the queue: the devices queued are still read, and the
// devices the walk reports from now on are not.
func (p *Prefetch) Close() {
	p.mu.Lock()
	p.closed = true
	p.ready.Broadcast()
	p.mu.Unlock()
}

// work reads queued devices until the queue is closed and empty, or ctx
// ends.
func (p *Prefetch) work() {
	for {
		p.mu.Lock()
		for len(p.queue) == 0 && !p.closed {
			p.ready.Wait()
		}
		if len(p.queue) == 0 || p.ctx.Err() != nil {
			p.mu.Unlock()
			return
		}
		pf := p.queue[0]
		p.queue = p.queue[1:]
		p.mu.Unlock()
		pf.r = p.s.device(p.ctx, pf.d)
		close(pf.done)
	}
}

// take returns the prefetched reading of d, waiting for it, when the
// prefetch read a device of d's LID and ports; ok is false when it did
// not, or ctx ended first.
func (p *Prefetch) take(ctx context.Context, d *Device) (r *DeviceResult, ok bool) {
	p.mu.Lock()
	pf := p.byKey[prefetchKey{d.Type, d.GUID}]
	p.mu.Unlock()
	if pf == nil || pf.d.LID != d.LID || !slices.EqualFunc(pf.d.Ports, d.Ports, func(a, b *subnet.Port) bool { return a.Num == b.Num }) {
		return nil, false
	}
	select {
	case <-pf.done:
	case <-ctx.Done():
		return nil, false
	}
	if pf.r.Err != nil && p.ctx.Err() != nil {
		return nil, false // cut short by the prefetch's end
	}
	if c := pf.d.caps.Load(); c != nil {
		d.caps.Store(c)
	}
	taken := *pf.r
	taken.Device = d
	return &taken, true
}

// pending is the Prefetch the next sweep takes readings from, nil when
// there is none.
func (s *Sweeper) pending() *Prefetch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prefetch
}
