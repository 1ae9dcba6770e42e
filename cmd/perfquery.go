package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	register(Tool{
		Name:    "perfquery",
		Summary: "query (and reset) a port's performance counters",
		New:     func(f *Factory) *cobra.Command { return newPerfqueryCmd(f, nil) },
	})
}

// allPorts is PortSelect's AllPortSelect value.
const allPorts = 255

// PerfMgt ClassPortInfo capability bits perfquery looks at (IBA 16.1.3.1
// and its errata; libibmad's IB_PM_*).
const (
	pmAllPortSelect      = 1 << 8
	pmExtWidth           = 1 << 9
	pmExtWidthNoIETF     = 1 << 10
	pmXmitWait           = 1 << 12
	pmRSFECCounters      = 1 << 14
	pmQP1Dropped         = 1 << 15
	pm2AddlPortCounters  = 1 << 1 // CapabilityMask2
	pieFECModeSupported  = 1      // PortInfoExtended:CapMask
	pieRSFECModeActive   = 0x0002 // PortInfoExtended:FECModeActive
	pieRSFEC2ModeActive  = 0x0004
	perfDefaultMask      = 0xffff
	perfDefaultExtMask   = ^uint64(0)
	perfExtResetMaskBits = 0xfff0000
)

// perfCounterSet is one of perfquery's single-attribute counter views
// (-X, -S, -D, -E, -T, --oprcvcounters, ...): the flag that picks it and
// the attribute it reads.
type perfCounterSet struct {
	Long, Short string
	Help        string
	Attr        string // layout name; also the title of the output
}

// perfCounterSets are in the order infiniband-diags tries them: the first
// one given wins.
var perfCounterSets = []perfCounterSet{
	{"xmtsl", "X", "show Xmt SL port counters", "PortXmitDataSL"},
	{"rcvsl", "S", "show Rcv SL port counters", "PortRcvDataSL"},
	{"xmtdisc", "D", "show Xmt Discard Details", "PortXmitDiscardDetails"},
	{"rcverr", "E", "show Rcv Error Details", "PortRcvErrorDetails"},
	{"extended_speeds", "T", "show port extended speeds counters", "PortExtendedSpeedsCounters"},
	{"oprcvcounters", "", "show Rcv Counters per Op code", "PortOpRcvCounters"},
	{"flowctlcounters", "", "show flow control counters", "PortFlowCtlCounters"},
	{"vloppackets", "", "show packets received per Op code per VL", "PortVLOpPackets"},
	{"vlopdata", "", "show data received per Op code per VL", "PortVLOpData"},
	{"vlxmitflowctlerrors", "", "show flow control update errors per VL", "PortVLXmitFlowCtlUpdateErrors"},
	{"vlxmitcounters", "", "show ticks waiting to transmit counters per VL", "PortVLXmitWaitCounters"},
	{"swportvlcong", "", "show sw port VL congestion", "SwPortVLCongestion"},
	{"rcvcc", "", "show Rcv congestion control counters", "PortRcvConCtrl"},
	{"slrcvfecn", "", "show SL Rcv FECN counters", "PortSLRcvFECN"},
	{"slrcvbecn", "", "show SL Rcv BECN counters", "PortSLRcvBECN"},
	{"xmitcc", "", "show Xmit congestion control counters", "PortXmitConCtrl"},
	{"vlxmittimecc", "", "show VL Xmit Time congestion control counters", "PortVLXmitTimeCong"},
}

// perfqueryOptions are perfquery's parsed flags and arguments.
type perfqueryOptions struct {
	IO     IOStreams
	Common CommonOptions

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

	// Open opens the MAD transport and names the local port.
	Open func() (*mad.Transactor, *rdma.Port, error)
}

func newPerfqueryCmd(f *Factory, runF func(*perfqueryOptions) error) *cobra.Command {
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
		Args: argsRange(0, 3),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.finish(c); err != nil {
				return err
			}
			if err := o.parseArgs(args); err != nil {
				return err
			}
			o.Open = func() (*mad.Transactor, *rdma.Port, error) { return f.openTransactorAt(&o.Common) }
			if runF != nil {
				return runF(o)
			}
			return perfqueryRun(o)
		},
	}
	addCommonFlags(c, &o.Common, flagsLocalPort|flagsMAD|flagsJSON|flagsDryRun)
	fl := c.Flags()
	// perfquery's -D is --xmtdisc, so the target assertions are -L and -G only.
	addTargetFlags(c, &o.Common, "LG")
	fl.BoolVarP(&o.Extended, "extended", "x", false, "show extended port counters")
	for i, s := range perfCounterSets {
		fl.BoolVarP(&o.Sets[i], s.Long, s.Short, false, s.Help)
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
		o.Port = allPorts
	}
	if len(args) > 0 {
		t, err := o.Common.parseTarget(args[0])
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
		n, err := parsePortArg(p)
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
			return nil, usageErrorf("invalid port range %q: max port must be greater than min port", s)
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
		return 0, usageErrorf("invalid reset mask %q: want a decimal number or 0x and hex digits", s)
	}
	return v, nil
}

// perfResult is one block of perfquery's output: its text and its JSON.
type perfResult struct {
	Attribute string      `json:"attribute"`
	Port      int         `json:"port"`
	Counters  interface{} `json:"counters"`
	text      []byte
}

// perfquery is one run: the transactor, the target's path and the PMA's
// capabilities.
type perfquery struct {
	o        *perfqueryOptions
	ctx      context.Context
	x        *mad.Transactor
	path     mad.Path
	capMask  uint16
	capMask2 uint32
	results  []perfResult
	reset    []int
	writeErr error
}

// perfqueryRun does what infiniband-diags' perfquery main does.
func perfqueryRun(o *perfqueryOptions) error {
	x, local, err := o.Open()
	if err != nil {
		return err
	}
	defer x.Close()
	q := &perfquery{o: o, ctx: o.Common.context(), x: x}
	if o.Target == nil {
		if local.LID == 0 || local.LID >= rdma.LID(0xc000) {
			return fmt.Errorf("the local port %d has no unicast LID (%d); give a target", local.Number, local.LID)
		}
		q.path = mad.LIDPath(local.LID)
		o.Port = local.Number
	} else if q.path, err = gmpPath(*o.Target, "performance MADs"); err != nil {
		return err
	} else if q.path, err = x.Resolve(o.Common.context(), q.path); err != nil {
		return err
	}
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

func (q *perfquery) run() error {
	o := q.o
	cpi, err := q.get("ClassPortInfo", o.Port)
	if err != nil {
		return err
	}
	q.capMask, q.capMask2 = pmaCapMasks(cpi)

	emulate := false
	if q.capMask&pmAllPortSelect == 0 && o.Port == allPorts {
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
		data, err := q.get("PortSamplesControl", o.Port)
		if err != nil {
			return err
		}
		q.addResult("PortSamplesControl", o.Port, data, fmt.Appendf(nil, "# PortSamplesControl: %s port %d\n", q.path, o.Port))
		return nil
	}

	ports := o.Ports
	loop := emulate || (o.LoopPorts && (o.AllPorts || o.Port == allPorts))
	if loop {
		if ports, err = q.allPortNumbers(); err != nil {
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

// allPortNumbers returns the node's ports: 1 to NumPorts, from 0 on a
// switch with an enhanced port 0.
func (q *perfquery) allPortNumbers() ([]int, error) {
	sq := &smpQuerier{ctx: q.ctx, x: q.x, path: q.path}
	ni, _, err := sq.nodeInfo()
	if err != nil {
		return nil, err
	}
	if ni.NumPorts == 0 {
		return nil, errors.New("NodeInfo says the node has no ports")
	}
	start := 1
	if ni.NodeType == mad.NodeTypeSwitch {
		var si mad.SwitchInfo
		if _, err := sq.decode(&si, 0); err != nil {
			return nil, err
		}
		if si.EnhancedPort0 != 0 {
			start = 0
		}
	}
	var ports []int
	for p := start; p <= int(ni.NumPorts); p++ {
		ports = append(ports, p)
	}
	return ports, nil
}

// pmaCapMasks decodes a PMA's ClassPortInfo data into its CapabilityMask
// and CapabilityMask2.
func pmaCapMasks(data []byte) (uint16, uint32) {
	var cpi mad.ClassPortInfo
	_ = cpi.UnmarshalBinary(data) // a GMP's data area is longer than ClassPortInfo
	return cpi.CapabilityMask, cpi.CapabilityMask2
}

// request builds a PerfMgt request for the attribute with PortSelect set.
func (q *perfquery) request(attr string, method mad.Method, data []byte) *mad.Request {
	l := mad.LayoutByName(attr)
	return &mad.Request{Path: q.path, Class: mad.ClassPerf, Method: method, AttrID: l.ID, Name: l.Name, Data: data}
}

// get reads an attribute with PortSelect port and returns its data.
func (q *perfquery) get(attr string, port int) ([]byte, error) {
	data := make([]byte, 192)
	data[1] = byte(port) // PortSelect, as libibmad sets it for every attribute
	r, err := q.x.Do(q.ctx, q.request(attr, mad.MethodGet, data))
	if err != nil {
		return nil, err
	}
	return r.Data(), nil
}

// addResult decodes data as attr and keeps it with its text: the title,
// then libibmad's dump of fields.
func (q *perfquery) addResult(attr string, port int, data, title []byte) {
	l := mad.LayoutByName(attr)
	q.addResultFields(attr, port, data, title, l.Fields)
}

func (q *perfquery) addResultFields(attr string, port int, data, title []byte, fields []mad.Field) {
	l := mad.LayoutByName(attr)
	a := l.New()
	_ = a.UnmarshalBinary(data) // data is a whole MAD's data area: long enough
	r := perfResult{Attribute: attr, Port: port, Counters: a, text: mad.AppendFields(title, fields, data)}
	q.results = append(q.results, r)
	if !q.o.Common.JSON && q.writeErr == nil {
		_, q.writeErr = q.o.IO.Out.Write(r.text)
	}
}

// counterSet reads (and resets) one of the single-attribute views.
func (q *perfquery) counterSet(s perfCounterSet) error {
	o := q.o
	attr, title := s.Attr, s.Attr
	if s.Attr == "PortExtendedSpeedsCounters" {
		rsfec, err := q.rsfecActive()
		if err != nil {
			return err
		}
		if rsfec {
			attr, title = "PortExtendedSpeedsCountersRSFEC", "PortExtendedSpeedsCounters with RS-FEC Active"
		}
	}
	if !o.ResetOnly {
		data, err := q.get(attr, o.Port)
		if err != nil {
			return withContext(err, "cannot query %s", s.Attr)
		}
		q.addResult(attr, o.Port, data, fmt.Appendf(nil, "# %s counters: %s port %d\n", title, q.path, o.Port))
	}
	if !o.ResetOnly && !o.Reset {
		return nil
	}
	data := make([]byte, 192)
	data[1] = byte(o.Port)
	if s.Attr == "PortExtendedSpeedsCounters" {
		mask := o.ExtMask
		if mask == 0 {
			mask = ^uint64(0)
		}
		f, _ := mad.LayoutByName(attr).Field("CounterSelect")
		f.SetValue(data, mask)
	} else {
		setResetMask(data, s.Attr, o.Mask)
	}
	resp, err := q.x.Do(q.ctx, q.request(s.Attr, mad.MethodSet, data))
	if err != nil {
		return withContext(err, "cannot reset %s", s.Attr)
	}
	if !resp.DryRun {
		q.reset = append(q.reset, o.Port)
	}
	return nil
}

// setResetMask stores a reset mask as libibmad's performance_reset_via
// does: 0 means all counters; the low 16 bits go to CounterSelect, the rest
// to CounterSelect2 (8 bits in PortCounters, 32 in PortCountersExtended,
// the same bits as PortCounters' for every other attribute).
func setResetMask(data []byte, attr string, mask uint32) {
	if mask == 0 {
		mask = ^uint32(0)
	}
	pc := mad.LayoutByName("PortCounters")
	sel, _ := pc.Field("CounterSelect")
	sel.SetValue(data, uint64(mask&0xffff))
	sel2, _ := pc.Field("CounterSelect2")
	if attr == "PortCountersExtended" {
		sel2, _ = mad.LayoutByName(attr).Field("CounterSelect2")
	}
	sel2.SetValue(data, uint64(mask>>16))
}

// rsfecActive reports whether the port runs RS-FEC, for -T's layout.
func (q *perfquery) rsfecActive() (bool, error) {
	if q.capMask&pmRSFECCounters == 0 {
		return false, nil
	}
	sq := &smpQuerier{ctx: q.ctx, x: q.x, path: q.path}
	res, err := smpqueryPortInfoExtended(sq, &smpqueryOptions{Port: q.o.Port})
	if err != nil {
		fmt.Fprintf(q.o.IO.ErrOut, "perfquery: warning: %v\n", err)
		return false, nil
	}
	pie := res.JSON.(map[string]any)["portInfoExtended"].(*mad.PortInfoExtended)
	active := pie.FECModeActive & 0xffff
	return pie.CapabilityMask&pieFECModeSupported != 0 && (active == pieRSFECModeActive || active == pieRSFEC2ModeActive), nil
}

// counters reads PortCounters (or PortCountersExtended with -x) of each
// port, and prints each or their sum.
func (q *perfquery) counters(ports []int, aggregate bool) error {
	o := q.o
	attr := "PortCounters"
	if o.Extended {
		attr = "PortCountersExtended"
		if q.capMask&(pmExtWidth|pmExtWidthNoIETF) == 0 {
			fmt.Fprintf(o.IO.ErrOut, "perfquery: warning: PerfMgt ClassPortInfo CapMask 0x%02X; no extended counter support indicated\n", q.capMask)
		}
	}
	l := mad.LayoutByName(attr)
	var sum []byte
	for _, port := range ports {
		data, err := q.get(attr, port)
		if err != nil {
			if len(ports) > 1 {
				return withContext(err, "port %d", port)
			}
			return err
		}
		if !o.Extended && q.capMask&pmXmitWait == 0 {
			// PortXmitWait not indicated: infiniband-diags shows 0.
			f, _ := l.Field("PortXmitWait")
			f.SetValue(data, 0)
		}
		if !aggregate {
			q.addResultFields(attr, port, data, q.countersTitle(port), q.countersFields(l))
			continue
		}
		sum = addCounters(l, sum, data)
	}
	if aggregate {
		sel, _ := l.Field("PortSelect")
		sel.SetValue(sum, allPorts)
		q.addResultFields(attr, allPorts, sum, q.countersTitle(allPorts), q.countersFields(l))
	}
	return nil
}

func (q *perfquery) countersTitle(port int) []byte {
	if q.o.Extended {
		return fmt.Appendf(nil, "# Port extended counters: %s port %d (CapMask: 0x%02X CapMask2: 0x%07X)\n", q.path, port, q.capMask, q.capMask2)
	}
	return fmt.Appendf(nil, "# Port counters: %s port %d (CapMask: 0x%02X)\n", q.path, port, q.capMask)
}

// countersFields returns the fields perfquery prints: all of PortCounters;
// of PortCountersExtended the unicast and multicast counters only when the
// PMA has extended width, the error counters only with
// AdditionalPortCountersExtended.
func (q *perfquery) countersFields(l *mad.Layout) []mad.Field {
	if !q.o.Extended {
		return l.Fields
	}
	var fields []mad.Field
	for _, f := range l.Fields {
		switch {
		case strings.Contains(f.Name, "Unicast"), strings.Contains(f.Name, "Multicast"):
			if q.capMask&pmExtWidth == 0 {
				continue
			}
		case f.Offset >= 576 || f.Name == "CounterSelect2":
			if q.capMask2&pm2AddlPortCounters == 0 {
				continue
			}
		}
		fields = append(fields, f)
	}
	return fields
}

// addCounters adds data's counters to sum, each saturating at its width's
// maximum, as perfquery's aggregate_* do; the select fields take data's
// values. A nil sum starts from data.
func addCounters(l *mad.Layout, sum, data []byte) []byte {
	if sum == nil {
		return append([]byte(nil), data...)
	}
	for _, f := range l.Fields {
		v := f.Value(data)
		switch f.Name {
		case "PortSelect", "CounterSelect", "CounterSelect2":
			f.SetValue(sum, v)
			continue
		}
		max := uint64(1)<<f.Width - 1
		if f.Width == 64 {
			max = ^uint64(0)
		}
		s := f.Value(sum)
		if s+v < s || s+v > max {
			s = max
		} else {
			s += v
		}
		f.SetValue(sum, s)
	}
	return sum
}

// resetCounters resets PortCounters (PortCountersExtended with -x) of each
// port with infiniband-diags' mask: the given one, plus PortXmitWait and
// QP1Dropped when the PMA has them and no mask was given.
func (q *perfquery) resetCounters(ports []int) error {
	o := q.o
	mask := o.Mask
	if !o.MaskGiven && !o.Extended {
		if q.capMask&pmXmitWait != 0 {
			mask |= 1 << 16
		}
		if q.capMask&pmQP1Dropped != 0 {
			mask |= 1 << 17
		}
	}
	attr := "PortCounters"
	if o.Extended {
		attr = "PortCountersExtended"
		mask |= perfExtResetMaskBits
		if q.capMask&pmXmitWait != 0 {
			mask |= 1 << 28
		}
		if q.capMask&pmQP1Dropped != 0 {
			mask |= 1 << 29
		}
	}
	for _, port := range ports {
		data := make([]byte, 192)
		data[1] = byte(port)
		setResetMask(data, attr, mask)
		resp, err := q.x.Do(q.ctx, q.request(attr, mad.MethodSet, data))
		if err != nil {
			return withContext(err, "resetting %s of port %d", attr, port)
		}
		if !resp.DryRun {
			q.reset = append(q.reset, port)
		}
	}
	return nil
}

// writeJSON writes the run as one JSON document.
func (q *perfquery) writeJSON(w io.Writer) error {
	doc := map[string]any{
		"target":          q.path.String(),
		"capabilityMask":  q.capMask,
		"capabilityMask2": q.capMask2,
		"results":         q.results,
	}
	if q.results == nil {
		doc["results"] = []perfResult{}
	}
	if len(q.reset) > 0 {
		doc["resetPorts"] = q.reset
	}
	q.o.Common.addDryRun(doc)
	return writeJSONDocument(w, doc)
}
