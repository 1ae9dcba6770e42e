package exporter_test

import (
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtool/ibtool/pkg/exporter"
)

// WriteText writes what a registry gathers as a node_exporter textfile
// collector reads it: label values escaped, families sorted by name.
func ExampleWriteText() {
	reg := prometheus.NewRegistry()
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "infiniband_switch_info", Help: "Infiniband switch information"},
		[]string{"guid", "switch", "lid"})
	reg.MustRegister(info)
	info.WithLabelValues("0x0002c90300a1b2c4", `leaf "01"`, "3").Set(1)
	if _, err := exporter.WriteText(os.Stdout, reg); err != nil {
		panic(err)
	}
	// Output:
	// # HELP infiniband_switch_info Infiniband switch information
	// # TYPE infiniband_switch_info gauge
	// infiniband_switch_info{guid="0x0002c90300a1b2c4",lid="3",switch="leaf \"01\""} 1
}

// ScrapeDeadline leaves a margin to write the answer out of the time
// Prometheus waits for a scrape.
func ExampleScrapeDeadline() {
	for _, header := range []string{"10", "2.5", "", "junk"} {
		d := exporter.ScrapeDeadline(header, exporter.DefaultTimeout)
		os.Stdout.WriteString(strings.TrimSpace(header+" -> "+d.String()) + "\n")
	}
	// Output:
	// 10 -> 9.5s
	// 2.5 -> 2.25s
	// -> 2m0s
	// junk -> 2m0s
}
