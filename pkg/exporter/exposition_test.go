package exporter

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// clientGolangCollector hands samples to client_golang as const metrics.
type clientGolangCollector struct {
	samples []Sample
	descs   map[*Desc]*prometheus.Desc
}

func (c *clientGolangCollector) desc(d *Desc) *prometheus.Desc {
	if c.descs[d] == nil {
		c.descs[d] = prometheus.NewDesc(d.Name, d.Help, d.Labels, nil)
	}
	return c.descs[d]
}

func (c *clientGolangCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, s := range c.samples {
		ch <- c.desc(s.Desc)
	}
}

func (c *clientGolangCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.samples {
		t := prometheus.GaugeValue
		if s.Desc.Type == Counter {
			t = prometheus.CounterValue
		}
		ch <- prometheus.MustNewConstMetric(c.desc(s.Desc), t, s.Value, s.Values...)
	}
}

// clientGolangText is what client_golang's registry and expfmt write for
// samples.
func clientGolangText(t *testing.T, samples []Sample) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&clientGolangCollector{samples: samples, descs: map[*Desc]*prometheus.Desc{}})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func TestWriteMatchesClientGolang(t *testing.T) {
	counter := NewDesc("infiniband_switch_port_transmit_data_bytes_total", "Infiniband switch port PortXmitData", Counter, "guid", "port")
	info := NewDesc("infiniband_switch_uplink_info", "Help with \\ and\nnewline", Gauge, "guid", "port", "switch", "uplink")
	plain := NewDesc("infiniband_exporter_up", "No labels", Gauge)
	tests := []struct {
		name    string
		samples []Sample
	}{
		{"sorted by label values as strings", []Sample{
			{counter, []string{"0x02", "10"}, 4},
			{counter, []string{"0x02", "2"}, 715049367846516},
			{counter, []string{"0x01", "1"}, 0},
			{counter, []string{"0x02", "1"}, 1 << 62},
		}},
		{"labels sorted by name, values escaped", []Sample{
			{info, []string{"0x1", "3", `sw "a"\b`, "line\nbreak"}, 1},
			{info, []string{"0x1", "1", "sw", "host 1 HCA-1"}, 1},
		}},
		{"families sorted by name, special values", []Sample{
			{plain, nil, math.NaN()},
			{counter, []string{"0x1", "1"}, math.Inf(1)},
			{NewDesc("a_gauge", "first", Gauge, "x"), []string{"y"}, -1},
			{NewDesc("b_gauge", "second", Gauge, "x"), []string{"y"}, 0.000123},
			{NewDesc("c_gauge", "third", Gauge, "x"), []string{"y"}, 1.795670657e+09},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := Write(&got, tt.samples); err != nil {
				t.Fatal(err)
			}
			if want := clientGolangText(t, tt.samples); got.String() != want {
				t.Errorf("Write differs from client_golang (-client_golang +Write):\n%s", cmp.Diff(strings.Split(want, "\n"), strings.Split(got.String(), "\n")))
			}
		})
	}
}

// TestCollectMatchesClientGolang writes a whole scrape three ways:
// Metrics.WriteTo (its samples in the order it builds them), Write of its
// Samples (sorted) and client_golang's registry.
func TestCollectMatchesClientGolang(t *testing.T) {
	for _, sel := range []struct{ switches, cas bool }{{true, true}, {true, false}, {false, true}} {
		m, _ := testScrape(t, sel.switches, sel.cas)
		var got, sorted bytes.Buffer
		if _, err := m.WriteTo(&got); err != nil {
			t.Fatal(err)
		}
		samples := m.Samples()
		if err := Write(&sorted, samples); err != nil {
			t.Fatal(err)
		}
		if got.String() != sorted.String() {
			t.Errorf("%+v: WriteTo differs from Write (-Write +WriteTo):\n%s", sel, cmp.Diff(strings.Split(sorted.String(), "\n"), strings.Split(got.String(), "\n")))
		}
		want := clientGolangText(t, samples)
		if got.String() != want {
			t.Errorf("%+v: WriteTo differs from client_golang (-client_golang +WriteTo):\n%s", sel, cmp.Diff(strings.Split(want, "\n"), strings.Split(got.String(), "\n")))
		}
	}
	m, _ := testScrape(t, true, true)
	var got bytes.Buffer
	m.WriteTo(&got)
	want := got.String()
	if !strings.Contains(want, "infiniband_switch_port_transmit_data_bytes_total") {
		t.Errorf("no counters in the scrape:\n%s", want)
	}
}

// TestWriteToOrder checks WriteTo's orders where they differ from the
// fabric's: switches whose GUIDs and descriptions run in different
// orders, ports 1 to 12 (10 sorts before 2), CAs between them.
func TestWriteToOrder(t *testing.T) {
	fab := &subnet.Fabric{}
	pmas := map[rdma.LID]*fakePMA{}
	lid := rdma.LID(1)
	for _, s := range []struct {
		guid rdma.GUID
		desc string
	}{{0x300, "a"}, {0x100, "c"}, {0x200, "b"}} {
		sw := &subnet.Node{GUID: s.guid, Type: mad.NodeTypeSwitch, NumPorts: 12, SMALID: lid, Desc: s.desc}
		sw.Ports = make([]*subnet.Port, 13)
		sw.Ports[0] = &subnet.Port{Node: sw, GUID: s.guid, BaseLID: lid}
		pmas[lid] = &fakePMA{caps: mad.PMACapabilities{Mask: mad.PMAExtendedWidth}}
		fab.Nodes = append(fab.Nodes, sw)
		lid++
		for num := 1; num <= 12; num++ {
			ca := &subnet.Node{GUID: s.guid + rdma.GUID(0x1000*num), Type: mad.NodeTypeCA, NumPorts: 1, Desc: fmt.Sprintf("host %d", 13-num)}
			ca.Ports = make([]*subnet.Port, 2)
			c := &subnet.Port{Node: ca, Num: 1, GUID: ca.GUID + 1, BaseLID: lid}
			p := &subnet.Port{Node: sw, Num: num, GUID: s.guid}
			p.Remote, c.Remote = c, p
			sw.Ports[num], ca.Ports[1] = p, c
			pmas[lid] = &fakePMA{pc: map[int]mad.PortCounters{1: {PortXmitData: uint32(num)}}}
			fab.Nodes = append(fab.Nodes, ca)
			lid++
		}
	}
	x := newFakeTransactor(&fakeFabric{pmas: pmas}, time.Second)
	defer x.Close()
	topo := NewTopology(fab, nil)
	c := &Collector{Switch: true, HCA: true, Topology: func() (*Topology, DiscoveryStatus) { return topo, DiscoveryStatus{} },
		Sweeper: &Sweeper{X: x}, Now: func() time.Time { return time.Unix(1700000000, 0) }}
	m, sum := c.Collect(context.Background())
	if sum.Devices != 39 || len(sum.Failed) != 0 {
		t.Fatalf("summary %+v, want 39 devices read", sum)
	}
	var got bytes.Buffer
	if _, err := m.WriteTo(&got); err != nil {
		t.Fatal(err)
	}
	samples := m.Samples()
	if want := clientGolangText(t, samples); got.String() != want {
		t.Errorf("WriteTo differs from client_golang (-client_golang +WriteTo):\n%s", cmp.Diff(strings.Split(want, "\n"), strings.Split(got.String(), "\n")))
	}
}
