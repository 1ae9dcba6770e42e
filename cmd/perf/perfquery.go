package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/madtext"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "perfquery",
		Light:   true,
		Summary: "query (and reset) a port's performance counters",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newPerfqueryCmd(f, nil) },
	})
}

// Reset masks perfquery starts from: every PortCounters counter but
// PortXmitWait and QP1Dropped (their bits join when the PMA has them),
// every PortExtendedSpeedsCounters counter.
const (
	perfDefaultMask    = 0xffff
	perfDefaultExtMask = ^uint64(0)
)

// perfCounterSet is one of perfquery's single-attribute counter views
// (-X, -S, -D, -E, -T, --oprcvcounters, ...): the flag that picks it and
// the attribute it reads, whose name titles the output. Each is reset
// with the -R mask laid out as mad.ResetData does for its attribute.
type perfCounterSet struct {
	Long, Short string
	Help        string
	Attr        *mad.Layout
}

// perfCounterSets are in the order infiniband-diags tries them: the first
// one given wins.
var perfCounterSets = []perfCounterSet{
	{"xmtsl", "X", "show Xmt SL port counters", (&mad.PortXmitDataSL{}).Layout()},
	{"rcvsl", "S", "show Rcv SL port counters", (&mad.PortRcvDataSL{}).Layout()},
	{"xmtdisc", "D", "show Xmt Discard Details", (&mad.PortXmitDiscardDetails{}).Layout()},
	{"rcverr", "E", "show Rcv Error Details", (&mad.PortRcvErrorDetails{}).Layout()},
	{"extended_speeds", "T", "show port extended speeds counters", (&mad.PortExtendedSpeedsCounters{}).Layout()},
	{"oprcvcounters", "", "show Rcv Counters per Op code", (&mad.PortOpRcvCounters{}).Layout()},
	{"flowctlcounters", "", "show flow control counters", (&mad.PortFlowCtlCounters{}).Layout()},
	{"vloppackets", "", "show packets received per Op code per VL", (&mad.PortVLOpPackets{}).Layout()},
	{"vlopdata", "", "show data received per Op code per VL", (&mad.PortVLOpData{}).Layout()},
	{"vlxmitflowctlerrors", "", "show flow control update errors per VL", (&mad.PortVLXmitFlowCtlUpdateErrors{}).Layout()},
	{"vlxmitcounters", "", "show ticks waiting to transmit counters per VL", (&mad.PortVLXmitWaitCounters{}).Layout()},
	{"swportvlcong", "", "show sw port VL congestion", (&mad.SwPortVLCongestion{}).Layout()},
	{"rcvcc", "", "show Rcv congestion control counters", (&mad.PortRcvConCtrl{}).Layout()},
	{"slrcvfecn", "", "show SL Rcv FECN counters", (&mad.PortSLRcvFECN{}).Layout()},
	{"slrcvbecn", "", "show SL Rcv BECN counters", (&mad.PortSLRcvBECN{}).Layout()},
	{"xmitcc", "", "show Xmit congestion control counters", (&mad.PortXmitConCtrl{}).Layout()},
	{"vlxmittimecc", "", "show VL Xmit Time congestion control counters", (&mad.PortVLXmitTimeCong{}).Layout()},
}

// pyCounterSetAlias returns python-rdma's spelling of the counter set
// infiniband-diags' flag long picks: either sets it, and the output is
// infiniband-diags'.
func pyCounterSetAlias(long string) (alias, short string, ok bool) {
	switch long {
	case "flowctlcounters":
		return "flow", "F", true
	case "vlxmitflowctlerrors":
		return "vl-xmit-errs", "", true
	case "vlxmitcounters":
		return "vl-xmit-wait", "", true
	case "swportvlcong":
		return "vl-congestion", "", true
	}
	return "", "", false
}

// perfqueryOptions are perfquery's parsed flags and arguments.
type perfqueryOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions

	Extended  bool   // -x: PortCountersExtended
	Sets      []bool // one per perfCounterSets entry
	SmplCtl   bool   // -c: PortSamplesControl
	AllPorts  bool   // -a: aggregate over ports (AllPortSelect)
	LoopPorts bool   // -l: one output per port
	Reset     bool   // -r: reset after reading
	ResetOnly bool   // -R: only reset

	// Target is the port to query; nil means the local port.
	Target *endport.Target
	// Port is the port selected (PortSelect); Ports lists them when a list
	// or range was given.
	Port    int
	Ports   []int
	Mask    uint32 // reset mask: CounterSelect and, above bit 15, CounterSelect2
	ExtMask uint64 // reset mask of -T
	// MaskGiven says a reset mask argument was given.
	MaskGiven bool
}

func newPerfqueryCmd(f *cmdutil.Factory, runF func(*perfqueryOptions) error) *cobra.Command {
	o := &perfqueryOptions{IO: f.IO, Sets: make([]bool, len(perfCounterSets)), Mask: perfDefaultMask, ExtMask: perfDefaultExtMask}
	c := &cobra.Command{
		Use:   "perfquery [options] [<lid|guid> [[port(s)] [reset_mask]]]",
		Short: "query (and reset) a port's performance counters",
		Long: `perfquery reads a port's PortCounters from its performance management agent
(PMA) and prints them as infiniband-diags' perfquery does; -x reads
PortCountersExtended, and the other flags pick other counter sets.

Without a target it reads the local port. The port may be a list (1,4,8) or a
range (1-10): -a adds them up, -l prints each. -r resets the counters after
reading them, -R only resets; the reset mask selects counters (CounterSelect,
and CounterSelect2 above bit 15).`,
		Example: `  perfquery                  # the local port's counters
  perfquery 32 1             # LID 32, port 1
  perfquery -x 32 1          # extended counters
  perfquery -a 32            # all ports of LID 32, added up
  perfquery -l 32 1-10       # ports 1 to 10, one by one
  perfquery -R 32 2 0x0fff   # reset only the error counters of port 2
  perfquery -r --dry-run 32 1   # read, and print the reset without sending it`,
		Args: cmdutil.ArgsRange(0, 3),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.parseArgs(args); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return perfqueryRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsDryRun|cmdutil.FlagsMKey|cmdutil.FlagsSA)
	fl := c.Flags()
	// perfquery's -D is --xmtdisc, so the DR assertion is --Direct alone
	// (as python-rdma's perfquery has it).
	cmdutil.AddTargetFlags(c, &o.Common, "LG")
	cmdutil.AddTargetLongFlags(c, &o.Common, "D")
	fl.BoolVarP(&o.Extended, "extended", "x", false, "show extended port counters")
	for i, s := range perfCounterSets {
		fl.BoolVarP(&o.Sets[i], s.Long, s.Short, false, s.Help)
		if a, short, ok := pyCounterSetAlias(s.Long); ok {
			fl.BoolVarP(&o.Sets[i], a, short, false, s.Help+" (python-rdma's spelling)")
		}
	}
	fl.BoolVarP(&o.SmplCtl, "smplctl", "c", false, "show samples control")
	fl.BoolVarP(&o.AllPorts, "all_ports", "a", false, "show aggregated counters")
	fl.BoolVarP(&o.LoopPorts, "loop_ports", "l", false, "iterate through each port")
	fl.BoolVarP(&o.Reset, "reset_after_read", "r", false, "reset counters after read")
	fl.BoolVarP(&o.ResetOnly, "Reset_only", "R", false, "only reset counters")
	return c
}

// parseArgs reads [<lid|guid> [[port(s)] [reset_mask]]].
func (o *perfqueryOptions) parseArgs(args []string) error {
	if o.AllPorts {
		o.Port = mad.AllPortSelect
	}
	if len(args) > 0 {
		t, err := o.Common.ParseTarget(args[0])
		if err != nil {
			return err
		}
		o.Target = &t
	}
	if len(args) > 1 {
		ports, err := parsePortList(args[1])
		if err != nil {
			return err
		}
		o.Port = ports[0]
		if len(ports) > 1 {
			o.Ports = ports
		}
	}
	if len(args) > 2 {
		m, err := parseMask(args[2])
		if err != nil {
			return err
		}
		o.ExtMask, o.Mask, o.MaskGiven = m, uint32(m), true
	}
	return nil
}

// parsePortList parses a port number (0 to 255), a list "1,4,8" or a range
// "1-10".
func parsePortList(s string) ([]int, error) {
	one := func(p string) (int, error) {
		n, err := cmdutil.ParsePortArg(p)
		return n, err
	}
	if strings.Contains(s, ",") {
		var ports []int
		for _, p := range strings.Split(s, ",") {
			n, err := one(p)
			if err != nil {
				return nil, err
			}
			ports = append(ports, n)
		}
		return ports, nil
	}
	if lo, hi, ok := strings.Cut(s, "-"); ok {
		a, err := one(lo)
		if err != nil {
			return nil, err
		}
		b, err := one(hi)
		if err != nil {
			return nil, err
		}
		if a >= b {
			return nil, cmdutil.UsageErrorf("invalid port range %q: max port must be greater than min port", s)
		}
		var ports []int
		for p := a; p <= b; p++ {
			ports = append(ports, p)
		}
		return ports, nil
	}
	n, err := one(s)
	if err != nil {
		return nil, err
	}
	return []int{n}, nil
}

// parseMask parses a reset mask: decimal or 0x hex, up to 64 bits.
func parseMask(s string) (uint64, error) {
	var v uint64
	var err error
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		v, err = strconv.ParseUint(h, 16, 64)
	} else {
		v, err = strconv.ParseUint(s, 10, 64)
	}
	if err != nil || s == "" || s[0] == '+' {
		return 0, cmdutil.UsageErrorf("invalid reset mask %q: want a decimal number or 0x and hex digits", s)
	}
	return v, nil
}

// perfResult is one block of perfquery's output: its text and its JSON.
type perfResult struct {
	Attribute string        `json:"attribute"`
	Port      int           `json:"port"`
	Counters  mad.Attribute `json:"counters"`
	text      []byte
}

// perfqueryJSON is perfquery's --json document; its fields are in the
// order of their keys.
type perfqueryJSON struct {
	CapabilityMask  uint16         `json:"capabilityMask"`
	CapabilityMask2 uint32         `json:"capabilityMask2"`
	DryRun          []*madrpc.Plan `json:"dryRun,omitzero"`
	ResetPorts      []int          `json:"resetPorts,omitempty"`
	Results         []perfResult   `json:"results"`
	Target          string         `json:"target"`
}

// perfquery is one run: the target's PMA and its capabilities.
type perfquery struct {
	o        *perfqueryOptions
	ctx      context.Context
	pma      *madrpc.PMA
	caps     mad.PMACapabilities
	results  []perfResult
	reset    []int
	writeErr error
}

// perfqueryRun does what infiniband-diags' perfquery main does.
func perfqueryRun(o *perfqueryOptions) error {
	x, local, err := o.Common.Open()
	if err != nil {
		return err
	}
	var path mad.Path
	if o.Target == nil {
		if !mad.IsUnicastLID(local.LID) {
			return fmt.Errorf("the local port %d has no unicast LID (%d); give a target", local.Number, local.LID)
		}
		path = mad.LIDPath(local.LID)
		o.Port = local.Number
	} else if path, err = o.Common.GMPTarget(x, *o.Target, "performance MADs"); err != nil {
		return err
	}
	q := &perfquery{o: o, ctx: o.Common.Context(), pma: madrpc.NewPMA(x, path)}
	// Text goes out port by port, as infiniband-diags prints it, so a
	// port that fails half way leaves the ports before it on stdout and
	// the error on stderr; JSON is one document or nothing.
	if err := q.run(); err != nil {
		return err
	}
	if q.writeErr != nil {
		return q.writeErr
	}
	if o.Common.JSON {
		return q.writeJSON(o.IO.Out)
	}
	return nil
}

// path is the target's route, as the titles show it.
func (q *perfquery) path() mad.Path { return q.pma.Q.Path }

func (q *perfquery) run() error {
	o := q.o
	var err error
	if q.caps, err = q.pma.Capabilities(q.ctx, o.Port); err != nil {
		return err
	}
	emulate := false
	if !q.caps.Has(mad.PMAAllPortSelect) && o.Port == mad.AllPortSelect {
		if !o.AllPorts {
			return errors.New("the PMA does not support AllPortSelect (port 255); give -a to add the ports up")
		}
		emulate = true
	}
	for i, on := range o.Sets {
		if on {
			return q.counterSet(perfCounterSets[i])
		}
	}
	if o.SmplCtl {
		var sc mad.PortSamplesControl
		data, err := q.pma.Get(q.ctx, &sc, o.Port)
		if err != nil {
			return err
		}
		q.addResult(&sc, o.Port, data, fmt.Appendf(nil, "# PortSamplesControl: %s port %d\n", q.path(), o.Port), sc.Layout().Fields)
		return nil
	}

	ports := o.Ports
	loop := emulate || (o.LoopPorts && (o.AllPorts || o.Port == mad.AllPortSelect))
	if loop {
		if ports, err = madrpc.PortNumbers(q.ctx, q.pma.Q); err != nil {
			return err
		}
		if emulate && !o.LoopPorts {
			fmt.Fprintf(o.IO.ErrOut, "perfquery: warning: emulating AllPortSelect by iterating through all ports\n")
		}
	}
	aggregate := (loop && emulate && !o.LoopPorts) || (!loop && len(ports) > 1 && o.AllPorts && !o.LoopPorts)
	if len(ports) == 0 {
		ports = []int{o.Port}
	}
	if !o.ResetOnly {
		if err := q.counters(ports, aggregate); err != nil {
			return err
		}
		if !o.Reset {
			return nil
		}
	}
	return q.resetCounters(ports)
}

// addResult keeps a, read for port, with its text: the title, then
// libibmad's dump of the fields given of data, a's encoding.
func (q *perfquery) addResult(a mad.Attribute, port int, data, title []byte, fields []mad.Field) {
	r := perfResult{Attribute: a.Layout().Name, Port: port, Counters: a, text: madtext.AppendFields(title, fields, data)}
	q.results = append(q.results, r)
	if !q.o.Common.JSON && q.writeErr == nil {
		_, q.writeErr = q.o.IO.Out.Write(r.text)
	}
}

// counterSet reads (and resets) one of the single-attribute views.
func (q *perfquery) counterSet(s perfCounterSet) error {
	o := q.o
	l, title := s.Attr, s.Attr.Name
	extSpeeds := l == (&mad.PortExtendedSpeedsCounters{}).Layout()
	if extSpeeds && q.rsfecActive() {
		l, title = (&mad.PortExtendedSpeedsCountersRSFEC{}).Layout(), "PortExtendedSpeedsCounters with RS-FEC Active"
	}
	if !o.ResetOnly {
		a := l.New()
		data, err := q.pma.Get(q.ctx, a, o.Port)
		if err != nil {
			return cmdutil.WithContext(err, "cannot query %s", s.Attr.Name)
		}
		q.addResult(a, o.Port, data, fmt.Appendf(nil, "# %s counters: %s port %d\n", title, q.path(), o.Port), l.Fields)
	}
	if !o.ResetOnly && !o.Reset {
		return nil
	}
	// The Set goes as the attribute asked for, whichever was read: a
	// mask given for -T is 64 bits wide.
	mask := uint64(o.Mask)
	if extSpeeds {
		mask = o.ExtMask
	}
	planned, err := q.pma.Reset(q.ctx, s.Attr, o.Port, mask)
	if err != nil {
		return cmdutil.WithContext(err, "cannot reset %s", s.Attr.Name)
	}
	if !planned {
		q.reset = append(q.reset, o.Port)
	}
	return nil
}

// rsfecActive reports whether the port runs RS-FEC, for -T's layout; a
// port that cannot say is taken not to, with a warning.
func (q *perfquery) rsfecActive() bool {
	if !q.caps.Has(mad.PMARSFECCounters) {
		return false
	}
	pie, _, err := q.pma.Q.PortInfoExtended(q.ctx, q.o.Port)
	if err != nil {
		fmt.Fprintf(q.o.IO.ErrOut, "perfquery: warning: %v\n", err)
		return false
	}
	return pie.RSFECActive()
}

// counters reads PortCounters (or PortCountersExtended with -x) of each
// port, and prints each or their sum.
func (q *perfquery) counters(ports []int, aggregate bool) error {
	o := q.o
	if o.Extended && !q.caps.ExtendedCounters() {
		fmt.Fprintf(o.IO.ErrOut, "perfquery: warning: PerfMgt ClassPortInfo CapMask 0x%02X; no extended counter support indicated\n", uint16(q.caps.Mask))
	}
	var sum mad.Attribute
	for _, port := range ports {
		a, data, err := q.readCounters(port)
		if err != nil {
			if len(ports) > 1 {
				return cmdutil.WithContext(err, "port %d", port)
			}
			return err
		}
		if !aggregate {
			q.addResult(a, port, data, q.countersTitle(port), q.countersFields(a.Layout()))
			continue
		}
		if sum == nil {
			sum = a.Layout().New()
		}
		if err := mad.AddCounters(sum, a); err != nil {
			return err
		}
	}
	if !aggregate {
		return nil
	}
	if err := mad.SelectPort(sum, mad.AllPortSelect); err != nil {
		return err
	}
	data, err := sum.AppendBinary(nil)
	if err != nil {
		return err
	}
	q.addResult(sum, mad.AllPortSelect, data, q.countersTitle(mad.AllPortSelect), q.countersFields(sum.Layout()))
	return nil
}

// readCounters reads port's PortCounters, or PortCountersExtended with -x,
// and returns it with the data to dump: PortCounters' PortXmitWait reads
// 0 where the PMA does not claim it, as infiniband-diags shows it.
func (q *perfquery) readCounters(port int) (mad.Attribute, []byte, error) {
	if q.o.Extended {
		var pce mad.PortCountersExtended
		data, err := q.pma.Get(q.ctx, &pce, port)
		return &pce, data, err
	}
	var pc mad.PortCounters
	if _, err := q.pma.Get(q.ctx, &pc, port); err != nil {
		return nil, nil, err
	}
	q.caps.Hide(&pc)
	data, err := pc.AppendBinary(nil)
	return &pc, data, err
}

func (q *perfquery) countersTitle(port int) []byte {
	if q.o.Extended {
		return fmt.Appendf(nil, "# Port extended counters: %s port %d (CapMask: 0x%02X CapMask2: 0x%07X)\n", q.path(), port, uint16(q.caps.Mask), uint32(q.caps.Mask2))
	}
	return fmt.Appendf(nil, "# Port counters: %s port %d (CapMask: 0x%02X)\n", q.path(), port, uint16(q.caps.Mask))
}

// countersFields returns the fields perfquery prints: all of PortCounters;
// of PortCountersExtended those the PMA fills in (ExtendedFields).
func (q *perfquery) countersFields(l *mad.Layout) []mad.Field {
	if !q.o.Extended {
		return l.Fields
	}
	return q.caps.ExtendedFields()
}

// resetCounters resets PortCounters (PortCountersExtended with -x) of each
// port with infiniband-diags' mask: the given one, plus PortXmitWait and
// QP1Dropped where the PMA has them when no mask was given; with -x also
// the extended error counters, PortXmitWait and QP1Dropped.
func (q *perfquery) resetCounters(ports []int) error {
	o := q.o
	mask := uint64(o.Mask)
	var l *mad.Layout = (&mad.PortCounters{}).Layout()
	if o.Extended {
		l = (&mad.PortCountersExtended{}).Layout()
		mask |= q.caps.ResetMask(l, append(append([]string(nil), mad.PortErrorCounters...), "PortXmitWait", "QP1Dropped")...)
	} else if !o.MaskGiven {
		mask |= q.caps.ResetMask(l, "PortXmitWait", "QP1Dropped")
	}
	for _, port := range ports {
		planned, err := q.pma.Reset(q.ctx, l, port, mask)
		if err != nil {
			return cmdutil.WithContext(err, "resetting %s of port %d", l.Name, port)
		}
		if !planned {
			q.reset = append(q.reset, port)
		}
	}
	return nil
}

// writeJSON writes the run as one JSON document.
func (q *perfquery) writeJSON(w io.Writer) error {
	doc := perfqueryJSON{
		Target:          q.path().String(),
		CapabilityMask:  uint16(q.caps.Mask),
		CapabilityMask2: uint32(q.caps.Mask2),
		Results:         q.results,
		ResetPorts:      q.reset,
		DryRun:          q.o.Common.DryRunPlans(),
	}
	if doc.Results == nil {
		doc.Results = []perfResult{}
	}
	return cmdutil.WriteJSONDocument(w, doc)
}
