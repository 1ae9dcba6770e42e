package exporter

import (
	"context"
	"strconv"
	"time"

	"github.com/ibtool/ibtool/internal/httpd"
)

// ContentType is the text exposition format's content type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// scrapeTimeoutHeader is where Prometheus says how long it waits for a
// scrape.
const scrapeTimeoutHeader = "X-Prometheus-Scrape-Timeout-Seconds"

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

// Handler serves the metrics: each request is one Collect, within the
// scrape's deadline (ScrapeDeadline with maxScrape). report, when set, is
// told what went wrong in each scrape.
func (c *Collector) Handler(maxScrape time.Duration, report func(Summary)) httpd.Handler {
	return func(w *httpd.Response, r *httpd.Request) {
		ctx := r.Context()
		if d := ScrapeDeadline(r.Header.Get(scrapeTimeoutHeader), maxScrape); d > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		m, sum := c.Collect(ctx)
		if report != nil {
			report(sum)
		}
		// The answer goes out as it is written: the sweep is over, so
		// only the client going away can fail it, and a whole scrape
		// held in memory would be tens of megabytes on a big fabric.
		w.Header.Set("Content-Type", ContentType)
		m.WriteTo(w)
	}
}
