package exporter

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/google/go-cmp/cmp"
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

// TestCollectMatchesClientGolang writes a whole scrape both ways.
func TestCollectMatchesClientGolang(t *testing.T) {
	samples, _ := testScrape(t, true, true)
	var got bytes.Buffer
	if err := Write(&got, samples); err != nil {
		t.Fatal(err)
	}
	want := clientGolangText(t, samples)
	if got.String() != want {
		t.Errorf("Write differs from client_golang (-client_golang +Write):\n%s", cmp.Diff(strings.Split(want, "\n"), strings.Split(got.String(), "\n")))
	}
	if !strings.Contains(want, "infiniband_switch_port_transmit_data_bytes_total") {
		t.Errorf("no counters in the scrape:\n%s", want)
	}
}
