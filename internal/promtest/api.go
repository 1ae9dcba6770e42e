package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Sample is one element of an instant vector: a series' labels (the
// metric name under "__name__") and its value at the query's time.
type Sample struct {
	Labels map[string]string
	Value  float64
	Time   time.Time
}

// apiResponse is the envelope of every /api/v1 answer.
type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

// get calls the API at path with query and decodes the data of a
// successful answer into data.
func (s *Server) get(ctx context.Context, path string, query url.Values, data any) error {
	u := s.URL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("promtest: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("promtest: reading %s: %w", u, err)
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("promtest: %s: HTTP %d, not an API answer: %w: %.200q", u, resp.StatusCode, err, body)
	}
	if r.Status != "success" {
		return fmt.Errorf("promtest: %s: %s: %s", u, r.ErrorType, r.Error)
	}
	if err := json.Unmarshal(r.Data, data); err != nil {
		return fmt.Errorf("promtest: decoding the data of %s: %w", u, err)
	}
	return nil
}

// Query evaluates the PromQL expression expr now (/api/v1/query) and
// returns the samples of the instant vector it yields, in the server's
// order. A scalar or string result is an error.
func (s *Server) Query(ctx context.Context, expr string) ([]Sample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"` // its shape depends on ResultType
	}
	if err := s.get(ctx, "/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("promtest: query %q: a %s, not an instant vector", expr, data.ResultType)
	}
	var vector []struct {
		Metric map[string]string  `json:"metric"`
		Value  [2]json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data.Result, &vector); err != nil {
		return nil, fmt.Errorf("promtest: query %q: decoding the vector: %w", expr, err)
	}
	samples := make([]Sample, 0, len(vector))
	for _, r := range vector {
		sm, err := decodeValue(r.Value)
		if err != nil {
			return nil, fmt.Errorf("promtest: query %q: %w", expr, err)
		}
		sm.Labels = r.Metric
		samples = append(samples, sm)
	}
	return samples, nil
}

// decodeValue decodes the API's [unix seconds, "value"] pair; the value is
// a string so that NaN and the infinities survive JSON.
func decodeValue(v [2]json.RawMessage) (Sample, error) {
	var ts float64
	var val string
	if err := json.Unmarshal(v[0], &ts); err != nil {
		return Sample{}, fmt.Errorf("sample time %s: %w", v[0], err)
	}
	if err := json.Unmarshal(v[1], &val); err != nil {
		return Sample{}, fmt.Errorf("sample value %s: %w", v[1], err)
	}
	f, err := strconv.ParseFloat(val, 64)
	if err != nil {
		return Sample{}, fmt.Errorf("sample value: %w", err)
	}
	// The API's times are whole milliseconds.
	return Sample{Value: f, Time: time.UnixMilli(int64(math.Round(ts * 1000)))}, nil
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
	Labels     map[string]string `json:"labels"`
	ScrapePool string            `json:"scrapePool"`
	ScrapeURL  string            `json:"scrapeUrl"`
	Health     Health            `json:"health"`
	// LastError is why the last scrape failed, "" when it did not.
	LastError string `json:"lastError"`
	// LastScrape is when the last scrape started; zero before the first.
	LastScrape time.Time `json:"lastScrape"`
	// LastScrapeDuration is how long the last scrape took, in seconds.
	LastScrapeDuration float64 `json:"lastScrapeDuration"`
}

// Targets returns the server's active targets.
func (s *Server) Targets(ctx context.Context) ([]Target, error) {
	var data struct {
		ActiveTargets []Target `json:"activeTargets"`
	}
	if err := s.get(ctx, "/api/v1/targets", url.Values{"state": {"active"}}, &data); err != nil {
		return nil, err
	}
	return data.ActiveTargets, nil
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
