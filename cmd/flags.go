package cmd

import (
	"time"

	"github.com/spf13/cobra"
)

// flagSet selects which groups of shared flags a tool takes.
type flagSet uint

const (
	// flagsLocalPort adds -C/--Ca, -P/--Port and --port: the local end port.
	flagsLocalPort flagSet = 1 << iota
	// flagsMAD adds -t/--timeout and --retries.
	flagsMAD
	// flagsJSON adds --json.
	flagsJSON
)

// CommonOptions are the flags shared by every tool, parsed before the tool runs.
type CommonOptions struct {
	CA       string        // -C: local CA name
	CAPort   int           // -P: local port number (0: the first active port)
	PortSpec string        // --port ca/port, port GUID or GID
	Timeout  time.Duration // -t: per-MAD timeout
	Retries  int           // --retries: resends after a timeout
	Verbose  int           // -v, repeatable; -d counts too
	JSON     bool          // --json: one JSON document instead of text
	Sim      bool          // --sim: use the ibsim simulator instead of the kernel
	Sysfs    string        // --sysfs: sysfs mount point (default $IBTOOL_SYSFS or /sys)
	timeoutM int           // -t as infiniband-diags takes it, in milliseconds
}

// addCommonFlags registers the shared flags of the groups in set on c, plus
// the ones every tool takes (-v, -d, --sim, --sysfs).
func addCommonFlags(c *cobra.Command, o *CommonOptions, set flagSet) {
	fl := c.Flags()
	fl.CountVarP(&o.Verbose, "verbose", "v", "increase verbosity (-vv also dumps MADs)")
	fl.CountP("debug", "d", "raise debug level (same as -v)")
	fl.BoolVar(&o.Sim, "sim", false, "use the ibsim simulator (also IBTOOL_SIM=1 or IBSIM_SOCKNAME set)")
	fl.StringVar(&o.Sysfs, "sysfs", "", "sysfs mount point (default $IBTOOL_SYSFS or /sys)")
	if set&flagsLocalPort != 0 {
		fl.StringVarP(&o.CA, "Ca", "C", "", "local CA name")
		fl.IntVarP(&o.CAPort, "Port", "P", 0, "local CA port number")
		fl.StringVar(&o.PortSpec, "port", "", "local end port as ca/port, port GUID or port GID")
	}
	if set&flagsMAD != 0 {
		fl.IntVarP(&o.timeoutM, "timeout", "t", 0, "timeout per MAD in milliseconds (0: the default)")
		fl.IntVar(&o.Retries, "retries", 3, "resends of a MAD after a timeout")
	}
	if set&flagsJSON != 0 {
		fl.BoolVar(&o.JSON, "json", false, "print one JSON document")
	}
}

// finish folds flags that need post-processing into o: -d into the verbosity
// and -t milliseconds into Timeout.
func (o *CommonOptions) finish(c *cobra.Command) {
	if d, err := c.Flags().GetCount("debug"); err == nil {
		o.Verbose += d
	}
	if o.timeoutM > 0 {
		o.Timeout = time.Duration(o.timeoutM) * time.Millisecond
	}
}
