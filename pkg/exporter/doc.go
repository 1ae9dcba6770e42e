// Package exporter reads the fabric's port counters for Prometheus: a
// topology kept by a background refresher, one parallel PerfMgt sweep of
// every port per scrape (scrapes that overlap share it), and the metrics
// treydock/infiniband_exporter exposes, under the same names, types and
// labels, plus link state, width and speed, 64-bit counters where the
// PMA has them, and the counters that saturated.
//
// The metrics are written in Prometheus' text exposition format (0.0.4)
// by this package, byte for byte as client_golang's registry and expfmt
// write them (the tests check it against client_golang): linking
// client_golang's prometheus package into the busybox binary would run
// its package initialisation (the default registry's Go and process
// collectors, protobuf descriptors) at the start of every tool
// (docs/bench.md).
package exporter
