package promtest

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
)

func TestConfigYAML(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		want    string
		wantErr string
	}{
		{
			name: "defaults",
			cfg:  Config{Targets: []string{"127.0.0.1:9315"}},
			want: `global:
  scrape_interval: 1000ms
  scrape_timeout: 1000ms
scrape_configs:
  - job_name: "promtest"
    metrics_path: "/metrics"
    static_configs:
      - targets:
          - "127.0.0.1:9315"
`,
		},
		{
			name: "HTTPS with basic auth",
			cfg:  Config{Targets: []string{"127.0.0.1:9315"}, CAFile: "/tmp/ca.pem", Username: "prom", Password: "p\"w"},
			want: `global:
  scrape_interval: 1000ms
  scrape_timeout: 1000ms
scrape_configs:
  - job_name: "promtest"
    metrics_path: "/metrics"
    scheme: https
    tls_config:
      ca_file: "/tmp/ca.pem"
    basic_auth:
      username: "prom"
      password: "p\"w"
    static_configs:
      - targets:
          - "127.0.0.1:9315"
`,
		},
		{
			name: "two targets, shorter timeout",
			cfg: Config{Targets: []string{"127.0.0.1:1", "[::1]:2"}, Job: "ib", MetricsPath: "/m",
				ScrapeInterval: 2 * time.Second, ScrapeTimeout: 1500 * time.Millisecond},
			want: `global:
  scrape_interval: 2000ms
  scrape_timeout: 1500ms
scrape_configs:
  - job_name: "ib"
    metrics_path: "/m"
    static_configs:
      - targets:
          - "127.0.0.1:1"
          - "[::1]:2"
`,
		},
		{name: "no targets", cfg: Config{}, wantErr: "no targets"},
		{
			name:    "timeout over interval",
			cfg:     Config{Targets: []string{"a:1"}, ScrapeInterval: time.Second, ScrapeTimeout: 2 * time.Second},
			wantErr: "longer than the interval",
		},
		{
			name:    "below a millisecond",
			cfg:     Config{Targets: []string{"a:1"}, ScrapeInterval: time.Microsecond},
			wantErr: "at least 1ms",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cfg.withDefaults().yaml()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("unexpected configuration (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSamplesOf(t *testing.T) {
	vector := model.Vector{
		{Metric: model.Metric{"__name__": "x", "port": "1"}, Value: 1, Timestamp: 1435781451781},
		{Metric: model.Metric{}, Value: model.SampleValue(math.Inf(1)), Timestamp: 2000},
	}
	want := []Sample{
		{Labels: map[string]string{"__name__": "x", "port": "1"}, Value: 1, Time: time.UnixMilli(1435781451781)},
		{Labels: map[string]string{}, Value: math.Inf(1), Time: time.Unix(2, 0)},
	}
	if diff := cmp.Diff(want, samplesOf(vector)); diff != "" {
		t.Errorf("unexpected samples (-want +got):\n%s", diff)
	}
}

// exposition is what the test exporter serves: a counter, a gauge with
// labels and a value past 2^53, which a float64 keeps only approximately.
const exposition = `# HELP promtest_events_total Events seen.
# TYPE promtest_events_total counter
promtest_events_total 42
# HELP promtest_port_bytes Bytes per port.
# TYPE promtest_port_bytes gauge
promtest_port_bytes{guid="0x0002c90300000001",port="1"} 1234
promtest_port_bytes{guid="0x0002c90300000001",port="2"} 9007199254740993
`

// serve starts an HTTP server answering /metrics with h and returns its
// host:port.
func serve(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func TestIntegrationServer(t *testing.T) {
	var timeoutHeader string
	good := serve(t, func(w http.ResponseWriter, r *http.Request) {
		timeoutHeader = r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds")
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(exposition))
	})
	bad := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "sweep failed", http.StatusInternalServerError)
	})
	s := StartForTest(t, Config{
		Targets:        []string{good, bad},
		ScrapeInterval: 500 * time.Millisecond,
		ScrapeTimeout:  400 * time.Millisecond,
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The second scrape after the start: the first one's samples are
	// committed by then.
	first, err := s.WaitScrape(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	targets, err := s.WaitScrape(ctx, LastScrape(first))
	if err != nil {
		t.Fatal(err)
	}
	health := map[string]Target{}
	for _, tg := range targets {
		health[tg.Labels["instance"]] = tg
	}
	if tg := health[good]; tg.Health != HealthUp || tg.LastError != "" || tg.Labels["job"] != "promtest" {
		t.Errorf("target %s: health %q, last error %q, labels %v; want up, no error, job promtest", good, tg.Health, tg.LastError, tg.Labels)
	}
	if tg := health[bad]; tg.Health != HealthDown || !strings.Contains(tg.LastError, "500") {
		t.Errorf("target %s: health %q, last error %q; want down with the HTTP status", bad, tg.Health, tg.LastError)
	}
	if timeoutHeader != "0.4" {
		t.Errorf("X-Prometheus-Scrape-Timeout-Seconds: got %q, want 0.4", timeoutHeader)
	}

	got, err := s.Query(ctx, `promtest_events_total`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Value != 42 || got[0].Labels["__name__"] != "promtest_events_total" || got[0].Labels["instance"] != good {
		t.Errorf("promtest_events_total: got %+v, want one sample of 42 from %s", got, good)
	}
	got, err = s.Query(ctx, `promtest_port_bytes{port="2"}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Value != 9007199254740992 || got[0].Labels["guid"] != "0x0002c90300000001" {
		t.Errorf("promtest_port_bytes{port=\"2\"}: got %+v, want 2^53 (the float64 nearest)", got)
	}
	got, err = s.Query(ctx, `up`)
	if err != nil {
		t.Fatal(err)
	}
	up := map[string]float64{}
	for _, sm := range got {
		up[sm.Labels["instance"]] = sm.Value
	}
	if diff := cmp.Diff(map[string]float64{good: 1, bad: 0}, up); diff != "" {
		t.Errorf("unexpected up (-want +got):\n%s", diff)
	}
	if _, err := s.Query(ctx, `sum(`); err == nil || !strings.Contains(err.Error(), "bad_data") {
		t.Errorf("a bad expression: got %v, want the API's bad_data error", err)
	}
	if _, err := s.Query(ctx, `1`); err == nil || !strings.Contains(err.Error(), "scalar") {
		t.Errorf("a scalar: got %v, want an error", err)
	}
}

func TestIntegrationStartFails(t *testing.T) {
	Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A config Prometheus refuses: an unparsable target.
	_, err := Start(ctx, Config{Targets: []string{"no port here/x"}, TempDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Errorf("got %v, want the server's exit with its log", err)
	}
	_, err = Start(ctx, Config{Targets: []string{"a:1"}, Binary: "/nonexistent/prometheus"})
	if err == nil || !strings.Contains(err.Error(), "apt-get install prometheus") {
		t.Errorf("missing binary: got %v, want a hint to install it", err)
	}
}

func TestIntegrationCheckMetrics(t *testing.T) {
	Require(t)
	tests := []struct {
		name    string
		text    string
		wantErr string // "" when promtool accepts the text
	}{
		{name: "good", text: exposition},
		{
			name:    "counter without _total",
			text:    "# HELP promtest_events Events.\n# TYPE promtest_events counter\npromtest_events 1\n",
			wantErr: `counter metrics should have "_total" suffix`,
		},
		{
			name:    "no HELP",
			text:    "# TYPE promtest_up gauge\npromtest_up 1\n",
			wantErr: "no help text",
		},
		{
			name:    "not the text format",
			text:    "promtest_up{ 1\n",
			wantErr: "error while linting",
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "metrics.prom")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			err := CheckMetrics(ctx, path)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("got %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
	if err := CheckMetrics(ctx, "/nonexistent/metrics.prom"); err == nil {
		t.Error("a missing file: no error")
	}
}
