package promtest

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Sample is one element of an instant vector: a series' labels (the
// metric name under "__name__") and its value at the query's time.
type Sample struct {
	Labels map[string]string
	Value  float64
	Time   time.Time
}

// api returns client_golang's client of the server's HTTP API.
func (s *Server) api() (v1.API, error) {
	c, err := api.NewClient(api.Config{Address: s.URL, Client: s.client})
	if err != nil {
		return nil, fmt.Errorf("promtest: %w", err)
	}
	return v1.NewAPI(c), nil
}

// Query evaluates the PromQL expression expr now (/api/v1/query) and
// returns the samples of the instant vector it yields, in the server's
// order. A scalar or string result is an error.
func (s *Server) Query(ctx context.Context, expr string) ([]Sample, error) {
	a, err := s.api()
	if err != nil {
		return nil, err
	}
	v, _, _, err := a.Query(ctx, expr, time.Now())
	if err != nil {
		return nil, fmt.Errorf("promtest: query %q: %w", expr, err)
	}
	vector, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("promtest: query %q: a %s, not an instant vector", expr, v.Type())
	}
	return samplesOf(vector), nil
}

// samplesOf converts the API client's vector.
func samplesOf(vector model.Vector) []Sample {
	samples := make([]Sample, 0, len(vector))
	for _, s := range vector {
		labels := make(map[string]string, len(s.Metric))
		for k, v := range s.Metric {
			labels[string(k)] = string(v)
		}
		samples = append(samples, Sample{Labels: labels, Value: float64(s.Value), Time: s.Timestamp.Time()})
	}
	return samples
}

// Health is a target's state as Prometheus reports it.
type Health string

// The states of a target.
const (
	HealthUp      Health = "up"      // the last scrape succeeded
	HealthDown    Health = "down"    // the last scrape failed: see Target.LastError
	HealthUnknown Health = "unknown" // not scraped yet
)

// Target is an active scrape target (/api/v1/targets).
type Target struct {
	Labels     map[string]string
	ScrapePool string
	ScrapeURL  string
	Health     Health
	// LastError is why the last scrape failed, "" when it did not.
	LastError string
	// LastScrape is when the last scrape started; zero before the first.
	LastScrape time.Time
	// LastScrapeDuration is how long the last scrape took, in seconds.
	LastScrapeDuration float64
}

// Targets returns the server's active targets.
func (s *Server) Targets(ctx context.Context) ([]Target, error) {
	a, err := s.api()
	if err != nil {
		return nil, err
	}
	r, err := a.Targets(ctx)
	if err != nil {
		return nil, fmt.Errorf("promtest: targets: %w", err)
	}
	out := make([]Target, 0, len(r.Active))
	for _, at := range r.Active {
		labels := make(map[string]string, len(at.Labels))
		for k, v := range at.Labels {
			labels[string(k)] = string(v)
		}
		out = append(out, Target{Labels: labels, ScrapePool: at.ScrapePool, ScrapeURL: at.ScrapeURL, Health: Health(at.Health),
			LastError: at.LastError, LastScrape: at.LastScrape, LastScrapeDuration: at.LastScrapeDuration})
	}
	return out, nil
}

// pollInterval is how often the Wait methods ask the server.
const pollInterval = 50 * time.Millisecond

// WaitScrape waits until every target has been scraped since after (its
// last scrape started after it) and returns the targets. A scrape's
// samples are committed just after Prometheus reports the scrape, so a
// query right after may still see the one before: wait for two scrapes
// (the second after the first's LastScrape), or poll the query.
func (s *Server) WaitScrape(ctx context.Context, after time.Time) ([]Target, error) {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		targets, err := s.Targets(ctx)
		if err != nil {
			return nil, err
		}
		if len(targets) > 0 && scrapedSince(targets, after) {
			return targets, nil
		}
		select {
		case <-ctx.Done():
			return targets, fmt.Errorf("promtest: waiting for a scrape of every target after %v: %w", after.Format(time.RFC3339Nano), ctx.Err())
		case <-s.done:
			return targets, fmt.Errorf("promtest: prometheus exited: %v\n%s", s.err, s.logTail())
		case <-tick.C:
		}
	}
}

// scrapedSince reports whether every target's last scrape started after t.
func scrapedSince(targets []Target, t time.Time) bool {
	for _, tg := range targets {
		if !tg.LastScrape.After(t) {
			return false
		}
	}
	return true
}

// LastScrape returns the earliest of the targets' last scrapes: a time
// every target has been scraped since.
func LastScrape(targets []Target) time.Time {
	var t time.Time
	for i, tg := range targets {
		if i == 0 || tg.LastScrape.Before(t) {
			t = tg.LastScrape
		}
	}
	return t
}
