package exporter

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// bigScrape is one scrape's metrics of a fabric of n 36-port switches,
// each port cabled to a CA of its own, every counter of every port read:
// 36n switch ports, as many CA ports.
func bigScrape(n int, switches, cas bool) *Metrics {
	fab := &subnet.Fabric{}
	info := &mad.PortInfo{LinkState: mad.PortStateActive, PhysLinkState: mad.PhysPortStateLinkUp, LinkWidthActive: mad.LinkWidth4X,
		LinkWidthEnabled: 3, LinkSpeedActive: mad.LinkSpeedQDR, LinkSpeedEnabled: 7}
	for s := 0; s < n; s++ {
		guid := rdma.GUID(0x20000 + s)
		sw := &subnet.Node{GUID: guid, Type: mad.NodeTypeSwitch, NumPorts: 36, SMALID: rdma.LID(1 + s), Desc: fmt.Sprintf("switch %d", s)}
		sw.Info.PortGUID = guid
		sw.Ports = make([]*subnet.Port, 37)
		sw.Ports[0] = &subnet.Port{Node: sw, Num: 0, GUID: guid, BaseLID: rdma.LID(1 + s), Info: info}
		fab.Nodes = append(fab.Nodes, sw)
		for p := 1; p <= 36; p++ {
			cg := rdma.GUID(0x1000000 + s*100 + p)
			ca := &subnet.Node{GUID: cg, Type: mad.NodeTypeCA, NumPorts: 1, Desc: fmt.Sprintf("host%d-%d HCA-1", s, p)}
			ca.Ports = make([]*subnet.Port, 2)
			sp := &subnet.Port{Node: sw, Num: p, GUID: guid, BaseLID: rdma.LID(1 + s), Info: info}
			cp := &subnet.Port{Node: ca, Num: 1, GUID: cg + 1, BaseLID: rdma.LID(1000 + s*36 + p), Info: info}
			sp.Remote, cp.Remote = cp, sp
			sw.Ports[p], ca.Ports[1] = sp, cp
			fab.Nodes = append(fab.Nodes, ca)
		}
	}
	topo := NewTopology(fab, nil)
	m := &Metrics{c: &Collector{Switch: switches, HCA: cas}, topo: topo, view: topo.view(selectionOf(switches, cas))}
	for _, d := range m.view.devices {
		r := &DeviceResult{Device: d, Ports: make([]PortReading, len(d.Ports))}
		for i, p := range d.Ports {
			pr := PortReading{Port: p.Num, Read: true, Extended: true, Present: 1<<numCounters - 1}
			for k := range pr.Values {
				pr.Values[k] = uint64(1000*i + k)
			}
			r.Ports[i] = pr
		}
		m.results = append(m.results, r)
	}
	return m
}

// BenchmarkWriteTo is one scrape of 400 switches' ports written as text:
// gathering, sorting and encoding (about 14,400 ports, 30 families).
func BenchmarkWriteTo(b *testing.B) {
	m := bigScrape(400, true, false)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGatherMatchesRegistry proves Gather builds what client_golang's
// registry gathers from the same scrape as a Collector: the same text,
// byte for byte, on the test fabric and on fabrics of 3 and 30 switches.
func TestGatherMatchesRegistry(t *testing.T) {
	small, _ := testScrape(t, true, true)
	for _, tt := range []struct {
		name string
		m    *Metrics
	}{
		{"test fabric", small},
		{"3 switches and their CAs", bigScrape(3, true, true)},
		{"3 switches", bigScrape(3, true, false)},
		// Families of more than encodeChunk metrics, which WriteTo
		// encodes in parts.
		{"30 switches", bigScrape(30, true, false)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(tt.m)
			var want, got strings.Builder
			if _, err := WriteText(&want, reg); err != nil {
				t.Fatal(err)
			}
			if _, err := WriteText(&got, tt.m); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("Gather's text differs from the registry's (-want +got):\n%s", diff)
			}
			var piped strings.Builder
			if _, err := tt.m.WriteTo(&piped); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), piped.String()); diff != "" {
				t.Errorf("WriteTo's text differs from the registry's (-want +got):\n%s", diff)
			}
		})
	}
}

// failAfter is a writer that takes n bytes and then fails.
type failAfter struct{ n int }

func (w *failAfter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

// TestWriteToError: a writer's failure part way is WriteTo's error, with
// the bytes written before it counted.
func TestWriteToError(t *testing.T) {
	m := bigScrape(20, true, false)
	var full strings.Builder
	total, err := m.WriteTo(&full)
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, 100 << 10, int(total) - 1} {
		n, err := m.WriteTo(&failAfter{n: limit})
		if err == nil || err.Error() != "disk full" {
			t.Errorf("WriteTo to a writer that fails after %d bytes: error %v, want disk full", limit, err)
		}
		if n > total {
			t.Errorf("WriteTo to a writer that fails after %d bytes: %d bytes, more than the %d of the whole text", limit, n, total)
		}
	}
}

// BenchmarkWriteToRegistry is BenchmarkWriteTo through client_golang's
// registry, the Collector way, for comparison with Gather.
func BenchmarkWriteToRegistry(b *testing.B) {
	m := bigScrape(400, true, false)
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := WriteText(io.Discard, reg); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGatherFamilyShared gathers families of the same labels one after
// another, as WriteTo does, where each family's label values are the last
// one's, a part of them, or others: every family's text is what
// client_golang's registry writes for the same samples.
func TestGatherFamilyShared(t *testing.T) {
	type sample struct {
		labels []string
		v      float64
	}
	rows := func(n int, names ...string) []sample {
		var out []sample
		for i := range n {
			// Emitted out of label order, so that each family is sorted.
			out = append(out, sample{[]string{fmt.Sprint((7 * i) % n), names[i%len(names)]}, float64(i)})
		}
		return out
	}
	base := rows(9, "a", "b")
	reordered := slices.Clone(base)
	slices.Reverse(reordered)
	changed := slices.Clone(base)
	changed[4] = sample{[]string{"4x", "b"}, 40}
	tests := []struct {
		name     string
		families [][]sample
	}{
		{"the same rows", [][]sample{base, base, base}},
		{"fewer rows", [][]sample{base, base[:5], base}},
		{"more rows", [][]sample{base[:3], base, rows(12, "c")}},
		{"a row changed midway", [][]sample{base, changed, base}},
		{"the same rows in another order", [][]sample{base, reordered, base}},
		{"none, then rows", [][]sample{nil, base, nil, base[:1]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shared := map[string]*labelSets{}
			buf := &familyBuffers{}
			for i, fam := range tt.families {
				// port before guid: the label pairs go in name order.
				d := newDesc(fmt.Sprintf("f%d_total", i), "help", prometheus.CounterValue, "port", "guid")
				f := family{d, func(_ *Metrics, emit func([]string, float64)) {
					for _, s := range fam {
						emit(s.labels, s.v)
					}
				}}
				reg := prometheus.NewPedanticRegistry()
				for _, s := range fam {
					reg.MustRegister(constCollector{d.metric(s.v, s.labels...)})
				}
				var want strings.Builder
				if _, err := WriteText(&want, reg); err != nil {
					t.Fatal(err)
				}
				var got strings.Builder
				if mf := (&Metrics{}).gatherFamily(f, shared, buf); mf != nil {
					if _, err := expfmt.MetricFamilyToText(&got, mf); err != nil {
						t.Fatal(err)
					}
				}
				if diff := cmp.Diff(want.String(), got.String()); diff != "" {
					t.Errorf("family %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

// constCollector collects one metric, described unchecked.
type constCollector struct{ m prometheus.Metric }

func (c constCollector) Describe(chan<- *prometheus.Desc)    {}
func (c constCollector) Collect(ch chan<- prometheus.Metric) { ch <- c.m }
