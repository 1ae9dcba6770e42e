package exporter

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// desc is one metric family: client_golang's Desc and the type its
// samples are made with.
type desc struct {
	prom   *prometheus.Desc
	name   string
	help   string
	typ    prometheus.ValueType
	labels []string // the variable labels, in the order samples give their values
}

// newDesc returns a family with no constant labels.
func newDesc(name, help string, typ prometheus.ValueType, labels ...string) *desc {
	return &desc{prom: prometheus.NewDesc(name, help, labels, nil), name: name, help: help, typ: typ, labels: labels}
}

// metric is one sample of the family. A sample client_golang refuses
// (wrong label count, a label value that is not UTF-8, which labelValue
// prevents) becomes an invalid metric: the registry reports it as a
// gathering error and the rest of the scrape is served.
func (d *desc) metric(v float64, values ...string) prometheus.Metric {
	m, err := prometheus.NewConstMetric(d.prom, d.typ, v, values...)
	if err != nil {
		return prometheus.NewInvalidMetric(d.prom, err)
	}
	return m
}

// sample is one metric of a family kept for a scrape: the collectors'
// own, made while the sweep's results are counted.
type sample struct {
	desc   *desc
	values []string
	value  float64
}

// labelValue makes s a label value every Prometheus parser accepts: bytes
// that are not UTF-8 (a NodeDescription is 64 bytes of anything, a node
// name map any text) become U+FFFD, as client_golang refuses a label
// value that is not valid UTF-8. Quotes, backslashes and newlines stay:
// the text and OpenMetrics encoders escape them.
func labelValue(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}
