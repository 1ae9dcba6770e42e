package exporter

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// Device is what a sweep reads at one PMA, as infiniband_exporter groups
// ibnetdiscover's port lines: a switch (its connected ports), or one
// connected port of a CA (its port GUID names the device).
type Device struct {
	Type mad.NodeType
	// GUID is the device's label: a switch's GUID, a CA port's GUID.
	GUID rdma.GUID
	// LID is where its PMA is asked: the switch's port 0, the CA port.
	LID  rdma.LID
	Node *subnet.Node
	// Name is the node's name in the node name map, else its
	// description.
	Name string
	// Ports are the ports read, the connected ones, by number.
	Ports []*subnet.Port

	// caps are the PMA's capabilities once read: they are asked once
	// per topology.
	caps atomic.Pointer[mad.PMACapabilities]
}

// capPort is the port a device's ClassPortInfo is asked for, as
// ibqueryerrors asks it: 0 at a switch, the port at a CA.
func (d *Device) capPort() int {
	if d.Type == mad.NodeTypeSwitch {
		return 0
	}
	return d.Ports[0].Num
}

// Topology is one discovery of the fabric and the devices to read in it.
type Topology struct {
	Fabric *subnet.Fabric
	// Switches and CAs are the devices, switches by node, CA ports each
	// on their own, in the fabric's order.
	Switches []*Device
	CAs      []*Device
	// Time is when the discovery ended and Duration how long it took.
	Time     time.Time
	Duration time.Duration

	// all are the switches and the CAs: the devices of a sweep of both,
	// the same slice every time, so that sweeps can be shared.
	all   []*Device
	names *nodemap.Map
	views views
}

// NewTopology groups a discovered fabric's nodes into devices. Routers
// and ports without a link are left out, as infiniband_exporter leaves
// them; so is a device without a LID, which no PMA query can reach.
func NewTopology(fab *subnet.Fabric, names *nodemap.Map) *Topology {
	t := &Topology{Fabric: fab, names: names}
	for _, n := range fab.Nodes {
		name := names.Name(uint64(n.GUID), n.Desc)
		switch n.Type {
		case mad.NodeTypeSwitch:
			d := &Device{Type: n.Type, GUID: n.Info.PortGUID, LID: n.SMALID, Node: n, Name: name}
			if p := n.Port(0); p != nil {
				d.GUID = p.GUID
			}
			for num := 1; num <= n.NumPorts; num++ {
				if p := n.Port(num); p != nil && p.Remote != nil {
					d.Ports = append(d.Ports, p)
				}
			}
			if len(d.Ports) > 0 && d.LID != 0 {
				t.Switches = append(t.Switches, d)
			}
		case mad.NodeTypeCA:
			for num := 1; num <= n.NumPorts; num++ {
				p := n.Port(num)
				if p == nil || p.Remote == nil || p.BaseLID == 0 {
					continue
				}
				t.CAs = append(t.CAs, &Device{Type: n.Type, GUID: p.GUID, LID: p.BaseLID, Node: n, Name: name, Ports: []*subnet.Port{p}})
			}
		}
	}
	t.all = append(append(make([]*Device, 0, len(t.Switches)+len(t.CAs)), t.Switches...), t.CAs...)
	return t
}

// Refresher keeps the current topology: it discovers the fabric at
// start and again every Interval, keeping the last good topology when a
// discovery fails.
type Refresher struct {
	// Discover walks the fabric.
	Discover func(ctx context.Context) (*subnet.Fabric, error)
	// Names name the nodes (nil: their descriptions).
	Names *nodemap.Map
	// Interval is the time between discoveries; RetryInterval, shorter,
	// the time before trying again after a failure.
	Interval, RetryInterval time.Duration
	// Log, when set, is told of each failed discovery.
	Log func(format string, a ...any)

	mu     sync.Mutex
	cur    *Topology
	status DiscoveryStatus
}

// DiscoveryStatus is what the last discovery did: infiniband_exporter's
// ibnetdiscover collector reports it.
type DiscoveryStatus struct {
	// Errors is 1 when the last discovery failed, else the number of
	// its queries that failed (a partial fabric).
	Errors   int
	Duration time.Duration
	Err      error
}

// Current returns the topology in use, nil before the first discovery
// succeeded, and the last discovery's status.
func (r *Refresher) Current() (*Topology, DiscoveryStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur, r.status
}

// Refresh discovers the fabric once and makes it current when the walk
// succeeded, even partly (the partial fabric's failed queries count in the
// status).
func (r *Refresher) Refresh(ctx context.Context) error {
	start := time.Now()
	fab, err := r.Discover(ctx)
	st := DiscoveryStatus{Duration: time.Since(start), Err: err}
	var t *Topology
	if err != nil {
		st.Errors = 1
		if r.Log != nil {
			r.Log("discovery failed: %v", err)
		}
	} else {
		st.Errors = len(fab.Errors)
		t = NewTopology(fab, r.Names)
		t.Time, t.Duration = time.Now(), st.Duration
		if r.Log != nil {
			for _, e := range fab.Errors {
				r.Log("discovery: %v", e)
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = st
	if t != nil {
		r.cur = t
	}
	return err
}

// Run refreshes the topology every Interval (every RetryInterval after
// a failure) until ctx ends. The first refresh is Run's caller's.
func (r *Refresher) Run(ctx context.Context, lastErr error) {
	for {
		wait := r.Interval
		if lastErr != nil && r.RetryInterval > 0 && r.RetryInterval < wait {
			wait = r.RetryInterval
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		lastErr = r.Refresh(ctx)
	}
}
