package cc

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibccconfig",
		Light:   true,
		Summary: "set congestion control attributes of a port",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbccconfigCmd(f, nil) },
	})
}

// ccConfigOp is one operation of ibccconfig: its names, its parameters
// and how it builds the Set.
type ccConfigOp struct {
	Name, Alias, Params string
	build               func(ctx context.Context, q *madrpc.Querier, args []string) (ccSet, error)
}

// ccSet is the Set an operation builds: the attribute, its modifier, and
// the attribute as read where the Set changes only part of it (a dry run
// shows what changes).
type ccSet struct {
	attr   mad.Attribute
	mod    uint32
	before []byte
}

var ccConfigOps = []ccConfigOp{
	{"CongestionKeyInfo", "CK", "<cckey> <cckeyprotectbit> <cckeyleaseperiod> <cckeyviolations>", ccConfigKeyInfo},
	{"SwitchCongestionSetting", "SS", "<controlmap> <victimmask> <creditmask> <threshold> <packetsize> <csthreshold> <csreturndelay> <markingrate>", ccConfigSwitch},
	{"SwitchPortCongestionSetting", "SP", "<portnum> <valid> <control_type> <threshold> <packet_size> <cong_parm_marking_rate>", ccConfigSwitchPort},
	{"CACongestionSetting", "CS", "<port_control> <control_map> <ccti_timer> <ccti_increase> <trigger_threshold> <ccti_min>", ccConfigCA},
	{"CongestionControlTable", "CT", "<cctilimit> <index> <cctentry> <cctentry> ...", ccConfigTable},
}

// ibccconfigOptions are ibccconfig's parsed flags and arguments.
type ibccconfigOptions struct {
	IO       cmdutil.IOStreams
	Common   cmdutil.CommonOptions
	Op       *ccConfigOp
	Target   endport.Target
	Params   []string
	CCKey    uint64
	ccKeyArg string
}

func newIbccconfigCmd(f *cmdutil.Factory, runF func(*ibccconfigOptions) error) *cobra.Command {
	o := &ibccconfigOptions{IO: f.IO}
	var ops strings.Builder
	for _, op := range ccConfigOps {
		fmt.Fprintf(&ops, "  %s (%s) <lid|guid> %s\n", op.Name, op.Alias, op.Params)
	}
	c := &cobra.Command{
		Use:   "ibccconfig [options] <op> <lid|guid> [params]",
		Short: "set congestion control attributes of a port",
		Long: `ibccconfig sends a congestion control (CC class) Set of one attribute, as
infiniband-diags' ibccconfig does; it prints nothing when the port accepts
it.

WARNING -- you should understand what you are doing before using this tool.
Misuse of this tool could result in a broken fabric.

Supported ops (and aliases, case insensitive):
` + ops.String(),
		Example: `  ibccconfig SwitchCongestionSetting 2 0x1F 0x1FFFFFFFFF 0x0 0xF 8 0 0:0 1
  ibccconfig CACongestionSetting 1 0 0x3 150 1 0 0   # SL 0 and SL 1
  ibccconfig CongestionControlTable 1 63 0 0:0 0:1 ...
  ibccconfig --dry-run CK 3 0x1 0 0 0   # print the Set, send none`,
		Args: cmdutil.ArgsRange(2, -1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			var err error
			if o.Op, err = cmdutil.FindOperation(ccConfigOps, args[0], func(op *ccConfigOp) (string, string) { return op.Name, op.Alias }); err != nil {
				return err
			}
			if o.CCKey, err = parseCCKey(o.ccKeyArg); err != nil {
				return err
			}
			t, err := o.Common.ParseTarget(args[1])
			if err != nil {
				return err
			}
			o.Target, o.Params = t, args[2:]
			if runF != nil {
				return runF(o)
			}
			return ibccconfigRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsDryRun|cmdutil.FlagsMKey)
	fl := c.Flags()
	cmdutil.AddTargetFlags(c, &o.Common, "LG")
	fl.StringVarP(&o.ccKeyArg, "cckey", "c", "", "CC key")
	return c
}

// ccConfigDoc is ibccconfig's --json document.
type ccConfigDoc struct {
	AttributeModifier uint32 `json:"attributeModifier"`
	// DryRun is set under --dry-run, an empty list when nothing was
	// planned.
	DryRun    *[]*madrpc.Plan `json:"dryRun,omitempty"`
	Operation string          `json:"operation"`
	Set       bool            `json:"set"`
	Target    string          `json:"target"`
}

func ibccconfigRun(o *ibccconfigOptions) error {
	p, err := cmdutil.GMPPath(o.Target, "congestion control MADs")
	if err != nil {
		return err
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	ctx := o.Common.Context()
	if p, err = x.Resolve(ctx, p); err != nil {
		return err
	}
	q := ccQuerier(x, p, o.CCKey)
	set, err := o.Op.build(ctx, q, o.Params)
	if err != nil {
		return cmdutil.WithContext(err, "operation %s", o.Op.Name)
	}
	if _, err := q.Set(ctx, set.attr, set.mod, set.before); err != nil {
		return cmdutil.WithContext(err, "operation %s", o.Op.Name)
	}
	if o.Common.JSON {
		// A dry run plans every Set and sends none.
		doc := ccConfigDoc{AttributeModifier: set.mod, Operation: o.Op.Name, Set: !o.Common.DryRun, Target: p.String()}
		if planned := o.Common.DryRunPlans(); planned != nil {
			doc.DryRun = &planned
		}
		return cmdutil.WriteJSONDocument(o.IO.Out, doc)
	}
	return nil
}

// ccParams checks a parameter count.
func ccParams(args []string, want int, what string) error {
	if len(args) != want {
		return cmdutil.UsageErrorf("invalid number of parameters for %s: %d, want %d", what, len(args), want)
	}
	return nil
}

// setFields stores NAME=value pairs into a through its layout, each value
// checked against its field's width.
func setFields(a mad.Attribute, names []string, values []string) error {
	l := a.Layout()
	data, err := a.AppendBinary(nil)
	if err != nil {
		return err
	}
	for i, name := range names {
		f, ok := l.Field(name)
		if !ok {
			return fmt.Errorf("%s has no field %s", l.Name, name)
		}
		v, err := cmdutil.ParseUintArg(values[i], 1<<f.Width-1)
		if err != nil {
			return cmdutil.UsageErrorf("%s %q: %v", f.Label, values[i], err)
		}
		f.SetValue(data, v)
	}
	return a.UnmarshalBinary(data)
}

func ccConfigKeyInfo(ctx context.Context, q *madrpc.Querier, args []string) (ccSet, error) {
	if err := ccParams(args, 4, "CongestionKeyInfo"); err != nil {
		return ccSet{}, err
	}
	var ki mad.CongestionKeyInfo
	key, err := cmdutil.ParseUintArg(args[0], ^uint64(0))
	if err != nil {
		return ccSet{}, cmdutil.UsageErrorf("CC_Key %q: %v", args[0], err)
	}
	ki.CCKey = key
	// A violations count other than zero leaves the counter alone.
	err = setFields(&ki, []string{"CCKeyProtectBit", "CCKeyLeasePeriod", "CCKeyViolations"}, args[1:])
	return ccSet{attr: &ki}, err
}

// parse256 reads a 256-bit mask written in hex, right-aligned as a
// big-endian number, as ibccconfig's parse256.
func parse256(s string) ([32]byte, error) {
	var out [32]byte
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" || len(s) > 64 {
		return out, cmdutil.UsageErrorf("mask %q: want 1 to 64 hex digits", s)
	}
	if len(s)%2 == 1 {
		s = "0" + s
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return out, cmdutil.UsageErrorf("mask %q: invalid hex digit", s)
	}
	copy(out[32-len(b):], b)
	return out, nil
}

// parseCCT reads a "shift:multiplier" congestion control table entry.
func parseCCT(s string) (shift, mult uint64, err error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, cmdutil.UsageErrorf("entry %q: ccts are formatted shift:multiplier", s)
	}
	if shift, err = cmdutil.ParseUintArg(a, 3); err != nil {
		return 0, 0, cmdutil.UsageErrorf("entry %q: shift: %v", s, err)
	}
	if mult, err = cmdutil.ParseUintArg(b, 1<<14-1); err != nil {
		return 0, 0, cmdutil.UsageErrorf("entry %q: multiplier: %v", s, err)
	}
	return shift, mult, nil
}

func ccConfigSwitch(ctx context.Context, q *madrpc.Querier, args []string) (ccSet, error) {
	if err := ccParams(args, 8, "SwitchCongestionSetting"); err != nil {
		return ccSet{}, err
	}
	var sw mad.SwitchCongestionSetting
	if err := setFields(&sw, []string{"ControlMap"}, args[:1]); err != nil {
		return ccSet{}, err
	}
	var err error
	if sw.VictimMask, err = parse256(args[1]); err != nil {
		return ccSet{}, err
	}
	if sw.CreditMask, err = parse256(args[2]); err != nil {
		return ccSet{}, err
	}
	if err := setFields(&sw, []string{"Threshold", "PacketSize", "CSThreshold"}, args[3:6]); err != nil {
		return ccSet{}, err
	}
	shift, mult, err := parseCCT(args[6])
	if err != nil {
		return ccSet{}, err
	}
	sw.CSReturnDelay = uint16(shift<<14 | mult)
	err = setFields(&sw, []string{"MarkingRate"}, args[7:])
	return ccSet{attr: &sw}, err
}

// ccPortsPerSetBlock is how many ports a SwitchPortCongestionSetting Set's
// block starts with (IBA A10.4.3.7: 32 ports), as infiniband-diags'
// ibccconfig counts them; ibccquery's Gets count 48 (the table's block).
const ccPortsPerSetBlock = 32

func ccConfigSwitchPort(ctx context.Context, q *madrpc.Querier, args []string) (ccSet, error) {
	if err := ccParams(args, 6, "SwitchPortCongestionSetting"); err != nil {
		return ccSet{}, err
	}
	port, err := cmdutil.ParsePortNumber(args[0])
	if err != nil {
		return ccSet{}, err
	}
	nports, err := ccSwitchPorts(ctx, q, "node info query")
	if err != nil {
		return ccSet{}, err
	}
	if port > nports {
		return ccSet{}, cmdutil.UsageErrorf("invalid port number %d: the switch has %d ports", port, nports)
	}
	// Only one port changes: start from the block as it is.
	block := uint32(port / ccPortsPerSetBlock)
	var sp mad.SwitchPortCongestionSetting
	cur, err := q.Get(ctx, &sp, block)
	if err != nil {
		return ccSet{}, cmdutil.WithContext(err, "switch port congestion setting query")
	}
	el := &sp.Ports[port%ccPortsPerSetBlock]
	if err := setFields(el, []string{"Valid", "ControlType", "Threshold", "PacketSize", "CongParmMarkingRate"}, args[1:]); err != nil {
		return ccSet{}, err
	}
	return ccSet{attr: &sp, mod: block, before: cur}, nil
}

func ccConfigCA(ctx context.Context, q *madrpc.Querier, args []string) (ccSet, error) {
	if err := ccParams(args, 6, "CACongestionSetting"); err != nil {
		return ccSet{}, err
	}
	var cs mad.CACongestionSetting
	if err := setFields(&cs, []string{"PortControl", "ControlMap"}, args[:2]); err != nil {
		return ccSet{}, err
	}
	for sl := range cs.Entries {
		if cs.ControlMap&(1<<sl) == 0 {
			continue
		}
		if err := setFields(&cs.Entries[sl], []string{"CCTITimer", "CCTIIncrease", "TriggerThreshold", "CCTIMin"}, args[2:]); err != nil {
			return ccSet{}, err
		}
	}
	return ccSet{attr: &cs}, nil
}

func ccConfigTable(ctx context.Context, q *madrpc.Querier, args []string) (ccSet, error) {
	var cct mad.CongestionControlTable
	perBlock := len(cct.Entries)
	if len(args) < 2 || len(args) > 2+perBlock {
		return ccSet{}, cmdutil.UsageErrorf("invalid number of parameters for CongestionControlTable: %d", len(args))
	}
	limit, err := cmdutil.ParseUintArg(args[0], 0xffff)
	if err != nil {
		return ccSet{}, cmdutil.UsageErrorf("CCTI_Limit %q: %v", args[0], err)
	}
	index, err := cmdutil.ParseUintArg(args[1], 0xffffffff)
	if err != nil {
		return ccSet{}, cmdutil.UsageErrorf("index %q: %v", args[1], err)
	}
	entries := args[2:]
	if limit != 0 && limit+1 != index*uint64(perBlock)+uint64(len(entries)) {
		return ccSet{}, cmdutil.UsageErrorf("invalid number of cct entries input given ccti_limit %d and index %d: %d", limit, index, len(entries))
	}
	cct.CCTILimit = uint16(limit)
	for i, e := range entries {
		shift, mult, err := parseCCT(e)
		if err != nil {
			return ccSet{}, err
		}
		cct.Entries[i] = mad.CongestionControlTableEntry{CCTShift: uint8(shift), CCTMultiplier: uint16(mult)}
	}
	return ccSet{attr: &cct, mod: uint32(index)}, nil
}
