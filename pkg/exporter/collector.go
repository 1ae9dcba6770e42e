package exporter

import (
	"context"
	"strconv"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// Collector makes one scrape's metrics: the topology's information
// metrics and the counters of one sweep.
type Collector struct {
	// Switch and HCA are --collector.switch and --collector.hca.
	Switch, HCA bool
	// RunOnce names the collectors "switch-runonce" and so on and adds
	// infiniband_exporter_last_execution, as infiniband_exporter's
	// --exporter.runonce does.
	RunOnce bool
	// Topology returns the current topology (nil: none yet) and the
	// last discovery's status.
	Topology func() (*Topology, DiscoveryStatus)
	Sweeper  *Sweeper
	// Now is the clock (tests set it).
	Now func() time.Time
}

// Summary counts what went wrong in one scrape.
type Summary struct {
	Devices, Errors, Timeouts int
	// DiscoveryErr is the last discovery's error, nil when it succeeded.
	DiscoveryErr error
	// Failed are the devices with errors or timeouts.
	Failed []*DeviceResult
}

func (c *Collector) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Collector) collectorName(name string) string {
	if c.RunOnce {
		return name + "-runonce"
	}
	return name
}

// Collect reads the counters once (sharing a sweep running for another
// scrape) and returns the samples. What did not answer before ctx ended
// is left out and counted as a timeout.
func (c *Collector) Collect(ctx context.Context) ([]Sample, Summary) {
	var out []Sample
	add := func(d *Desc, v float64, values ...string) {
		out = append(out, Sample{Desc: d, Values: values, Value: v})
	}
	topo, st := c.Topology()
	sum := Summary{DiscoveryErr: st.Err}
	disc := c.collectorName("ibnetdiscover")
	add(collectErrors, float64(st.Errors), disc)
	add(collectTimeouts, 0, disc)
	add(collectDuration, st.Duration.Seconds(), disc)
	if c.RunOnce {
		add(lastExecution, float64(c.now().Unix()), disc)
	}
	if topo == nil {
		return out, sum
	}
	var devices []*Device
	switch {
	case c.Switch && c.HCA:
		devices = topo.all
	case c.Switch:
		devices = topo.Switches
	case c.HCA:
		devices = topo.CAs
	}
	start := c.now()
	results := c.Sweeper.Sweep(ctx, devices)
	elapsed := c.now().Sub(start).Seconds()
	type tally struct{ errors, timeouts int }
	var counts [2]tally // switch, hca
	for _, r := range results {
		d := r.Device
		descs, k, name := switchDescs, 0, c.collectorName("switch")
		if d.Type != mad.NodeTypeSwitch {
			descs, k, name = hcaDescs, 1, c.collectorName("hca")
		}
		guid := d.GUID.String()
		sum.Devices++
		var errV, toV float64
		switch {
		case r.Timeout:
			toV = 1
			counts[k].timeouts++
			sum.Timeouts++
			sum.Failed = append(sum.Failed, r)
		case r.Err != nil:
			errV = 1
			counts[k].errors++
			sum.Errors++
			sum.Failed = append(sum.Failed, r)
		}
		add(descs.info, 1, guid, d.Name, strconv.Itoa(int(d.LID)))
		add(descs.duration, r.Duration.Seconds(), guid, name)
		add(descs.timeout, toV, guid, name)
		add(descs.error, errV, guid, name)
		for _, p := range d.Ports {
			out = appendPort(out, topo, descs, d, p)
		}
		for _, pr := range r.Ports {
			port := strconv.Itoa(pr.Port)
			for i, desc := range descs.counters {
				if pr.Present&(1<<i) == 0 {
					continue
				}
				v := float64(pr.Values[i])
				if counters[i].kind == kindData {
					v *= 4
				}
				add(desc, v, guid, port)
				if pr.Saturated&(1<<i) != 0 {
					add(saturated, 1, guid, port, counters[i].field)
				}
			}
		}
	}
	for k, on := range []bool{c.Switch, c.HCA} {
		if !on {
			continue
		}
		name := c.collectorName([]string{"switch", "hca"}[k])
		add(collectErrors, float64(counts[k].errors), name)
		add(collectTimeouts, float64(counts[k].timeouts), name)
		add(collectDuration, elapsed, name)
		if c.RunOnce {
			add(lastExecution, float64(c.now().Unix()), name)
		}
	}
	return out, sum
}

// appendPort adds what the topology says of one port of d: its rate and
// uplink as infiniband_exporter reports them, and ibtool's port metrics.
func appendPort(out []Sample, topo *Topology, descs *deviceDescs, d *Device, p *subnet.Port) []Sample {
	add := func(desc *Desc, v float64, values ...string) {
		out = append(out, Sample{Desc: desc, Values: values, Value: v})
	}
	guid, port := d.GUID.String(), strconv.Itoa(p.Num)
	rate, rateOK := activeRate(p)
	width := 0
	if p.Info != nil {
		width = lanes(uint8(p.Info.LinkWidthActive))
	}
	if rateOK && width > 0 {
		raw := float64(width) * rate.raw * 1e9 / 8
		eff := float64(width) * rate.effective * 1e9 / 8
		if d.Type == mad.NodeTypeSwitch {
			add(descs.rate, eff, guid, port)
			add(descs.rawRate, raw, guid, port)
		} else {
			add(descs.rate, eff, guid)
			add(descs.rawRate, raw, guid)
		}
	}
	if r := p.Remote; r != nil {
		rn := r.Node
		add(descs.uplink, 1, guid, port, d.Name, topo.names.Name(uint64(rn.GUID), rn.Desc), r.GUID.String(), typeCode(rn.Type),
			strconv.Itoa(r.Num), strconv.Itoa(int(r.LID())))
	}
	add(portInfo, 1, guid, port, typeCode(d.Type), d.Node.GUID.String(), strconv.Itoa(int(d.LID)), d.Name, d.Node.Desc)
	if p.Info == nil {
		return out
	}
	add(linkState, float64(p.Info.LinkState), guid, port)
	add(physState, float64(p.Info.PhysLinkState), guid, port)
	if width > 0 {
		add(widthActive, float64(width), guid, port)
	}
	if n := enabledLanes(p); n > 0 {
		add(widthEnabled, float64(n), guid, port)
	}
	if rateOK {
		add(speedActive, rate.raw*1e9/8, guid, port)
	}
	if r, ok := enabledRate(p); ok {
		add(speedEnabled, r.raw*1e9/8, guid, port)
	}
	return out
}
