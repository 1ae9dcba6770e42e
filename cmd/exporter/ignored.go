package exporter

import (
	"time"

	"github.com/spf13/pflag"
)

// ignoredFlags are infiniband_exporter 0.10.0's flags that ibtool has no
// use for: the paths, timeouts and concurrency of the programs it runs
// (ibtool sends the MADs itself), sudo, and the ibswinfo collector
// (vendor MADs to Mellanox switch firmware). They are accepted, so that
// its systemd units and Helm values run unchanged, and each one given is
// logged once at start.
var ignoredFlags = []struct {
	name, usage string
	value       any // the flag's type and default
}{
	{"sudo", "infiniband_exporter's: run its helper programs with sudo", false},
	{"ibnetdiscover.path", "infiniband_exporter's: path of ibnetdiscover", "ibnetdiscover"},
	{"perfquery.path", "infiniband_exporter's: path of perfquery", "perfquery"},
	{"perfquery.timeout", "infiniband_exporter's: timeout of one perfquery run (the MAD timeout is -t)", 5 * time.Second},
	{"perfquery.max-concurrent", "infiniband_exporter's: perfquery runs at once (the sweep's parallelism is the MAD window, -o)", 1},
	{"collector.ibswinfo", "infiniband_exporter's: ibswinfo's switch data (vendor MADs)", false},
	{"ibswinfo.path", "infiniband_exporter's: path of ibswinfo", "ibswinfo"},
	{"ibswinfo.timeout", "infiniband_exporter's: timeout of one ibswinfo run", 10 * time.Second},
	{"ibswinfo.max-concurrent", "infiniband_exporter's: ibswinfo runs at once", 1},
}

// addIgnoredFlags registers ignoredFlags, hidden from the help.
func addIgnoredFlags(fl *pflag.FlagSet) {
	for _, f := range ignoredFlags {
		switch v := f.value.(type) {
		case bool:
			fl.Bool(f.name, v, f.usage+" (ignored)")
		case string:
			fl.String(f.name, v, f.usage+" (ignored)")
		case time.Duration:
			fl.Duration(f.name, v, f.usage+" (ignored)")
		case int:
			fl.Int(f.name, v, f.usage+" (ignored)")
		default:
			panic("exporter: ignored flag " + f.name + " of an unknown type")
		}
		_ = fl.MarkHidden(f.name)
	}
}

// ignoredGiven returns the ignored flags given on the command line.
func ignoredGiven(fl *pflag.FlagSet) []string {
	var out []string
	for _, f := range ignoredFlags {
		if fl.Changed(f.name) {
			out = append(out, f.name)
		}
	}
	return out
}
