package exporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// TestCollectorPedantic registers a Collector with client_golang's
// pedantic registry, which checks every collected metric against the
// Descs Describe sent, and gathers it with no error.
func TestCollectorPedantic(t *testing.T) {
	m, _ := testScrape(t, true, true)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m.c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gathering: %v", err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	for _, want := range []string{"infiniband_switch_port_transmit_data_bytes_total", "infiniband_hca_info", "infiniband_port_info", "infiniband_exporter_collect_errors"} {
		if !names[want] {
			t.Errorf("no %s gathered", want)
		}
	}
}

// TestLabelValues scrapes a fabric whose node descriptions and names hold
// bytes that are not UTF-8, quotes, backslashes and newlines: the scrape
// gathers with no error, and the text exposition parses back to the
// values, the bad bytes as U+FFFD.
func TestLabelValues(t *testing.T) {
	fab := testFabric()
	fab.Nodes[0].Desc = "sw\xff \"q\" \\ \n end"
	fab.Nodes[1].Desc = "host\xc3\x28 HCA-1"
	names, err := nodemap.Parse(strings.NewReader("0x200 \"leaf\\\\ \xfe\"\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	pma := &fakePMA{caps: mad.PMACapabilities{Mask: mad.PMAExtendedWidth}}
	x := newFakeTransactor(&fakeFabric{pmas: map[rdma.LID]*fakePMA{1: pma, 2: pma, 3: pma}}, time.Second)
	defer x.Close()
	topo := NewTopology(fab, names)
	c := &Collector{Switch: true, HCA: true, Topology: func() (*Topology, DiscoveryStatus) { return topo, DiscoveryStatus{} },
		Sweeper: &Sweeper{X: x}}
	m, _ := c.Scrape(context.Background())
	var text bytes.Buffer
	if _, err := m.WriteTo(&text); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(text.Bytes()))
	if err != nil {
		t.Fatalf("parsing the scrape: %v\n%s", err, text.String())
	}
	got := map[string]string{}
	for _, mt := range mfs["infiniband_port_info"].GetMetric() {
		var guid, port string
		for _, l := range mt.GetLabel() {
			switch l.GetName() {
			case "guid":
				guid = l.GetValue()
			case "port":
				port = l.GetValue()
			}
		}
		for _, l := range mt.GetLabel() {
			if l.GetName() == "description" || l.GetName() == "name" {
				got[guid+"/"+port+" "+l.GetName()] = l.GetValue()
			}
		}
	}
	want := map[string]string{
		"0x0000000000000200/1 description": "sw\uFFFD \"q\" \\ \n end",
		"0x0000000000000200/1 name":        "leaf\\\\ \uFFFD",
		"0x0000000000000200/2 description": "sw\uFFFD \"q\" \\ \n end",
		"0x0000000000000200/2 name":        "leaf\\\\ \uFFFD",
		"0x0000000000000101/1 description": "host\uFFFD( HCA-1",
		"0x0000000000000101/1 name":        "host ( HCA-1", // the node name map's cleaning of a description
		"0x0000000000000102/2 description": "host\uFFFD( HCA-1",
		"0x0000000000000102/2 name":        "host ( HCA-1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected label values (-want +got):\n%s", diff)
	}
	for name, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				if !model.LabelValue(l.GetValue()).IsValid() {
					t.Errorf("%s: label %s=%q is not valid", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// TestHandler serves a scrape through Handler: plain text, OpenMetrics
// when asked for, gzip when accepted, the extra gatherer's metrics and
// promhttp's own.
func TestHandler(t *testing.T) {
	m, _ := testScrape(t, true, false)
	self := prometheus.NewRegistry()
	self.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "test_self_metric", Help: "A metric of the extra gatherer."}))
	var reports []Summary
	srv := httptest.NewServer(m.c.Handler(HandlerOpts{Gatherer: self, Registerer: self, Report: func(s Summary) { reports = append(reports, s) }}))
	defer srv.Close()
	get := func(header http.Header) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = header
		// The transport would ungzip on its own; it must not.
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body io.Reader = resp.Body
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
	tests := []struct {
		name             string
		header           http.Header
		wantType, wantCE string
		wantLines        []string
	}{
		{
			name:     "text",
			header:   http.Header{ScrapeTimeoutHeader: {"5"}},
			wantType: "text/plain; version=0.0.4; charset=utf-8; escaping=underscores",
			wantLines: []string{
				`infiniband_switch_info{guid="0x0000000000000200",lid="1",switch="leaf01"} 1`,
				`test_self_metric 0`,
				`promhttp_metric_handler_requests_in_flight 1`,
			},
		},
		{
			name:     "gzip",
			header:   http.Header{"Accept-Encoding": {"gzip"}},
			wantType: "text/plain; version=0.0.4; charset=utf-8; escaping=underscores", wantCE: "gzip",
			wantLines: []string{`infiniband_switch_info{guid="0x0000000000000200",lid="1",switch="leaf01"} 1`},
		},
		{
			name:     "OpenMetrics",
			header:   http.Header{"Accept": {"application/openmetrics-text;version=1.0.0"}},
			wantType: "application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=underscores",
			wantLines: []string{
				`infiniband_switch_port_link_downed_total{guid="0x0000000000000200",port="2"} 3.0`,
				`# TYPE infiniband_switch_port_link_downed counter`,
				`# EOF`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(tt.header)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %s", resp.Status)
			}
			if got := resp.Header.Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type %q, want %q", got, tt.wantType)
			}
			if got := resp.Header.Get("Content-Encoding"); got != tt.wantCE {
				t.Errorf("Content-Encoding %q, want %q", got, tt.wantCE)
			}
			lines := strings.Split(body, "\n")
			for _, w := range tt.wantLines {
				if !slicesContains(lines, w) {
					t.Errorf("missing %s", w)
				}
			}
			if t.Failed() {
				t.Logf("body:\n%s", body)
			}
		})
	}
	if len(reports) != len(tests) {
		t.Errorf("%d scrapes reported, want %d", len(reports), len(tests))
	}
}

// FuzzLabelValue checks that any NodeDescription or name, made a label
// value, is one client_golang takes and the text format gives back.
func FuzzLabelValue(f *testing.F) {
	for _, s := range []string{"", "leaf \"1\"", "a\\b\nc", "\xff\xfe", "host\xc3\x28"} {
		f.Add(s)
	}
	d := newDesc("test_info", "A label value.", prometheus.GaugeValue, "description")
	f.Fuzz(func(t *testing.T, s string) {
		v := labelValue(s)
		g := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
			m := &dto.Metric{}
			if err := d.metric(1, v).Write(m); err != nil {
				return nil, err
			}
			name, help, typ := "test_info", "A label value.", dto.MetricType_GAUGE
			return []*dto.MetricFamily{{Name: &name, Help: &help, Type: &typ, Metric: []*dto.Metric{m}}}, nil
		})
		var b bytes.Buffer
		if _, err := WriteText(&b, g); err != nil {
			t.Fatalf("label value %q: %v", v, err)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(&b)
		if err != nil {
			t.Fatalf("label value %q: parsing %q: %v", v, b.String(), err)
		}
		if got := mfs["test_info"].GetMetric()[0].GetLabel()[0].GetValue(); got != v {
			t.Errorf("label value %q came back as %q", v, got)
		}
	})
}

// TestRcvErrDetails reads PortRcvErrorDetails where the Sweeper is asked
// to, for the switches only here: their six counters under
// infiniband_exporter's names, none for the CAs; a PMA that refuses the
// attribute is a device error, its other counters still reported.
func TestRcvErrDetails(t *testing.T) {
	wide := mad.PMACapabilities{Mask: mad.PMAExtendedWidth}
	fab := &fakeFabric{pmas: map[rdma.LID]*fakePMA{
		1: {caps: wide, red: map[int]mad.PortRcvErrorDetails{1: {PortLocalPhysicalErrors: 7, PortDLIDMappingErrors: 2, PortLoopingErrors: 1}, 2: {}}},
		2: {}, 3: {},
	}}
	x := newFakeTransactor(fab, time.Second)
	defer x.Close()
	topo := NewTopology(testFabric(), nil)
	c := &Collector{Switch: true, HCA: true, Topology: func() (*Topology, DiscoveryStatus) { return topo, DiscoveryStatus{} },
		Sweeper: &Sweeper{X: x, SwitchRcvErrDetails: true}}
	m, sum := c.Scrape(context.Background())
	if sum.Errors != 0 {
		t.Errorf("summary %+v, want no errors", sum)
	}
	var b bytes.Buffer
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	for _, w := range []string{
		`infiniband_switch_port_local_physical_errors_total{guid="0x0000000000000200",port="1"} 7`,
		`infiniband_switch_port_dli_mapping_errors_total{guid="0x0000000000000200",port="1"} 2`,
		`infiniband_switch_port_looping_errors_total{guid="0x0000000000000200",port="1"} 1`,
		`infiniband_switch_port_malformed_packet_errors_total{guid="0x0000000000000200",port="2"} 0`,
		`# TYPE infiniband_switch_port_vl_mapping_errors_total counter`,
	} {
		if !slicesContains(lines, w) {
			t.Errorf("missing %s", w)
		}
	}
	if strings.Contains(b.String(), "infiniband_hca_port_local_physical_errors_total{") {
		t.Errorf("CA details read without HCARcvErrDetails")
	}

	// The CAs' PMAs refuse the attribute: an error of each CA port.
	c.Sweeper = &Sweeper{X: x, HCARcvErrDetails: true}
	m, sum = c.Scrape(context.Background())
	if sum.Errors != 2 {
		t.Errorf("summary %+v, want the two CA ports in error", sum)
	}
	b.Reset()
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `infiniband_hca_port_transmit_data_bytes_total{guid="0x0000000000000101",port="1"}`) {
		t.Errorf("a CA's counters went with its details' error:\n%s", b.String())
	}
}
