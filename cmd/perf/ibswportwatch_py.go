package perf

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
)

// python-rdma's ibswportwatch options beside the counter sets
// (ibswportwatch_sets.go): --count, the number of polls; --delta and
// --threshold, its two displays; -T, the thresholds file; and the target
// assertions -L/--Lid and --Direct. Their short letters that the script
// uses for its own options (-n cycles, -b bytes, -t timeout, -D xmtdisc)
// keep the script's meaning.

// swportwatchPy are python-rdma's options of ibswportwatch.
type swportwatchPy struct {
	// Count is --count: polls in all (python-rdma's -n, which counts
	// the first; the script's -n does not).
	Count int
	// Delta is --delta, Threshold --threshold: python-rdma's display of
	// every counter with its rate, or of the counters whose rate is at
	// least their threshold. ThreshFile is -T, which implies
	// --threshold; thresh the thresholds by counter name.
	Delta, Threshold bool
	ThreshFile       string
	thresh           map[string]uint64
}

// addSwportwatchPyFlags registers python-rdma's options; the counter sets
// must be registered first (-D is --xmtdisc, so the DR assertion is
// --Direct alone).
func addSwportwatchPyFlags(c *cobra.Command, o *ibswportwatchOptions) {
	fl := c.Flags()
	fl.IntVar(&o.Py.Count, "count", 0, "poll this many times in all, then exit (python-rdma's -n; the script's -n counts the polls after the first)")
	fl.BoolVar(&o.Py.Delta, "delta", false, "python-rdma's display: every counter and its rate (PortCounters unless a counter set is given)")
	fl.BoolVar(&o.Py.Threshold, "threshold", false, "python-rdma's display of the counters whose rate reaches their threshold (-T, else python-rdma's defaults)")
	fl.StringVarP(&o.Py.ThreshFile, "thresholds", "T", "", "python-rdma's thresholds file: name = value lines, # comments; implies --threshold")
	cmdutil.AddTargetFlags(c, &o.Common, "L")
	cmdutil.AddTargetLongFlags(c, &o.Common, "D")
}

// finishPy folds python-rdma's options: --count into the cycles, --delta
// and --threshold into the counter set, the assertions into a check of
// the target.
func (o *ibswportwatchOptions) finishPy(c *cobra.Command, target string) error {
	fl := c.Flags()
	if fl.Changed("count") {
		if fl.Changed("cycles") {
			return cmdutil.UsageErrorf("--count and -n both bound the polls; give one")
		}
		if o.Py.Count < 1 {
			return cmdutil.UsageErrorf("--count %d: the number of polls, 1 or more", o.Py.Count)
		}
		o.Cycles = o.Py.Count - 1
	}
	if o.Py.ThreshFile != "" {
		o.Py.Threshold = true
	}
	if o.Py.Delta && o.Py.Threshold {
		return cmdutil.UsageErrorf("--delta and --threshold each pick the display; give one")
	}
	if o.Py.Threshold {
		th, err := loadSwportwatchThresholds(o.Py.ThreshFile)
		if err != nil {
			return err
		}
		o.Py.thresh = th
	}
	if (o.Py.Delta || o.Py.Threshold) && o.Set == nil {
		o.Set = (&mad.PortCounters{}).Layout()
	}
	if fl.Changed("Lid") || fl.Changed("Direct") {
		if o.GUID {
			return cmdutil.UsageErrorf("-G, -L and --Direct each assert the kind of the target; give one")
		}
		t, err := o.Common.ParseTarget(target)
		if err != nil {
			return err
		}
		if t.Kind == endport.DirectRoute {
			o.direct = &t
		}
	}
	return nil
}

// resolveDirect turns a --Direct target into the LID it ends at, through
// the SA's LinkRecords as python-rdma's get_gmp_path does, for the
// script's resolution to take.
func (o *ibswportwatchOptions) resolveDirect() error {
	if o.direct == nil {
		return nil
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	p, err := o.Common.GMPTarget(x, *o.direct, "performance MADs")
	if err != nil {
		return err
	}
	o.Target = strconv.Itoa(int(p.LID))
	return nil
}

// swportwatchDefaultThresholds are python-rdma's thresholds when -T names
// no file (libibtool/errors.py's load_thresholds), in counts a second.
func swportwatchDefaultThresholds() map[string]uint64 {
	return map[string]uint64{
		"PortRcvErrors": 10, "PortXmitConstraintErrors": 100, "SymbolErrorCounter": 10, "VL15Dropped": 100,
		"PortXmitDiscards": 100, "ExcessiveBufferOverrunErrors": 10, "LinkErrorRecoveryCounter": 10,
		"PortRcvSwitchRelayErrors": 100, "PortRcvRemotePhysicalErrors": 100, "LocalLinkIntegrityErrors": 10,
		"PortRcvConstraintErrors": 100, "LinkDownedCounter": 10,
	}
}

// loadSwportwatchThresholds reads python-rdma's thresholds file: "name =
// value" lines, blank lines and '#' comments; a name is a PortCounters
// field by its name, its libibmad label or the older perfquery label
// python-rdma knows (oldPerfqueryLabel), in any case; a value is decimal,
// 0x hex or 0 octal. An unknown name or a bad line is a usage error, as
// python-rdma's CmdError. No file gives python-rdma's defaults.
func loadSwportwatchThresholds(file string) (map[string]uint64, error) {
	if file == "" {
		return swportwatchDefaultThresholds(), nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &cmdutil.UsageError{Err: err}
	}
	fields := (&mad.PortCounters{}).Layout().Fields
	th := map[string]uint64{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		name, val, _ := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		v, err := strconv.ParseUint(strings.TrimSpace(val), 0, 64)
		if err != nil {
			return nil, cmdutil.UsageErrorf("%s: invalid threshold line %q", file, line)
		}
		known := oldPerfqueryLabel(name)
		for _, f := range fields {
			if strings.EqualFold(name, f.Name) || strings.EqualFold(name, f.Label) {
				known = f.Name
			}
		}
		if known == "" {
			return nil, cmdutil.UsageErrorf("%s: threshold key %q is not known (want a PortCounters field)", file, name)
		}
		th[known] = v
	}
	return th, nil
}

// oldPerfqueryLabel returns the PortCounters field an older libibmad
// perfquery label names (python-rdma's libib_name_map_perfquery:
// XmtData, RcvErrors, ...), or "".
func oldPerfqueryLabel(name string) string {
	switch strings.ToLower(name) {
	case "rcverrors":
		return "PortRcvErrors"
	case "xmtconstrainterrors":
		return "PortXmitConstraintErrors"
	case "symbolerrors":
		return "SymbolErrorCounter"
	case "xmtdiscards":
		return "PortXmitDiscards"
	case "rcvremotephyserrors":
		return "PortRcvRemotePhysicalErrors"
	case "excbufoverrunerrors":
		return "ExcessiveBufferOverrunErrors"
	case "xmtdata":
		return "PortXmitData"
	case "linkrecovers":
		return "LinkErrorRecoveryCounter"
	case "rcvswrelayerrors":
		return "PortRcvSwitchRelayErrors"
	case "xmtwait":
		return "PortXmitWait"
	case "linkintegrityerrors":
		return "LocalLinkIntegrityErrors"
	case "rcvdata":
		return "PortRcvData"
	case "rcvconstrainterrors":
		return "PortRcvConstraintErrors"
	case "linkdowned":
		return "LinkDownedCounter"
	case "xmtpkts":
		return "PortXmitPkts"
	case "rcvpkts":
		return "PortRcvPkts"
	}
	return ""
}

// appendSetThreshold is appendSetDelta for --threshold (python-rdma's
// _print_thresh): only the counters that moved at a rate of at least
// their threshold, a counter without one never.
func appendSetThreshold(b *bytes.Buffer, l *mad.Layout, data, last []byte, dt float64, th map[string]uint64) {
	if last == nil || dt <= 0 {
		return
	}
	for _, f := range l.Fields {
		limit, ok := th[f.Name]
		if !ok || f.Width > 64 {
			continue
		}
		v, prev := f.Value(data), f.Value(last)
		if v == prev {
			continue
		}
		rate := (float64(v) - float64(prev)) / dt
		if rate < float64(limit) {
			continue
		}
		b.WriteString(f.Name)
		if n := 33 - len(f.Name); n > 0 {
			b.WriteString(strings.Repeat(".", n))
		}
		fmt.Fprintf(b, "%-8d (+ %.3f/s)\n", v, rate)
	}
}
