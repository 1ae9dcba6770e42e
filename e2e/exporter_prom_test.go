package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/promtest"
	"github.com/ibtool/ibtool/internal/simfabric"
)

// exporterCounters are the error counters the Prometheus test sets on a
// switch port: unlike the data and packet counters, they do not move with
// the MADs the exporter and perfquery send, so all three readers must see
// exactly the value set.
var exporterCounters = []struct {
	field  string // perfquery's name, and the console's PortCounters field
	metric string // infiniband_exporter's name
	value  uint64
}{
	{"SymbolErrorCounter", "infiniband_switch_port_symbol_error_total", 1234},
	{"LinkDownedCounter", "infiniband_switch_port_link_downed_total", 17},
	{"PortRcvErrors", "infiniband_switch_port_receive_errors_total", 4321},
}

// TestExporterPrometheus runs a real Prometheus server scraping `ibtool
// exporter` on the small fabric: after PerformanceSet on a switch port,
// the value Prometheus' API returns for the port's counter is what ibtool's
// and infiniband-diags' perfquery read, and the target stays up with no
// scrape error. `--exporter.runonce --exporter.output` writes a file
// promtool accepts with the same values.
func TestExporterPrometheus(t *testing.T) {
	promtest.Require(t)
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const host, sw, port = "Hca1", "Switch2", 2
	guid, lid := switchGUIDLID(ctx, t, f, host, sw)

	addr := startExporter(ctx, t, f, host, "--collector.switch")
	prom := promtest.StartForTest(t, promtest.Config{
		Targets:        []string{addr},
		ScrapeInterval: time.Second,
		ScrapeTimeout:  time.Second,
	})
	if _, err := prom.WaitScrape(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}

	for _, c := range exporterCounters {
		if err := f.PerformanceSet(ctx, simfabric.Port(sw, port), "PortCounters."+c.field, c.value); err != nil {
			t.Fatal(err)
		}
	}
	// A scrape that started after the sets, then one more: the first's
	// samples are committed once the second has started.
	set := time.Now()
	first, err := prom.WaitScrape(ctx, set)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := prom.WaitScrape(ctx, promtest.LastScrape(first))
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if tg.Health != promtest.HealthUp || tg.LastError != "" {
			t.Errorf("target %s: health %q, last error %q; want up with no error", tg.ScrapeURL, tg.Health, tg.LastError)
		}
	}

	ours := perfqueryCounters(ctx, t, func(ctx context.Context) ([]byte, []byte, int, error) {
		return f.RunIbtool(ctx, ibtoolBin, host, "perfquery", strconv.Itoa(lid), strconv.Itoa(port))
	})
	ref := perfqueryCounters(ctx, t, func(ctx context.Context) ([]byte, []byte, int, error) {
		return f.RunReference(ctx, host, "perfquery", strconv.Itoa(lid), strconv.Itoa(port))
	})
	for _, c := range exporterCounters {
		expr := fmt.Sprintf(`%s{guid=%q,port="%d"}`, c.metric, guid, port)
		samples, err := prom.Query(ctx, expr)
		if err != nil {
			t.Fatal(err)
		}
		if len(samples) != 1 {
			t.Errorf("%s: got %d series %v, want one", expr, len(samples), samples)
			continue
		}
		got := samples[0].Value
		if got != float64(c.value) || ours[c.field] != c.value || ref[c.field] != c.value {
			t.Errorf("%s after PerformanceSet %s=%d: Prometheus %v, ibtool perfquery %d, infiniband-diags perfquery %d; want all %d",
				expr, c.field, c.value, got, ours[c.field], ref[c.field], c.value)
		}
	}

	// One run to a file, as cron and node_exporter's textfile collector
	// use it: promtool accepts it, and it holds the same values.
	out := filepath.Join(t.TempDir(), "infiniband.prom")
	stdout, stderr, exit, err := f.RunIbtool(ctx, ibtoolBin, host, "exporter",
		"--collector.switch", "--collector.hca", "--exporter.runonce", "--exporter.output", out,
		"--exporter.lockfile", filepath.Join(t.TempDir(), "lock"))
	if err != nil || exit != 0 {
		t.Fatalf("ibtool exporter --exporter.runonce: exit %d, %v\n%s%s", exit, err, stdout, stderr)
	}
	if err := promtest.CheckMetrics(ctx, out); err != nil {
		t.Error(err)
	}
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range exporterCounters {
		got, ok := expositionValue(text, c.metric, map[string]string{"guid": guid, "port": strconv.Itoa(port)})
		if !ok || got != float64(c.value) {
			t.Errorf("%s: %s{guid=%q,port=\"%d\"} is %v (found %t), want %d", out, c.metric, guid, port, got, ok, c.value)
		}
	}
}

// switchRE matches a line of ibswitches: the GUID, the description and
// the LID.
var switchRE = regexp.MustCompile(`^Switch\s*: (0x[0-9a-f]+) ports \d+ "([^"]*)".* lid (\d+) `)

// switchGUIDLID returns the GUID (as infiniband_exporter writes it) and
// LID of the switch described as desc, from ibtool ibswitches.
func switchGUIDLID(ctx context.Context, t *testing.T, f *simfabric.Fabric, host, desc string) (string, int) {
	t.Helper()
	out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, host, "ibswitches")
	if err != nil || exit != 0 {
		t.Fatalf("ibswitches: exit %d, %v: %s", exit, err, errOut)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if m := switchRE.FindStringSubmatch(l); m != nil && m[2] == desc {
			lid, _ := strconv.Atoi(m[3])
			return m[1], lid
		}
	}
	t.Fatalf("ibswitches has no switch %q:\n%s", desc, out)
	return "", 0
}

// perfqueryLineRE matches a counter line of perfquery's output.
var perfqueryLineRE = regexp.MustCompile(`^(\w+):\.*(\d+)$`)

// perfqueryCounters runs a perfquery and returns its counters by name.
func perfqueryCounters(ctx context.Context, t *testing.T, run func(context.Context) ([]byte, []byte, int, error)) map[string]uint64 {
	t.Helper()
	out, errOut, exit, err := run(ctx)
	if err != nil || exit != 0 {
		t.Fatalf("perfquery: exit %d, %v: %s", exit, err, errOut)
	}
	counters := map[string]uint64{}
	for _, l := range strings.Split(string(out), "\n") {
		if m := perfqueryLineRE.FindStringSubmatch(l); m != nil {
			counters[m[1]], _ = strconv.ParseUint(m[2], 10, 64)
		}
	}
	return counters
}

// expositionValue returns the value of the series of metric whose labels
// include want, from Prometheus' text format.
func expositionValue(text []byte, metric string, want map[string]string) (float64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		rest, ok := strings.CutPrefix(l, metric+"{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok || !hasLabels(labels, want) {
			continue
		}
		value, _, _ = strings.Cut(value, " ") // a timestamp may follow
		v, err := strconv.ParseFloat(value, 64)
		return v, err == nil
	}
	return 0, false
}

// hasLabels reports whether the label list `a="x",b="y"` has every label
// of want with its value (the values here hold no commas or quotes).
func hasLabels(list string, want map[string]string) bool {
	n := 0
	for _, kv := range strings.Split(list, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if w, ok := want[k]; ok && v == strconv.Quote(w) {
			n++
		}
	}
	return n == len(want)
}

// exporterStartTimeout bounds an exporter's start: its first discovery of
// the small fabric, then its HTTP server.
const exporterStartTimeout = time.Minute

// startExporter runs `ibtool exporter` attached at host on a free loopback
// port with args, waits until /metrics answers 200 and returns its
// host:port. The exporter is stopped (SIGTERM, so that it leaves ibsim
// cleanly) when t ends, which fails t if it had exited or does not stop.
func startExporter(ctx context.Context, t *testing.T, f *simfabric.Fabric, host string, args ...string) string {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	return startExporterWith(ctx, t, f, host, func(ctx context.Context, addr string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
		if err != nil {
			return nil, err
		}
		return client.Do(req)
	}, args...)
}

// startExporterWith is startExporter with the request that checks it
// serves: get asks addr for the metrics.
func startExporterWith(ctx context.Context, t *testing.T, f *simfabric.Fabric, host string, get func(ctx context.Context, addr string) (*http.Response, error), args ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var output lockedBuffer
	cmd := exec.Command(ibtoolBin, append([]string{"exporter", "--web.listen-address", addr}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), f.Env(host)...)
	cmd.Stdout, cmd.Stderr = &output, &output
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	startFailed := false
	t.Cleanup(func() {
		select {
		case <-exited:
			if !startFailed {
				t.Errorf("ibtool exporter exited before the test ended: %v\n%s", waitErr, output.String())
			}
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			if waitErr != nil {
				t.Errorf("ibtool exporter after SIGTERM: %v\n%s", waitErr, output.String())
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("ibtool exporter did not stop within 10 s of SIGTERM\n%s", output.String())
		}
	})

	ctx, cancel := context.WithTimeout(ctx, exporterStartTimeout)
	defer cancel()
	for {
		resp, err := get(ctx, addr)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
			err = errors.New(resp.Status)
		}
		select {
		case <-exited:
			startFailed = true
			t.Fatalf("ibtool exporter %q exited: %v\n%s", args, waitErr, output.String())
		case <-ctx.Done():
			startFailed = true
			t.Fatalf("ibtool exporter on %s: no metrics within %v: %v\n%s", addr, exporterStartTimeout, err, output.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// lockedBuffer is a bytes.Buffer a running process writes while a test
// may read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
