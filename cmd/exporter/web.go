package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/exporter"
)

// webOptions are exporter-toolkit's flags (its kingpinflag package's,
// on pflag) and the telemetry path.
type webOptions struct {
	// ListenAddresses is --web.listen-address, repeatable.
	ListenAddresses []string
	// ConfigFile is --web.config.file: TLS, client certificates and
	// basic auth (exporter-toolkit's web configuration file).
	ConfigFile string
	// SystemdSocket is --web.systemd-socket: serve on the sockets
	// systemd passes instead of listening.
	SystemdSocket bool
	// TelemetryPath is --web.telemetry-path.
	TelemetryPath string
	// DisableExporterMetrics is --web.disable-exporter-metrics: no go_*,
	// process_* and promhttp_* metrics.
	DisableExporterMetrics bool
}

// defaultListenAddress is infiniband_exporter's port.
const defaultListenAddress = ":9315"

func (w *webOptions) addFlags(fl *pflag.FlagSet) {
	fl.StringArrayVar(&w.ListenAddresses, "web.listen-address", []string{defaultListenAddress},
		"address to serve the metrics on; repeat it for more (:9315, [::1]:9315, vsock://:9315)")
	fl.StringVar(&w.ConfigFile, "web.config.file", "",
		"exporter-toolkit web configuration file: TLS, client certificates, basic auth (docs/exporter.md)")
	fl.BoolVar(&w.SystemdSocket, "web.systemd-socket", false, "serve on the sockets systemd passes (socket activation) instead of --web.listen-address")
	fl.StringVar(&w.TelemetryPath, "web.telemetry-path", "/metrics", "path the metrics are served on")
	fl.BoolVar(&w.DisableExporterMetrics, "web.disable-exporter-metrics", false, "leave out the exporter's own metrics (go_*, process_*, promhttp_*)")
}

func (w *webOptions) finish() error {
	if !strings.HasPrefix(w.TelemetryPath, "/") {
		return cmdutil.UsageErrorf("invalid --web.telemetry-path %q: want a path starting with /", w.TelemetryPath)
	}
	if len(w.ListenAddresses) == 0 && !w.SystemdSocket {
		return cmdutil.UsageErrorf("no --web.listen-address")
	}
	if w.ConfigFile != "" {
		// The file is read again at every connection; a broken one
		// stops the start rather than every scrape.
		if err := web.Validate(w.ConfigFile); err != nil {
			return cmdutil.UsageErrorf("invalid --web.config.file %s: %v", w.ConfigFile, err)
		}
	}
	return nil
}

// promLogger hands promhttp's errors to the logger.
type promLogger struct{ l *slog.Logger }

func (p promLogger) Println(v ...any) { p.l.Error(strings.TrimSuffix(fmt.Sprintln(v...), "\n")) }

// handler is the exporter's HTTP handler: the metrics on the telemetry
// path, exporter-toolkit's landing page on /.
func handler(o *exporterOptions, coll *exporter.Collector, report func(exporter.Summary), slog *slog.Logger) (http.Handler, error) {
	hopts := exporter.HandlerOpts{MaxScrape: o.ScrapeTimeout, Report: report, ErrorLog: promLogger{slog}}
	if !o.Web.DisableExporterMetrics {
		self := prometheus.NewRegistry()
		self.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		hopts.Gatherer, hopts.Registerer = self, self
	}
	mux := http.NewServeMux()
	mux.Handle(o.Web.TelemetryPath, coll.Handler(hopts))
	if o.Web.TelemetryPath != "/" {
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        "InfiniBand Exporter (ibtool)",
			Description: "The fabric's port counters under infiniband_exporter's metric names",
			Version:     o.Version,
			Links:       []web.LandingLinks{{Address: o.Web.TelemetryPath, Text: "Metrics"}},
			Profiling:   "false", // no /debug/pprof here
		})
		if err != nil {
			return nil, err
		}
		mux.Handle("/", landing)
	}
	return mux, nil
}

// shutdownTimeout bounds the wait for the scrapes in flight at the end.
const shutdownTimeout = 5 * time.Second

// serve serves the metrics until ctx ends, refreshing the topology in the
// background.
func serve(ctx context.Context, o *exporterOptions, coll *exporter.Collector, ref *exporter.Refresher, discErr error, log *logger) error {
	slog := o.slogger()
	h, err := handler(o, coll, func(sum exporter.Summary) {
		if n := len(sum.Failed); n > 0 {
			r := sum.Failed[0]
			log.printf("scrape: %d of %d devices did not answer (%d errors, %d timeouts); first: %s %s: %v",
				n, sum.Devices, sum.Errors, sum.Timeouts, typeName(r.Device), r.Device.GUID, r.Err)
		}
	}, slog)
	if err != nil {
		return err
	}
	go ref.Run(ctx, discErr)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}
	flags := &web.FlagConfig{WebListenAddresses: &o.Web.ListenAddresses, WebSystemdSocket: &o.Web.SystemdSocket, WebConfigFile: &o.Web.ConfigFile}
	done := make(chan error, 1)
	go func() { done <- web.ListenAndServe(srv, flags, slog) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		srv.Shutdown(sctx)
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
