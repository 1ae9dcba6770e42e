package perf

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
)

// ibswportwatch is infiniband-diags' deprecated Perl script
// ibswportwatch.pl: it polls one port's PortCounters every pause and
// prints the rates at which its error counters (and with -b its data
// counters) move.

func init() {
	for _, name := range []string{"ibswportwatch", "ibswportwatch.pl"} {
		cmdutil.Register(cmdutil.Tool{Name: name, Summary: "poll a port's counters and report the rates of errors and data (deprecated script)",
			New: func(f *cmdutil.Factory) *cobra.Command { return newIbswportwatchCmd(f, name, nil) }, SignalIsEnd: true})
	}
}

// The counters the script reads from perfquery's output, in its order
// (IBswcountlimits' @counters): mad.PortErrorCounters, then
// mad.PortDataCounters (TestCounterLists), as a literal laid out as data.
var swportwatchCounters = []string{
	"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
	"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
	"PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
	"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts",
}

// swportwatchRates are the error counters whose rates the script reports,
// with the rate (counts a second) above which it calls one excessive
// (IBswcountlimits' %rate_dep_thresholds), in the order ibtool prints them.
var swportwatchRates = []struct {
	name  string
	limit float64
}{
	{"SymbolErrorCounter", 10}, {"LinkErrorRecoveryCounter", 10}, {"PortRcvErrors", 10},
	{"LocalLinkIntegrityErrors", 10}, {"PortXmitDiscards", 10},
}

// swportwatchData are the data counters -b reports (IBswcountlimits'
// %data_counters), in the order ibtool prints them.
var swportwatchData = mad.PortDataCounters

// ibswportwatchOptions are the script's flags and arguments.
type ibswportwatchOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	// Pause is -p: the time between polls, and what rates divide by.
	Pause float64
	// Cycles is -n: polls after the first (-1 forever).
	Cycles int
	// Bytes is -b: report the data counters' rates too.
	Bytes bool
	// GUID is -G: the address is a port GUID.
	GUID         bool
	Target, Port string
	Sleep        func(ctx context.Context, d time.Duration) error
	// Set is the attribute a counter-set flag of python-rdma's picks
	// (ibswportwatch_sets.go), nil for the script's output; AllPorts is
	// its -a. Now times the polls for their rates.
	Set      *mad.Layout
	sets     []bool
	AllPorts bool
	Now      func() time.Time
	// Py are python-rdma's other options (ibswportwatch_py.go); direct
	// is the target --Direct asserts a DR path.
	Py     swportwatchPy
	direct *endport.Target
}

func newIbswportwatchCmd(f *cmdutil.Factory, name string, runF func(*ibswportwatchOptions) error) *cobra.Command {
	o := &ibswportwatchOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   name + " [-p <pause_time> -b -v -n <cycles> -G] <guid|lid> <port>",
		Short: "poll a port's counters and report the rates of errors and data (deprecated script)",
		Long: name + ` reads a port's PortCounters, then every pause (-p seconds, default
10) reads them again and prints "Checking counts..." and a line for each of
SymbolErrorCounter, LinkErrorRecoveryCounter, PortRcvErrors,
LocalLinkIntegrityErrors and PortXmitDiscards that moved ("Detected rate",
or "Detected excessive rate" above 10 a second), as infiniband-diags'
ibswportwatch.pl does. -b adds the data and packet rates, -v every counter's
new and old value. It runs until stopped, or -n cycles.`,
		Example: "  " + name + " -p 5 -n 12 -b 12 3     # a minute of port 3 of LID 12",
		Args:    cmdutil.ArgsRange(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if !(o.Pause > 0) || math.IsInf(o.Pause, 0) {
				return cmdutil.UsageErrorf("-p %v: the pause is a number of seconds above 0", o.Pause)
			}
			if o.Cycles < -1 {
				return cmdutil.UsageErrorf("-n %d: a number of cycles, or -1 for ever", o.Cycles)
			}
			if o.Common.JSON && o.Cycles < 0 {
				return cmdutil.UsageErrorf("--json prints one document at the end: give -n")
			}
			if _, err := cmdutil.ParsePortArg(args[1]); err != nil {
				return cmdutil.UsageErrorf("port %q: %v", args[1], err)
			}
			if err := o.finishPy(c, args[0]); err != nil {
				return err
			}
			if err := o.finishSets(); err != nil {
				return err
			}
			o.Target, o.Port = args[0], args[1]
			o.Sleep = sleepCtx
			if runF != nil {
				return runF(o)
			}
			return ibswportwatchRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsSA)
	fl := c.Flags()
	fl.Float64VarP(&o.Pause, "pause", "p", 10, "seconds between counter polls")
	fl.IntVarP(&o.Cycles, "cycles", "n", -1, "run this many cycles, then exit (-1: for ever)")
	fl.BoolVarP(&o.Bytes, "bytes", "b", false, "report bytes/second and packets/second")
	fl.BoolVarP(&o.GUID, "Guid", "G", false, "the address is a port GUID")
	addSwportwatchSetFlags(c, o)
	addSwportwatchPyFlags(c, o)
	return c
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// swportwatchCycle is one poll's rates, for --json.
type swportwatchCycle struct {
	Rates     map[string]float64 `json:"rates"`
	Excessive []string           `json:"excessive,omitempty"`
	Counters  map[string]uint64  `json:"counters"`
}

// swportwatchJSON is the --json document; its fields are in the order of
// their keys.
type swportwatchJSON struct {
	Cycles       []swportwatchCycle `json:"cycles"`
	PauseSeconds float64            `json:"pauseSeconds"`
	Port         string             `json:"port"`
	Target       string             `json:"target"`
}

func ibswportwatchRun(o *ibswportwatchOptions) error {
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	if err := o.resolveDirect(); err != nil {
		return err
	}
	ctx := o.Common.Context()
	k := &nodeChecker{ctx: ctx, x: x, guid: o.GUID}
	var resolveOut bytes.Buffer // the scripts' FAILED line, not wanted here
	t, ok := k.resolve(&resolveOut, o.Target)
	if !ok {
		kind := "lid"
		if o.GUID {
			kind = "guid"
		}
		return fmt.Errorf("%s %s: address resolution failed (no port answers there)", kind, o.Target)
	}
	if o.Set != nil {
		return swportwatchSetRun(o, k, t)
	}
	read := func() (map[string]uint64, error) {
		pc, _, fail, _ := k.counters(t, o.Port)
		if fail != "" {
			guid := ""
			if o.GUID {
				guid = "-G "
			}
			return nil, fmt.Errorf("perfquery failed: \"perfquery %s%s %s\": %s", guid, o.Target, o.Port, fail)
		}
		m := make(map[string]uint64, len(swportwatchCounters))
		for i, v := range mad.CounterValues(pc, swportwatchCounters...) {
			m[swportwatchCounters[i]] = v
		}
		return m, nil
	}
	cur, err := read()
	if err != nil {
		return err
	}
	pause := time.Duration(o.Pause * float64(time.Second))
	var cycles []swportwatchCycle
	for n := o.Cycles; n != 0; n-- {
		var b bytes.Buffer
		b.WriteString("Checking counts...\n")
		if !o.Common.JSON {
			if _, err := o.IO.Out.Write(b.Bytes()); err != nil {
				return err
			}
			b.Reset()
		}
		if err := o.Sleep(ctx, pause); err != nil {
			if ctx.Err() != nil {
				return nil // stopped: the script's normal end
			}
			return err
		}
		next, err := read()
		if err != nil {
			return err
		}
		cy := swportwatchCycle{Rates: map[string]float64{}, Counters: next}
		rate := func(name string) float64 { return (float64(next[name]) - float64(cur[name])) / o.Pause }
		for _, r := range swportwatchRates {
			v := rate(r.name)
			cy.Rates[r.name] = v
			switch {
			case v > r.limit:
				cy.Excessive = append(cy.Excessive, r.name)
				fmt.Fprintf(&b, "Detected excessive rate for %s (%s cnts/sec)\n", r.name, perlNumber(v))
			case v > 0:
				fmt.Fprintf(&b, "Detected rate for %s (%s cnts/sec)\n", r.name, perlNumber(v))
			}
		}
		if o.Bytes {
			for _, name := range swportwatchData {
				v := rate(name)
				cy.Rates[name] = v
				fmt.Fprintf(&b, "   %s %s/second\n", perlNumber(v), name)
			}
		}
		if o.Common.Verbose > 0 {
			b.WriteString("   Counter\t\t\tNew ==> Old\n")
			for _, name := range swportwatchCounters {
				fmt.Fprintf(&b, "   %s\t\t\t%d ==> %d\n", name, next[name], cur[name])
			}
		}
		cur = next
		if o.Common.JSON {
			cycles = append(cycles, cy)
			continue
		}
		if _, err := o.IO.Out.Write(b.Bytes()); err != nil {
			return err
		}
	}
	if o.Common.JSON {
		return cmdutil.WriteJSONDocument(o.IO.Out, swportwatchJSON{Cycles: cycles, PauseSeconds: o.Pause, Port: o.Port, Target: o.Target})
	}
	return nil
}

// perlNumber formats a number as Perl prints one: an integer without a
// point, otherwise up to 15 significant digits.
func perlNumber(v float64) string {
	return strconv.FormatFloat(v, 'g', 15, 64)
}
