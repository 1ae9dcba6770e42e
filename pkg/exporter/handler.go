package exporter

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ScrapeTimeoutHeader is where Prometheus says how long it waits for a
// scrape, in seconds.
const ScrapeTimeoutHeader = "X-Prometheus-Scrape-Timeout-Seconds"

// ScrapeDeadline is how long a scrape may sweep: the time Prometheus
// says it waits (timeout, the value of its
// X-Prometheus-Scrape-Timeout-Seconds header) less a margin to write the
// answer (a tenth of it, at most half a second), or max when the header
// is missing, malformed or longer.
func ScrapeDeadline(timeout string, max time.Duration) time.Duration {
	s, err := strconv.ParseFloat(timeout, 64)
	if err != nil || s <= 0 {
		return max
	}
	d := time.Duration(s * float64(time.Second))
	d -= min(d/10, 500*time.Millisecond)
	if max > 0 && d > max {
		return max
	}
	return d
}

// HandlerOpts configure Handler.
type HandlerOpts struct {
	// MaxScrape bounds a scrape's sweep when Prometheus names no
	// timeout, or a longer one; 0 means DefaultTimeout.
	MaxScrape time.Duration
	// Report, when set, is told what went wrong in each scrape.
	Report func(Summary)
	// Gatherer, when set, adds its metrics to every scrape's: the Go and
	// process collectors' of a registry, say.
	Gatherer prometheus.Gatherer
	// Registerer, when set, is given promhttp's metrics of the handler
	// (promhttp_metric_handler_requests_total, _requests_in_flight and
	// _errors_total).
	Registerer prometheus.Registerer
	// ErrorLog, when set, is told of errors in gathering and encoding.
	ErrorLog promhttp.Logger
}

// Handler serves the metrics through client_golang's promhttp: each
// request is one Scrape within the scrape's deadline (ScrapeDeadline of
// the request's X-Prometheus-Scrape-Timeout-Seconds), encoded as the
// client asks (text, OpenMetrics, protobuf; gzip or zstd). A metric that
// cannot be gathered is left out and logged; the rest is served.
func (c *Collector) Handler(o HandlerOpts) http.Handler {
	maxScrape := o.MaxScrape
	if maxScrape <= 0 {
		maxScrape = DefaultTimeout
	}
	popts := promhttp.HandlerOpts{
		ErrorLog:          o.ErrorLog,
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	}
	if o.Registerer != nil {
		// promhttp_metric_handler_errors_total, registered once here:
		// HandlerFor below finds it already registered.
		popts.Registry = o.Registerer
		promhttp.HandlerFor(prometheus.NewRegistry(), popts)
	}
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if d := ScrapeDeadline(r.Header.Get(ScrapeTimeoutHeader), maxScrape); d > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		m, sum := c.Scrape(ctx)
		if o.Report != nil {
			o.Report(sum)
		}
		promhttp.HandlerFor(mergedGatherer{scrape: m, other: o.Gatherer}, popts).ServeHTTP(w, r)
	})
	if o.Registerer != nil {
		h = promhttp.InstrumentMetricHandler(o.Registerer, h)
	}
	return h
}
