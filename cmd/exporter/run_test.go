package exporter

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// runFabric is two switches, "spine" (GUID 0x10, LID 1) and "leaf" (GUID
// 0x20, LID 2), each with ports 1 and 2 cabled to a CA. Their PMAs have
// 64-bit counters; port p's PortXmitData is 100*LID+p words. The leaf's
// PMA does not answer for its port 2.
func runFabric() (*subnet.Fabric, madtest.Handler) {
	fab := &subnet.Fabric{}
	lid := rdma.LID(3)
	for i, name := range []string{"spine", "leaf"} {
		sw := &subnet.Node{GUID: rdma.GUID(0x10 * (i + 1)), Type: mad.NodeTypeSwitch, NumPorts: 4, SMALID: rdma.LID(i + 1), Desc: name}
		sw.Ports = make([]*subnet.Port, 5)
		sw.Ports[0] = &subnet.Port{Node: sw, GUID: sw.GUID, BaseLID: sw.SMALID}
		fab.Nodes = append(fab.Nodes, sw)
		for num := 1; num <= 2; num++ {
			ca := &subnet.Node{GUID: sw.GUID + rdma.GUID(num), Type: mad.NodeTypeCA, NumPorts: 1, Desc: name + " host"}
			ca.Ports = make([]*subnet.Port, 2)
			c := &subnet.Port{Node: ca, Num: 1, GUID: ca.GUID, BaseLID: lid}
			p := &subnet.Port{Node: sw, Num: num, GUID: sw.GUID}
			p.Remote, c.Remote = c, p
			sw.Ports[num], ca.Ports[1] = p, c
			fab.Nodes = append(fab.Nodes, ca)
			lid++
		}
	}
	handle := func(req *mad.Packet) []mad.Packet {
		var h mad.Header
		if err := h.UnmarshalBinary(req.MAD); err != nil || h.MgmtClass != mad.ClassPerf {
			return nil
		}
		lid, port := req.Addr.LID, int(req.MAD[mad.SMPDataOffset+1])
		if lid > 2 || lid == 2 && port == 2 && h.AttrID != mad.AttrClassPortInfo {
			return nil
		}
		var a mad.Attribute
		switch h.AttrID {
		case mad.AttrClassPortInfo:
			a = &mad.ClassPortInfo{CapabilityMask: uint16(mad.PMAExtendedWidth), CapabilityMask2: uint32(mad.PMAAdditionalPortCounters)}
		case mad.AttrPortCountersExtended:
			a = &mad.PortCountersExtended{PortSelect: uint8(port), PortXmitData: uint64(100*int(lid) + port), LinkDownedCounter: 1}
		default:
			return []mad.Packet{madtest.Reply(req, mad.StatusMethodAttrUnsupported, mad.SMPDataOffset, nil)}
		}
		data, _ := a.AppendBinary(nil)
		return []mad.Packet{madtest.Reply(req, mad.StatusOK, mad.SMPDataOffset, data)}
	}
	return fab, handle
}

// fakeRun parses args as the exporter's and points its discovery and
// transactor at runFabric; the run's standard output and error go to the
// buffers returned.
func fakeRun(t *testing.T, args []string) (*exporterOptions, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	args = append([]string{"--exporter.lockfile", filepath.Join(t.TempDir(), "lock")}, args...)
	o := cmdtest.ParsedOptions(t, Tool.Name, newExporterCmd, args)
	fab, handle := runFabric()
	var out, errOut bytes.Buffer
	o.IO = cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	o.Common.Open = cmdtest.FakeOpen(&o.Common, handle, 20*time.Millisecond, io.Discard)
	o.Discover = func(context.Context) (*subnet.Fabric, error) { return fab, nil }
	return o, &out, &errOut
}

// wantLines checks that text has every line of want and no line that
// starts with one of absent.
func wantLines(t *testing.T, text string, want, absent []string) {
	t.Helper()
	lines := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		lines[l] = true
		for _, a := range absent {
			if strings.HasPrefix(l, a) {
				t.Errorf("unexpected line %s", l)
			}
		}
	}
	for _, w := range want {
		if !lines[w] {
			t.Errorf("missing line %s", w)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", text)
	}
}

// What both the runonce and the served metrics say of runFabric.
var (
	runWant = []string{
		`infiniband_switch_port_transmit_data_bytes_total{guid="0x0000000000000010",port="1"} 404`,
		`infiniband_switch_port_transmit_data_bytes_total{guid="0x0000000000000010",port="2"} 408`,
		`infiniband_switch_port_transmit_data_bytes_total{guid="0x0000000000000020",port="1"} 804`,
		`infiniband_switch_port_link_downed_total{guid="0x0000000000000020",port="1"} 1`,
		`infiniband_switch_uplink_info{guid="0x0000000000000020",port="2",switch="leaf",uplink="leaf host",uplink_guid="0x0000000000000022",uplink_lid="6",uplink_port="1",uplink_type="CA"} 1`,
		`infiniband_switch_info{guid="0x0000000000000020",lid="2",switch="leaf"} 1`,
	}
	// The leaf's port 2 did not answer: its counters are left out.
	runAbsent = []string{
		`infiniband_switch_port_transmit_data_bytes_total{guid="0x0000000000000020",port="2"}`,
		`infiniband_hca_`,
	}
)

func TestExporterRunOnce(t *testing.T) {
	o, out, errOut := fakeRun(t, []string{"--exporter.runonce"})
	err := exporterRun(o)
	if err == nil || err.Error() != "1 of 2 devices did not answer; the metrics are partial" {
		t.Errorf("exporterRun: %v, want 1 of 2 devices did not answer", err)
	}
	if !strings.Contains(errOut.String(), `exporter: switch 0x0000000000000020 ("leaf") LID 2: `) {
		t.Errorf("standard error does not name the leaf:\n%s", errOut)
	}
	want := append([]string{
		`infiniband_switch_collect_error{collector="switch-runonce",guid="0x0000000000000010"} 0`,
		`infiniband_switch_collect_error{collector="switch-runonce",guid="0x0000000000000020"} 1`,
		`infiniband_switch_collect_timeout{collector="switch-runonce",guid="0x0000000000000020"} 0`,
		`infiniband_exporter_collect_errors{collector="switch-runonce"} 1`,
		`infiniband_exporter_collect_timeouts{collector="switch-runonce"} 0`,
		`infiniband_exporter_collect_errors{collector="ibnetdiscover-runonce"} 0`,
	}, runWant...)
	wantLines(t, out.String(), want, runAbsent)
	if !strings.Contains(out.String(), "# TYPE infiniband_exporter_last_execution gauge\n") {
		t.Errorf("no infiniband_exporter_last_execution in runonce's metrics")
	}
}

// freeAddr returns a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startServe runs the exporter with args on a free loopback address and
// returns it once it serves; cancel stops the exporter, and done has
// exporterRun's error then.
func startServe(t *testing.T, args ...string) (addr string, errOut *bytes.Buffer, cancel func(), done chan error) {
	t.Helper()
	addr = freeAddr(t)
	o, _, errOut := fakeRun(t, append([]string{"--web.listen-address", addr}, args...))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	o.Common.Ctx = ctx
	done = make(chan error, 1)
	go func() { done <- exporterRun(o) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr, errOut, cancel, done
		}
		select {
		case err := <-done:
			t.Fatalf("exporterRun ended before serving: %v\n%s", err, errOut)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter did not start serving in 10 s\n%s", errOut)
		}
	}
}

func TestExporterServe(t *testing.T) {
	addr, errOut, cancel, done := startServe(t)
	ctx := context.Background()
	get := func(path string, header http.Header) (string, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = header
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s, %v", path, resp.Status, err)
		}
		return string(body), resp.Header.Get("Content-Type")
	}
	if index, _ := get("/", nil); !strings.Contains(index, `<a href="/metrics">`) {
		t.Errorf("index page without a link to the metrics:\n%s", index)
	}
	// Two scrapes: the second reads the counters again (the PMA's
	// capabilities are kept) and says the same.
	for i := range 2 {
		text, ctype := get("/metrics", http.Header{"X-Prometheus-Scrape-Timeout-Seconds": {"5"}})
		if !strings.HasPrefix(ctype, "text/plain; version=0.0.4; charset=utf-8") {
			t.Errorf("scrape %d: Content-Type %q", i, ctype)
		}
		want := append([]string{
			`infiniband_switch_collect_error{collector="switch",guid="0x0000000000000020"} 1`,
			`infiniband_exporter_collect_errors{collector="switch"} 1`,
		}, runWant...)
		wantLines(t, text, want, append(runAbsent, "infiniband_exporter_last_execution"))
		for _, self := range []string{"go_goroutines ", "process_cpu_seconds_total ", "promhttp_metric_handler_requests_total{code=\"200\"} "} {
			if !strings.Contains(text, "\n"+self) {
				t.Errorf("scrape %d: no %s", i, self)
			}
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exporterRun after the context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the exporter did not stop in 10 s")
	}
	if !strings.Contains(errOut.String(), "scrape: 1 of 2 devices did not answer (1 errors, 0 timeouts); first: switch 0x0000000000000020") {
		t.Errorf("standard error does not report the scrapes' error:\n%s", errOut)
	}
}
