package perf

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// python-rdma's ibswportwatch takes perfquery's counter-set flags
// (libibtool's Querier.add_options) and then shows, at every poll, every
// counter of that attribute with its rate (printer_delta). ibswportwatch
// keeps infiniband-diags' script output unless one of them is given.

// swportwatchSet is a counter-set flag of python-rdma's ibswportwatch.
type swportwatchSet struct {
	long, short, help string
	attr              *mad.Layout
}

// swportwatchSets are python-rdma's Querier.add_options, in its order.
var swportwatchSets = []swportwatchSet{
	{"extended", "x", "show the extended port counters (python-rdma's counter display)", (&mad.PortCountersExtended{}).Layout()},
	{"xmtsl", "X", "show the transmit SL counters (python-rdma's counter display)", (&mad.PortXmitDataSL{}).Layout()},
	{"rcvsl", "S", "show the receive SL counters (python-rdma's counter display)", (&mad.PortRcvDataSL{}).Layout()},
	{"xmtdisc", "D", "show the transmit discard details (python-rdma's counter display)", (&mad.PortXmitDiscardDetails{}).Layout()},
	{"rcverr", "E", "show the receive error details (python-rdma's counter display)", (&mad.PortRcvErrorDetails{}).Layout()},
	{"flow", "F", "show the flow control counters (python-rdma's counter display)", (&mad.PortFlowCtlCounters{}).Layout()},
	{"vl-xmit-errs", "", "show the flow control update errors per VL (python-rdma's counter display)", (&mad.PortVLXmitFlowCtlUpdateErrors{}).Layout()},
	{"vl-xmit-wait", "", "show the transmit wait counters per VL (python-rdma's counter display)", (&mad.PortVLXmitWaitCounters{}).Layout()},
	{"vl-congestion", "", "show the switch port congestion per VL (python-rdma's counter display)", (&mad.SwPortVLCongestion{}).Layout()},
}

// addSwportwatchSetFlags registers the counter-set flags and -a.
func addSwportwatchSetFlags(c *cobra.Command, o *ibswportwatchOptions) {
	fl := c.Flags()
	o.sets = make([]bool, len(swportwatchSets))
	for i, s := range swportwatchSets {
		fl.BoolVarP(&o.sets[i], s.long, s.short, false, s.help)
	}
	fl.BoolVarP(&o.AllPorts, "all_ports", "a", false, "all ports at once (PortSelect 255), python-rdma's counter display")
}

// finishSets picks the attribute of the counter-set flags: nil for the
// script's output, PortCounters for -a alone. Two sets are a usage error.
func (o *ibswportwatchOptions) finishSets() error {
	var picked []string
	for i, on := range o.sets {
		if on {
			o.Set = swportwatchSets[i].attr
			picked = append(picked, "--"+swportwatchSets[i].long)
		}
	}
	if len(picked) > 1 {
		return cmdutil.UsageErrorf("%s each pick the counters to show; give one", strings.Join(picked, ", "))
	}
	if o.Set == nil && o.AllPorts {
		o.Set = (&mad.PortCounters{}).Layout()
	}
	if o.Set != nil && o.Common.JSON {
		return cmdutil.UsageErrorf("--json prints the script's rates; a counter set (-x, -X, -S, -D, -E, -F, --vl-*, -a) or --delta or --threshold prints text only")
	}
	return nil
}

// swportwatchSetRun is python-rdma's display: every poll, the header and
// each counter of the set, with its increase per second since the poll
// before (measured, as python-rdma's clock_monotonic) when it moved.
func swportwatchSetRun(o *ibswportwatchOptions, k *nodeChecker, t checkTarget) error {
	port, err := cmdutil.ParsePortArg(o.Port)
	if err != nil {
		return cmdutil.UsageErrorf("port %q: %v", o.Port, err)
	}
	if o.AllPorts {
		port = mad.AllPortSelect
	}
	pma := madrpc.NewPMA(k.x, t.path)
	now := o.Now
	if now == nil {
		now = time.Now
	}
	var last []byte
	var lastTime time.Time
	pause := time.Duration(o.Pause * float64(time.Second))
	for n := o.Cycles; ; n-- {
		a := o.Set.New()
		data, err := pma.Get(k.ctx, a, port)
		if err != nil {
			return err
		}
		at := now()
		var b bytes.Buffer
		fmt.Fprintf(&b, "# Port counters: Lid %s port %d\n", t.lid, port)
		var dt float64
		if last != nil {
			dt = at.Sub(lastTime).Seconds()
		}
		if o.Py.thresh != nil {
			appendSetThreshold(&b, o.Set, data, last, dt, o.Py.thresh)
		} else {
			appendSetDelta(&b, o.Set, data, last, dt)
		}
		if _, err := o.IO.Out.Write(b.Bytes()); err != nil {
			return err
		}
		last, lastTime = data, at
		if n == 0 {
			return nil
		}
		if err := o.Sleep(k.ctx, pause); err != nil {
			if k.ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// appendSetDelta writes each counter of l in data as python-rdma's
// _print_one does: "Name....value", and for one that moved since last,
// the value left-aligned in 8 and its increase per second (per poll when
// dt is 0). PortSelect and the CounterSelects are left out.
func appendSetDelta(b *bytes.Buffer, l *mad.Layout, data, last []byte, dt float64) {
	for _, f := range l.Fields {
		if f.Name == "PortSelect" || strings.HasPrefix(f.Name, "CounterSelect") || f.Width > 64 {
			continue
		}
		v := f.Value(data)
		b.WriteString(f.Name)
		if n := 33 - len(f.Name); n > 0 {
			b.WriteString(strings.Repeat(".", n))
		}
		prev := v
		if last != nil {
			prev = f.Value(last)
		}
		switch {
		case prev == v:
			fmt.Fprintf(b, "%d\n", v)
		case dt > 0:
			fmt.Fprintf(b, "%-8d (+ %.3f/s)\n", v, (float64(v)-float64(prev))/dt)
		default:
			fmt.Fprintf(b, "%-8d (+ %d)\n", v, int64(v-prev))
		}
	}
}
