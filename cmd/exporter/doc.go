// Package exporter is the exporter tool family: ibtool exporter, the
// fabric's port counters as Prometheus metrics (pkg/exporter does the
// work; this package parses the flags, serves HTTP and writes --runonce's
// file).
package exporter
