// Package exporter is the ibtool-exporter binary's command: the fabric's
// port counters as Prometheus metrics (pkg/exporter does the work; this
// package parses the flags, infiniband_exporter's and exporter-toolkit's,
// serves HTTP through exporter-toolkit's web server and writes
// --exporter.runonce's file). Only cmd/ibtool-exporter links it: the
// ibtool binary's "exporter" runs that binary (cmd/exporterexec).
package exporter
