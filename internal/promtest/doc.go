// Package promtest runs a real Prometheus server for tests: Debian's
// prometheus package (scripts/install-deps.sh installs it), on a free
// loopback port with a data directory of its own and a generated scrape
// configuration, so that an exporter is checked by the server that will
// scrape it in production rather than by a parser of our own.
//
//	s := promtest.StartForTest(t, promtest.Config{Targets: []string{addr}})
//	after := time.Now()
//	targets, err := s.WaitScrape(ctx, after)   // every target scraped since
//	samples, err := s.Query(ctx, `infiniband_switch_port_symbol_error_total`)
//
// CheckMetrics runs `promtool check metrics` on an exposition file, the
// check node_exporter's textfile collector users rely on.
//
// Prometheus 2.42 hands new targets to its scrape loops on a 5-second
// tick, so the first scrape comes about 5 s after Start; later ones follow
// ScrapeInterval.
//
// The server never uses :9090 or the system's data directory, and is
// killed with the test binary if that dies first. StartForTest skips when
// Prometheus is not installed, and fails instead when
// IBTOOL_REQUIRE_BENCH=1 (as make test sets it).
package promtest
