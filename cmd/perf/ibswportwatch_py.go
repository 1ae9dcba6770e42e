package perf

import (
	"bytes"
	"fmt"
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

// loadSwportwatchThresholds reads -T as python-rdma's ibswportwatch
// does, through the same load_thresholds as its error checks
// (loadPyThresholds: python-rdma's defaults without a file), keyed by
// PortCounters field; a threshold below 0 is 0 (every rate reaches it).
func loadSwportwatchThresholds(file string) (map[string]uint64, error) {
	th, err := loadPyThresholds(file)
	if err != nil {
		return nil, err
	}
	out := make(map[string]uint64, len(th))
	for m, v := range th {
		if f := pyFieldName(m); f != "" {
			out[f] = uint64(max(v, 0))
		}
	}
	return out, nil
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
