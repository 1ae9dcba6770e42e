package smp

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/madtext"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibportstate",
		Light:   true,
		Summary: "query or change a port's state, speed, width, MTU, LIDs or M_Key",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbportstateCmd(f, nil) },
	})
}

// portOp is one of ibportstate's operations without a value.
type portOp string

// ibportstate's operations without a value; one at most.
const (
	opQuery   portOp = "query"
	opEnable  portOp = "enable"
	opDisable portOp = "disable"
	opReset   portOp = "reset"
	opDown    portOp = "down"
	opArm     portOp = "arm"
	opActive  portOp = "active"
	opOn      portOp = "on"
	opOff     portOp = "off"
)

// portSetting is one of ibportstate's operations that take a value: its
// name and the largest value it takes.
type portSetting struct {
	name     string
	min, max uint64
	// also allows one value past max (width's 255: "what is supported").
	also uint64
}

var portSettings = []portSetting{
	{"speed", 0, 15, 0},
	{"espeed", 0, 31, 0},
	{"fdr10", 0, 1, 0},
	{"width", 0, 31, 255},
	{"vls", 1, 5, 0},
	{"mtu", 1, 5, 0},
	{"lid", 1, 0xbfff, 0},
	{"smlid", 1, 0xbfff, 0},
	{"lmc", 0, 7, 0},
	{"mkey", 0, ^uint64(0), 0},
	{"mkeylease", 0, 0xffff, 0},
	{"mkeyprot", 0, 3, 0},
}

// ibportstateOptions are ibportstate's parsed flags and arguments.
type ibportstateOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	Target endport.Target
	Port   int
	Op     portOp
	// Set holds the values given, by setting name.
	Set map[string]uint64
	// ShowKeys is -K: print the M_Key.
	ShowKeys bool
}

func newIbportstateCmd(f *cmdutil.Factory, runF func(*ibportstateOptions) error) *cobra.Command {
	o := &ibportstateOptions{IO: f.IO, Set: map[string]uint64{}}
	c := &cobra.Command{
		Use:   "ibportstate [options] <dest dr_path|lid|guid> <portnum> [<op>]...",
		Short: "query or change a port's state, speed, width, MTU, LIDs or M_Key",
		Long: `ibportstate shows a port's state, LIDs, widths and speeds (and, for an active
switch port, its peer's) or changes them with a PortInfo Set, as
infiniband-diags' ibportstate does.

Operations: query (the default), enable, disable, on, off, reset, down, arm,
active (one of these at most), and speed N, espeed N, fdr10 N, width N,
vls N, mtu N, lid N, smlid N, lmc N, mkey N, mkeylease N, mkeyprot N.`,
		Example: `  ibportstate 3 1              # query port 1 of LID 3
  ibportstate -D 0,1 1         # by direct route, with the peer port
  ibportstate 3 1 disable      # disable port 1 (may be irreversible)
  ibportstate 3 1 speed 1      # enable 2.5 Gbps only
  ibportstate -D 0 1 lid 0x1234 arm
  ibportstate --dry-run 3 1 disable   # show the port and the Set, send none`,
		Args: cmdutil.ArgsRange(2, -1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.parse(args, c.InOrStdin(), c.ErrOrStderr()); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return ibportstateRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsTarget|cmdutil.FlagsDryRun|cmdutil.FlagsMKey|cmdutil.FlagsSA)
	c.Flags().BoolVarP(&o.ShowKeys, "show_keys", "K", false, "display security keys in output")
	return c
}

// parse reads the target, the port and the operations. A new M_Key that
// is not a number (mkey x) is asked for at a prompt on errOut and read
// from in, as infiniband-diags asks "New M_Key: ".
func (o *ibportstateOptions) parse(args []string, in io.Reader, errOut io.Writer) error {
	t, err := o.Common.ParseTarget(args[0])
	if err != nil {
		return err
	}
	o.Target = t
	n, err := cmdutil.ParsePortArg(args[1])
	if err != nil {
		return err
	}
	o.Port = n
	for i := 2; i < len(args); i++ {
		word := args[i]
		switch op := portOp(word); op {
		case opQuery, opEnable, opDisable, opReset, opDown, opArm, opActive, opOn, opOff:
			if o.Op != "" {
				return cmdutil.UsageErrorf("%s: only one of query, enable, disable, on, off, reset, down, arm, active can be given (%s was)", word, o.Op)
			}
			o.Op = op
			continue
		}
		s, ok := findSetting(word)
		if !ok {
			return cmdutil.UsageErrorf("invalid operation: %s", word)
		}
		if i+1 >= len(args) {
			return cmdutil.UsageErrorf("%s requires an additional parameter", word)
		}
		i++
		v, err := cmdutil.ParseUintArg(args[i], ^uint64(0))
		if err != nil && word == "mkey" && (args[i][0] < '0' || args[i][0] > '9') {
			typed, rerr := cmdutil.ReadSecret(in, errOut, "New M_Key: ")
			if rerr != nil {
				return cmdutil.UsageErrorf("invalid mkey value %q, and none could be read at the prompt: %v", args[i], rerr)
			}
			if v, err = cmdutil.ParseUintArg(typed, ^uint64(0)); err != nil {
				return cmdutil.UsageErrorf("invalid new M_Key typed at the prompt: %v", err)
			}
		}
		if err == nil && (v < s.min || v > s.max) && !(s.also != 0 && v == s.also) {
			err = fmt.Errorf("out of range %d to %d", s.min, s.max)
		}
		if err != nil {
			return cmdutil.UsageErrorf("invalid %s value %q: %v", word, args[i], err)
		}
		o.Set[word] = v
	}
	if o.Op == "" {
		o.Op = opQuery
	}
	return nil
}

func findSetting(name string) (portSetting, bool) {
	for _, s := range portSettings {
		if s.name == name {
			return s, true
		}
	}
	return portSetting{}, false
}

// portState is one port as ibportstate reads it.
type portState struct {
	path     mad.Path
	port     int
	isSwitch bool
	espeed   bool // the node has extended speeds
	// data is the PortInfo as read, for the dump and a dry run's
	// comparison.
	data []byte
	pi   mad.PortInfo
	// mepi is the MlnxExtPortInfo and mepiData its data, nil when the
	// node has none.
	mepi     *mad.MlnxExtPortInfo
	mepiData []byte
}

// readPort reads a port's PortInfo and whether it has extended speeds (for
// a switch, as port 0 says).
func readPort(ctx context.Context, q *madrpc.Querier, port int, isSwitch bool) (*portState, error) {
	st := &portState{path: q.Path, port: port, isSwitch: isSwitch}
	capMask := uint32(0)
	if isSwitch {
		var p0 mad.PortInfo
		if _, err := q.Get(ctx, &p0, 0); err != nil {
			return nil, err
		}
		capMask = p0.CapabilityMask
	}
	data, err := q.Get(ctx, &st.pi, uint32(port))
	if err != nil {
		return nil, err
	}
	st.data = data
	if !isSwitch {
		capMask = st.pi.CapabilityMask
	}
	st.espeed = capMask&mad.PortCapIsExtendedSpeedsSupported != 0
	return st, nil
}

// readMlnxExtPortInfo reads the port's MlnxExtPortInfo.
func (st *portState) readMlnxExtPortInfo(ctx context.Context, q *madrpc.Querier) error {
	st.mepi = &mad.MlnxExtPortInfo{}
	data, err := q.Get(ctx, st.mepi, uint32(st.port))
	st.mepiData = data
	return err
}

// appendPortState is ibportstate's show_port_info.
func appendPortState(b []byte, st *portState, showKeys bool) []byte {
	names := []string{"LinkState", "PhysLinkState", "LID", "SMLID", "LMC",
		"LinkWidthSupported", "LinkWidthEnabled", "LinkWidthActive",
		"LinkSpeedSupported", "LinkSpeedEnabled", "LinkSpeedActive"}
	if st.espeed {
		names = append(names, "LinkSpeedExtSupported", "LinkSpeedExtEnabled", "LinkSpeedExtActive")
	}
	if !st.isSwitch || st.port == 0 {
		names = append(names, "MKey", "MKeyLeasePeriod", "ProtectBits")
	}
	b = fmt.Appendf(b, "# Port info: %s port %d\n", st.path, st.port)
	return madtext.AppendPortInfoFields(b, &st.pi, names, showKeys)
}

// appendMlnxExtPortInfo dumps the port's MlnxExtPortInfo.
func appendMlnxExtPortInfo(b []byte, path mad.Path, port int, data []byte) []byte {
	b = fmt.Appendf(b, "# MLNX ext Port info: %s port %d\n", path, port)
	return madtext.AppendDump(b, (&mad.MlnxExtPortInfo{}).Layout(), data)
}

// ibportstate is one run, printing as it goes: like infiniband-diags, a
// failure half way leaves what was read on stdout.
type ibportstate struct {
	o   *ibportstateOptions
	ctx context.Context
	out []byte
	doc ibportstateDoc
}

// ibportstateDoc is ibportstate's JSON: the port as read, its peer or the
// port after the Set, and under --dry-run the Sets planned.
type ibportstateDoc struct {
	After    *portDoc        `json:"after,omitempty"`
	DryRun   *[]*madrpc.Plan `json:"dryRun,omitempty"`
	Peer     *portDoc        `json:"peer,omitempty"`
	Port     int             `json:"port"`
	PortInfo *portDoc        `json:"portInfo,omitempty"`
	Target   string          `json:"target"`
}

// portDoc is one port in ibportstate's JSON.
type portDoc struct {
	Path     string       `json:"path"`
	Port     int          `json:"port"`
	PortInfo mad.PortInfo `json:"portInfo"`
}

func (r *ibportstate) printf(format string, a ...any) { r.out = fmt.Appendf(r.out, format, a...) }

func (r *ibportstate) flush() error {
	if r.o.Common.JSON {
		r.out = r.out[:0]
		return nil
	}
	_, err := r.o.IO.Out.Write(r.out)
	r.out = r.out[:0]
	return err
}

func ibportstateRun(o *ibportstateOptions) error {
	p, err := o.Target.Path()
	if err != nil {
		return err
	}
	x, local, err := o.Common.Open()
	if err != nil {
		return err
	}
	ctx := o.Common.Context()
	if p, err = x.Resolve(ctx, p); err != nil {
		return err
	}
	r := &ibportstate{o: o, ctx: ctx, doc: ibportstateDoc{Target: p.String(), Port: o.Port}}
	err = r.run(madrpc.NewQuerier(x, p), local)
	if ferr := r.flush(); err == nil {
		err = ferr
	}
	if err == nil && o.Common.JSON {
		r.doc.DryRun = smpDryRunPlans(&o.Common)
		err = cmdutil.WriteJSONDocument(o.IO.Out, r.doc)
	}
	return err
}

func (r *ibportstate) run(q *madrpc.Querier, local *rdma.Port) error {
	o := r.o
	ni, err := q.NodeInfo(r.ctx)
	if err != nil {
		return err
	}
	isSwitch := ni.IsSwitch()
	_, mkey := o.Set["mkey"]
	_, lease := o.Set["mkeylease"]
	_, prot := o.Set["mkeyprot"]
	if (mkey || lease || prot) && isSwitch && o.Port != 0 {
		return cmdutil.UsageErrorf("can't set M_Key fields on switch port %d: only on port 0", o.Port)
	}
	kind := "CA/RT"
	if isSwitch {
		kind = "Switch"
	}
	changing := o.Op != opQuery || len(o.Set) > 0
	if changing {
		r.printf("Initial %s PortInfo:\n", kind)
	} else {
		r.printf("%s PortInfo:\n", kind)
	}
	st, err := readPort(r.ctx, q, o.Port, isSwitch)
	if err != nil {
		return err
	}
	r.out = appendPortState(r.out, st, o.ShowKeys)
	r.doc.PortInfo = r.jsonPort(st)
	if ni.HasMlnxExtPortInfo() {
		if err := st.readMlnxExtPortInfo(r.ctx, q); err != nil {
			return err
		}
		r.out = appendMlnxExtPortInfo(r.out, q.Path, o.Port, st.mepiData)
	}
	if err := r.flush(); err != nil {
		return err
	}
	if changing {
		return r.change(q, st)
	}
	if !isSwitch || o.Port == 0 || st.pi.LinkState != 4 {
		return nil
	}
	return r.peer(q, st, local)
}

// change sends the PortInfo Set the operations ask for and shows the
// result.
func (r *ibportstate) change(q *madrpc.Querier, st *portState) error {
	o := r.o
	pi := st.pi
	// A Set with LID 0 or 0xffff fails: keep something valid there.
	if _, ok := o.Set["lid"]; !ok && (pi.LID == 0 || pi.LID == 0xffff) {
		pi.LID = 0x1234
	}
	if _, ok := o.Set["smlid"]; !ok && (pi.SMLID == 0 || pi.SMLID == 0xffff) {
		pi.SMLID = 0x1234
	}
	pi.LinkState, pi.PhysLinkState = 0, 0 // no change
	switch o.Op {
	case opOn:
		if st.pi.PhysLinkState != mad.PhysPortStateDisabled {
			r.printf("Port is already in enable state\n")
			return r.flush()
		}
		pi.PhysLinkState = mad.PhysPortStatePolling
	case opEnable, opReset:
		pi.PhysLinkState = mad.PhysPortStatePolling
	case opOff, opDisable:
		r.printf("Disable may be irreversible\n")
		pi.PhysLinkState = mad.PhysPortStateDisabled
	case opDown:
		pi.LinkState = mad.PortStateDown
	case opArm:
		pi.LinkState = mad.PortStateArmed
	case opActive:
		pi.LinkState = mad.PortStateActive
	}
	// Enabled speeds and width are always written; 0 is no change.
	pi.LinkSpeedEnabled = mad.LinkSpeedEnabled(o.Set["speed"])
	pi.LinkSpeedExtEnabled = mad.LinkSpeedExtEnabled(o.Set["espeed"])
	pi.LinkWidthEnabled = mad.LinkWidthEnabled(o.Set["width"])
	for name, v := range o.Set {
		switch name {
		case "vls":
			pi.OperationalVLs = mad.OperVLs(v)
		case "mtu":
			pi.NeighborMTU = mad.MTU(v)
		case "lid":
			pi.LID = uint16(v)
		case "smlid":
			pi.SMLID = uint16(v)
		case "lmc":
			pi.LMC = uint8(v)
		case "mkey":
			pi.MKey = v
		case "mkeylease":
			pi.MKeyLeasePeriod = uint16(v)
		case "mkeyprot":
			pi.ProtectBits = uint8(v)
		}
	}
	if v, ok := o.Set["fdr10"]; ok {
		if err := r.setFDR10(q, st, uint8(v)); err != nil {
			return err
		}
	}
	mod := uint32(o.Port)
	if st.espeed {
		mod |= 1 << 31
	}
	// What is printed so far goes out first: a dry run's plan line
	// follows it.
	if err := r.flush(); err != nil {
		return err
	}
	data, err := q.Set(r.ctx, &pi, mod, st.data[:mad.SMPDataLen])
	if err != nil || o.Common.DryRun { // a dry run's reply is only the request
		return err
	}
	after := *st
	after.data, after.pi = data, pi
	r.printf("\nAfter PortInfo set:\n")
	r.out = appendPortState(r.out, &after, o.ShowKeys)
	r.doc.After = r.jsonPort(&after)
	return r.flush()
}

// setFDR10 sends the MlnxExtPortInfo Set that enables FDR10 speeds
// (LinkSpeedEnabled bit 0) and shows the result.
func (r *ibportstate) setFDR10(q *madrpc.Querier, st *portState, speeds uint8) error {
	var mepi mad.MlnxExtPortInfo
	if st.mepi != nil {
		mepi = *st.mepi
	}
	mepi.StateChangeEnable = 1
	mepi.LinkSpeedEnabled = speeds
	if err := r.flush(); err != nil {
		return err
	}
	data, err := q.Set(r.ctx, &mepi, uint32(st.port), st.mepiData)
	if err != nil || r.o.Common.DryRun {
		return err
	}
	r.printf("\nAfter MLNXExtendedPortInfo set:\n")
	r.out = appendMlnxExtPortInfo(r.out, q.Path, st.port, data)
	return nil
}

// peer shows the port at the other end of an active switch port, reached
// one hop further by direct route, and warns where the two disagree on
// width or speed.
func (r *ibportstate) peer(q *madrpc.Querier, st *portState, local *rdma.Port) error {
	pp := q.Path
	if pp.IsDR() {
		if len(pp.DR) >= mad.MaxHops {
			return fmt.Errorf("%s: too many hops to reach the peer port", pp)
		}
		pp.DR = append(append([]uint8(nil), pp.DR...), uint8(st.port))
	} else {
		// A combined route: LID-routed to the switch, then out of the port.
		pp = mad.Path{LID: pp.LID, DR: []uint8{0, uint8(st.port)}, DrSLID: local.LID}
	}
	pq := madrpc.NewQuerier(q.X, pp)
	ni, err := pq.NodeInfo(r.ctx)
	if err != nil {
		return cmdutil.WithContext(err, "peer port")
	}
	r.printf("Peer PortInfo:\n")
	peer, err := readPort(r.ctx, pq, int(ni.LocalPortNum), ni.IsSwitch())
	if err != nil {
		return cmdutil.WithContext(err, "peer port")
	}
	if ni.HasMlnxExtPortInfo() {
		if err := peer.readMlnxExtPortInfo(r.ctx, pq); err != nil {
			return cmdutil.WithContext(err, "peer port")
		}
	}
	r.out = appendPortState(r.out, peer, r.o.ShowKeys)
	if peer.mepi != nil {
		r.out = appendMlnxExtPortInfo(r.out, pp, peer.port, peer.mepiData)
	}
	r.doc.Peer = r.jsonPort(peer)
	if err := r.flush(); err != nil {
		return err
	}
	for _, w := range peerWarnings(st, peer) {
		fmt.Fprintf(r.o.IO.ErrOut, "ibportstate: warning: %s\n", w)
	}
	return nil
}

func (r *ibportstate) jsonPort(st *portState) *portDoc {
	pi := st.pi
	if !r.o.ShowKeys {
		pi.MKey = 0
	}
	return &portDoc{Path: st.path.String(), Port: st.port, PortInfo: pi}
}

// peerWarnings is ibportstate's validate_width, validate_speed and
// validate_extended_speed: the best width and speed both ends enable,
// when the link runs at something else.
func peerWarnings(st, peer *portState) []string {
	var warn []string
	enabled := func(e, s uint8, all uint8) uint8 {
		if e == all {
			return s
		}
		return e
	}
	a, b := st.pi, peer.pi
	width := enabled(uint8(a.LinkWidthEnabled), uint8(a.LinkWidthSupported), 255) & enabled(uint8(b.LinkWidthEnabled), uint8(b.LinkWidthSupported), 255)
	for _, w := range []struct {
		bit  uint8
		name string
	}{{8, "12x"}, {4, "8x"}, {2, "4x"}, {16, "2x"}, {1, "1x"}} {
		if width&w.bit != 0 {
			if uint8(a.LinkWidthActive) != w.bit {
				warn = append(warn, fmt.Sprintf("Peer ports operating at active width %d rather than %d (%s)", a.LinkWidthActive, w.bit, w.name))
			}
			break
		}
	}
	speed := enabled(uint8(a.LinkSpeedEnabled), uint8(a.LinkSpeedSupported), 15) & enabled(uint8(b.LinkSpeedEnabled), uint8(b.LinkSpeedSupported), 15)
	for _, s := range []struct {
		bit  uint8
		name string
	}{{4, "10.0 Gbps"}, {2, "5.0 Gbps"}, {1, "2.5 Gbps"}} {
		if speed&s.bit != 0 {
			if uint8(a.LinkSpeedActive) != s.bit {
				warn = append(warn, fmt.Sprintf("Peer ports operating at active speed %d rather than %d (%s)", a.LinkSpeedActive, s.bit, s.name))
			}
			break
		}
	}
	if st.espeed && peer.espeed {
		espeed := enabled(uint8(a.LinkSpeedExtEnabled), uint8(a.LinkSpeedExtSupported), 31) & enabled(uint8(b.LinkSpeedExtEnabled), uint8(b.LinkSpeedExtSupported), 31)
		for _, s := range []struct {
			bit  uint8
			name string
		}{{8, "106.25 Gbps"}, {4, "53.125 Gbps"}, {2, "25.78125 Gbps"}, {1, "14.0625 Gbps"}} {
			if espeed&s.bit != 0 {
				if uint8(a.LinkSpeedExtActive) != s.bit {
					warn = append(warn, fmt.Sprintf("Peer ports operating at active extended speed %d rather than %d (%s)", a.LinkSpeedExtActive, s.bit, s.name))
				}
				break
			}
		}
	} else if st.mepi != nil && peer.mepi != nil && fdr10(st.mepi.LinkSpeedEnabled) && fdr10(peer.mepi.LinkSpeedEnabled) && !fdr10(st.mepi.LinkSpeedActive) {
		warn = append(warn, fmt.Sprintf("Peer ports operating at active speed %d rather than FDR10", a.LinkSpeedActive))
	}
	return warn
}

// fdr10 reports whether a MlnxExtPortInfo speed set has FDR10 (bit 0).
func fdr10(speeds uint8) bool { return speeds&1 != 0 }
