// Package exporterexec is the exporter's entry in the ibtool binary: it
// runs the ibtool-exporter binary (cmd/ibtool-exporter) found beside
// ibtool, or in PATH, with the same arguments. The exporter serves HTTP
// through net/http, crypto/tls, client_golang and exporter-toolkit, whose
// package initialisation every one-shot tool would pay at start if ibtool
// linked them.
package exporterexec
