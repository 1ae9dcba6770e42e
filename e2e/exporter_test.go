package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// Switch1 and Switch2 of net.2sw2path4hca, as the exporter labels them.
const (
	exporterSwitch1 = "0x0000000000200000"
	exporterSwitch2 = "0x0000000000200001"
)

// TestExporterRunOnceMatchesPerfquery sets a switch port's counters on
// ibsim's console and checks that `ibtool exporter --exporter.runonce`
// reports what infiniband-diags' perfquery reads of them.
func TestExporterRunOnceMatchesPerfquery(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	port := simfabric.Port("Switch2", 3)
	for field, v := range map[string]uint64{"SymbolErrorCounter": 1234, "PortRcvErrors": 77, "LinkDownedCounter": 5} {
		if err := f.PerformanceSet(ctx, port, "PortCounters."+field, v); err != nil {
			t.Fatal(err)
		}
	}
	ref, refErr, exit, err := f.RunReference(ctx, "Hca1", "perfquery", "-G", exporterSwitch2, "3")
	if err != nil || exit != 0 {
		t.Fatalf("perfquery: exit %d, %v: %s", exit, err, refErr)
	}
	refE, refErr, exit, err := f.RunReference(ctx, "Hca1", "perfquery", "-E", "-G", exporterSwitch2, "3")
	if err != nil || exit != 0 {
		t.Fatalf("perfquery -E: exit %d, %v: %s", exit, err, refErr)
	}
	out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "exporter", "--exporter.runonce", "--collector.switch.rcv-err-details",
		"--exporter.lockfile", filepath.Join(t.TempDir(), "lock")) // not /tmp's, which another run may hold
	if err != nil || exit != 0 {
		t.Fatalf("ibtool exporter --exporter.runonce: exit %d, %v: %s", exit, err, errOut)
	}
	for field, metric := range map[string]string{
		"SymbolErrorCounter": "infiniband_switch_port_symbol_error_total",
		"PortRcvErrors":      "infiniband_switch_port_receive_errors_total",
		"LinkDownedCounter":  "infiniband_switch_port_link_downed_total",
	} {
		want := perfqueryField(t, ref, field)
		got := metricValue(t, out, fmt.Sprintf(`%s{guid="%s",port="3"}`, metric, exporterSwitch2))
		if got != want {
			t.Errorf("%s: exporter %s, perfquery %s", metric, got, want)
		}
	}
	// --collector.switch.rcv-err-details: PortRcvErrorDetails, as
	// perfquery -E reads it.
	for field, metric := range map[string]string{
		"PortLocalPhysicalErrors": "infiniband_switch_port_local_physical_errors_total",
		"PortMalformedPktErrors":  "infiniband_switch_port_malformed_packet_errors_total",
		"PortLoopingErrors":       "infiniband_switch_port_looping_errors_total",
	} {
		want := perfqueryField(t, refE, field)
		got := metricValue(t, out, fmt.Sprintf(`%s{guid="%s",port="3"}`, metric, exporterSwitch2))
		if got != want {
			t.Errorf("%s: exporter %s, perfquery -E %s", metric, got, want)
		}
	}
	for _, want := range []string{
		`infiniband_exporter_collect_errors{collector="switch-runonce"} 0`,
		`infiniband_switch_info{guid="` + exporterSwitch2 + `",lid="3",switch="Switch2"} 1`,
		`infiniband_port_link_state{guid="` + exporterSwitch2 + `",port="3"} 4`,
	} {
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("missing %s", want)
		}
	}
	if t.Failed() {
		t.Logf("exporter:\n%s\nperfquery:\n%s", out, ref)
	}
}

// perfqueryField returns a field's value in perfquery's output.
func perfqueryField(t *testing.T, out []byte, field string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + field + `:\.*(\d+)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no %s in perfquery's output:\n%s", field, out)
	}
	return string(m[1])
}

// metricValue returns the value of the sample named (with its labels) in
// an exposition, "" when there is none.
func metricValue(t *testing.T, text []byte, sample string) string {
	t.Helper()
	for _, l := range strings.Split(string(text), "\n") {
		if v, ok := strings.CutPrefix(l, sample+" "); ok {
			return v
		}
	}
	return ""
}

// TestExporterSwitchDies runs a long-lived exporter, scrapes it, cuts
// both links of Switch2 (the switch dies for the exporter's port), and
// scrapes again: Switch2's counters are gone and counted in the error
// metrics, Switch1's are all still there.
func TestExporterSwitchDies(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	addr := startExporter(ctx, t, f, "Hca1", "-t", "200", "--retries", "1")
	scrape := func() []byte {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/metrics", nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "10")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("scrape: %s, %v", resp.Status, err)
		}
		return b
	}
	counter := func(guid, port string) string {
		return fmt.Sprintf(`infiniband_switch_port_symbol_error_total{guid="%s",port="%s"}`, guid, port)
	}
	before := scrape()
	for _, s := range []string{counter(exporterSwitch1, "1"), counter(exporterSwitch2, "1"), counter(exporterSwitch2, "3")} {
		if metricValue(t, before, s) == "" {
			t.Fatalf("first scrape: no %s:\n%s", s, before)
		}
	}
	for _, p := range []int{3, 5} {
		if err := f.Unlink(ctx, simfabric.Port("Switch2", p)); err != nil {
			t.Fatal(err)
		}
	}
	after := scrape()
	for sample, want := range map[string]string{
		counter(exporterSwitch2, "1"): "",
		counter(exporterSwitch2, "3"): "",
		counter(exporterSwitch1, "1"): "0",
		counter(exporterSwitch1, "2"): "0",
		`infiniband_switch_collect_error{collector="switch",guid="` + exporterSwitch2 + `"}`: "1",
		`infiniband_switch_collect_error{collector="switch",guid="` + exporterSwitch1 + `"}`: "0",
		`infiniband_exporter_collect_errors{collector="switch"}`:                             "1",
		`infiniband_exporter_collect_timeouts{collector="switch"}`:                           "0",
	} {
		if got := metricValue(t, after, sample); got != want {
			t.Errorf("second scrape: %s is %q, want %q", sample, got, want)
		}
	}
	if before, after := strings.Count(string(before), exporterSwitch1), strings.Count(string(after), exporterSwitch1); before != after {
		t.Errorf("Switch1 has %d samples after the cut, %d before", after, before)
	}
	if t.Failed() {
		t.Logf("second scrape:\n%s", after)
	}
}
