package exporter

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtool/ibtool/pkg/mad"
)

// Collector makes one scrape's metrics: the topology's information
// metrics and the counters of one sweep. It is a prometheus.Collector
// (each Collect is a scrape bounded by Timeout); Handler serves scrapes
// bounded by Prometheus' own timeout.
type Collector struct {
	// Switch and HCA are --collector.switch and --collector.hca.
	Switch, HCA bool
	// NoSwitchCounters and NoHCACounters leave the switches' or the
	// CAs' port counters out (infiniband_exporter's
	// --collector.switch.base-metrics=false and
	// --collector.hca.base-metrics=false); the sweep still runs for
	// their collect_error and collect_timeout.
	NoSwitchCounters, NoHCACounters bool
	// RunOnce names the collectors "switch-runonce" and so on and adds
	// infiniband_exporter_last_execution, as infiniband_exporter's
	// --exporter.runonce does.
	RunOnce bool
	// Topology returns the current topology (nil: none yet) and the
	// last discovery's status.
	Topology func() (*Topology, DiscoveryStatus)
	Sweeper  *Sweeper
	// Timeout bounds the sweep of a Collect, which has no context of
	// its own; 0 means DefaultTimeout.
	Timeout time.Duration
	// Now is the clock (tests set it).
	Now func() time.Time
}

// DefaultTimeout is a sweep's longest when nothing says how long a
// scrape may take.
const DefaultTimeout = 2 * time.Minute

// Summary counts what went wrong in one scrape.
type Summary struct {
	Devices, Errors, Timeouts int
	// DiscoveryErr is the last discovery's error, nil when it succeeded.
	DiscoveryErr error
	// Failed are the devices with errors or timeouts.
	Failed []*DeviceResult
}

// Metrics are one scrape's metrics, a prometheus.Collector of them and a
// prometheus.Gatherer: register them with a registry, gather them
// (Gather), or write them with WriteTo.
type Metrics struct {
	c    *Collector
	topo *Topology
	view *view
	// results are the sweep's, in view.devices' order.
	results []*DeviceResult
	// misc are the collectors' metrics and the descs().saturated
	// counters.
	misc []sample
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

// Describe sends the Desc of every family a scrape may hold.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	(&Metrics{c: c}).Describe(ch)
}

// Collect scrapes (Scrape) within Timeout and sends the metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	t := c.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), t)
	defer cancel()
	m, _ := c.Scrape(ctx)
	m.Collect(ch)
}

// Scrape reads the counters once (sharing a sweep running for another
// scrape) and returns the metrics. What did not answer before ctx ended
// is left out and counted as a timeout.
func (c *Collector) Scrape(ctx context.Context) (*Metrics, Summary) {
	m := &Metrics{c: c}
	add := func(d *desc, v float64, values ...string) {
		m.misc = append(m.misc, sample{desc: d, values: values, value: v})
	}
	topo, st := c.Topology()
	sum := Summary{DiscoveryErr: st.Err}
	disc := c.collectorName("ibnetdiscover")
	add(descs().collectErrors, float64(st.Errors), disc)
	add(descs().collectTimeouts, 0, disc)
	add(descs().collectDuration, st.Duration.Seconds(), disc)
	if c.RunOnce {
		add(descs().lastExecution, float64(c.now().Unix()), disc)
	}
	sel := selectionOf(c.Switch, c.HCA)
	if topo == nil || sel == 0 {
		return m, sum
	}
	m.topo, m.view = topo, topo.view(sel)
	start := c.now()
	pre := c.Sweeper.pending()
	m.results = c.Sweeper.Sweep(ctx, m.view.devices)
	elapsed := c.now().Sub(start).Seconds()
	if pre != nil {
		// The sweep began with the prefetch, during the discovery.
		elapsed = time.Since(pre.start).Seconds()
	}
	type tally struct{ errors, timeouts int }
	var counts [2]tally // switch, hca
	for i, r := range m.results {
		k := 0
		if r.Device.Type != mad.NodeTypeSwitch {
			k = 1
		}
		sum.Devices++
		switch {
		case r.Timeout:
			counts[k].timeouts++
			sum.Timeouts++
			sum.Failed = append(sum.Failed, r)
		case r.Err != nil:
			counts[k].errors++
			sum.Errors++
			sum.Failed = append(sum.Failed, r)
		}
		for j := range r.Ports {
			pr := &r.Ports[j]
			if pr.Saturated == 0 {
				continue
			}
			for n, ctr := range counters {
				if pr.Saturated&(1<<n) != 0 {
					add(descs().saturated, 1, m.view.labels[i].guid, portLabel(pr.Port), ctr.field)
				}
			}
		}
	}
	for k, on := range []bool{c.Switch, c.HCA} {
		if !on {
			continue
		}
		name := c.collectorName([]string{"switch", "hca"}[k])
		add(descs().collectErrors, float64(counts[k].errors), name)
		add(descs().collectTimeouts, float64(counts[k].timeouts), name)
		add(descs().collectDuration, elapsed, name)
		if c.RunOnce {
			add(descs().lastExecution, float64(c.now().Unix()), name)
		}
	}
	return m, sum
}
