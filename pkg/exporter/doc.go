// Package exporter reads the fabric's port counters for Prometheus: a
// topology kept by a background refresher, one parallel PerfMgt sweep of
// every port per scrape (scrapes that overlap share it), and the metrics
// treydock/infiniband_exporter exposes, under the same names, types and
// labels, plus link state, width and speed, 64-bit counters where the
// PMA has them, and the counters that saturated.
//
// Collector is a client_golang prometheus.Collector; Collector.Handler
// serves scrapes through promhttp within the time Prometheus gives each
// (X-Prometheus-Scrape-Timeout-Seconds); Metrics.WriteTo writes one
// scrape in the text format with expfmt. A scrape's Metrics are also a
// prometheus.Gatherer (Metrics.Gather), which builds client_golang's data
// model directly: what a registry gathers from them, at a fraction of the
// cost on a large fabric; Handler and WriteTo use it. Label values are always valid
// UTF-8. The ibtool-exporter binary (cmd/ibtool-exporter) serves them.
package exporter
