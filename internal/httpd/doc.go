// Package httpd is the exporter's HTTP/1.1 server: GET and HEAD requests,
// keep-alive, answers streamed in chunks once they outgrow a buffer,
// header and idle timeouts, a request context that ends when the client
// goes away, and a graceful shutdown.
//
// It exists so that ibtool does not link net/http: every tool is the
// same binary, and net/http's server brings crypto/tls, HTTP/2 and their
// package initialisation into the start of every perfquery a script runs
// (docs/bench.md, Start-up). The exporter needs one path answered to
// Prometheus, which is what this package does; requests with a body are
// answered and the connection closed, and no method but GET and HEAD is
// served.
package httpd
