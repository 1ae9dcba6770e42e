package cc

import (
	"context"
	"errors"
	"fmt"
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
		Name:    "ibccquery",
		Light:   true,
		Summary: "query congestion control attributes of a port",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbccqueryCmd(f, nil) },
	})
}

// ccOp is one operation of ibccquery, as infiniband-diags' match_tbl lists
// them.
type ccOp struct {
	Name, Alias string
	PortArg     bool
	run         func(ctx context.Context, q *madrpc.Querier, o *ibccqueryOptions) ([]byte, any, error)
}

var ccOps = []ccOp{
	{"ClassPortInfo", "CP", false, ccSimple(func() mad.Attribute { return new(mad.ClassPortInfo) }, "class port info")},
	{"CongestionInfo", "CI", false, ccSimple(func() mad.Attribute { return new(mad.CongestionInfo) }, "congestion info")},
	{"CongestionKeyInfo", "CK", false, ccSimple(func() mad.Attribute { return new(mad.CongestionKeyInfo) }, "congestion key info")},
	{"CongestionLog", "CL", false, ccCongestionLog},
	{"SwitchCongestionSetting", "SS", false, ccSimple(func() mad.Attribute { return new(mad.SwitchCongestionSetting) }, "switch congestion setting")},
	{"SwitchPortCongestionSetting", "SP", true, ccSwitchPortSetting},
	{"CACongestionSetting", "CS", false, ccCASetting},
	{"CongestionControlTable", "CT", false, ccControlTable},
	{"Timestamp", "TI", false, ccSimple(func() mad.Attribute { return new(mad.Timestamp) }, "timestamp")},
}

// ibccqueryOptions are ibccquery's parsed flags and arguments.
type ibccqueryOptions struct {
	IO       cmdutil.IOStreams
	Common   cmdutil.CommonOptions
	Op       *ccOp
	Target   endport.Target
	Port     int
	CCKey    uint64
	ccKeyArg string
}

func newIbccqueryCmd(f *cmdutil.Factory, runF func(*ibccqueryOptions) error) *cobra.Command {
	o := &ibccqueryOptions{IO: f.IO}
	var ops strings.Builder
	for _, op := range ccOps {
		port := ""
		if op.PortArg {
			port = " [<portnum>]"
		}
		fmt.Fprintf(&ops, "  %s (%s) <lid|guid>%s\n", op.Name, op.Alias, port)
	}
	c := &cobra.Command{
		Use:   "ibccquery [options] <op> <lid|guid> [port]",
		Short: "query congestion control attributes of a port",
		Long: `ibccquery sends a congestion control (CC class) Get for one attribute and
prints the reply as infiniband-diags' ibccquery does.

Supported ops (and aliases, case insensitive):
` + ops.String(),
		Example: `  ibccquery CongestionInfo 3              # Congestion Info by lid
  ibccquery SwitchPortCongestionSetting 3  # every port's setting
  ibccquery SwitchPortCongestionSetting 3 1`,
		Args: cmdutil.ArgsRange(2, 3),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.parse(args); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return ibccqueryRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsMKey)
	fl := c.Flags()
	cmdutil.AddTargetFlags(c, &o.Common, "LG")
	fl.StringVarP(&o.ccKeyArg, "cckey", "c", "", "CC key")
	return c
}

// parseCCKey parses a -c CC_Key: any 64-bit value, decimal or 0x hex;
// "" is 0.
func parseCCKey(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	k, err := cmdutil.ParseUintArg(s, ^uint64(0))
	if err != nil {
		return 0, cmdutil.UsageErrorf("invalid CC key %q: %v", s, err)
	}
	return k, nil
}

func (o *ibccqueryOptions) parse(args []string) error {
	var err error
	if o.Op, err = cmdutil.FindOperation(ccOps, args[0], func(op *ccOp) (string, string) { return op.Name, op.Alias }); err != nil {
		return err
	}
	if o.CCKey, err = parseCCKey(o.ccKeyArg); err != nil {
		return err
	}
	t, err := o.Common.ParseTarget(args[1])
	if err != nil {
		return err
	}
	o.Target = t
	if len(args) > 2 {
		if !o.Op.PortArg {
			return &cmdutil.UsageError{Err: fmt.Errorf("operation %s takes no port number: %q", o.Op.Name, args[2]), Syntax: true}
		}
		n, err := cmdutil.ParsePortArg(args[2])
		if err != nil {
			return err
		}
		o.Port = n
	}
	return nil
}

// ccQueryDoc is ibccquery's --json document; result is the operation's.
type ccQueryDoc struct {
	Operation string `json:"operation"`
	Result    any    `json:"result"`
	Target    string `json:"target"`
}

// ccQuerier returns the Querier of ibccquery's and ibccconfig's CC MADs to
// p, with the CC_Key: every attribute goes as the CC class (ClassPortInfo
// too).
func ccQuerier(x *madrpc.Transactor, p mad.Path, key uint64) *madrpc.Querier {
	return &madrpc.Querier{X: x, Path: p, Key: key, Class: mad.ClassCC}
}

// ccSwitchPorts reads the target's NodeInfo (an SMP, without the CC_Key)
// and returns its port count; the target must be a switch. A failed query
// is said to be what.
func ccSwitchPorts(ctx context.Context, q *madrpc.Querier, what string) (int, error) {
	var ni mad.NodeInfo
	if _, err := madrpc.NewQuerier(q.X, q.Path).Get(ctx, &ni, 0); err != nil {
		return 0, cmdutil.WithContext(err, "%s", what)
	}
	if ni.NodeType != mad.NodeTypeSwitch {
		return 0, errors.New("destination not a switch")
	}
	return int(ni.NumPorts), nil
}

func ibccqueryRun(o *ibccqueryOptions) error {
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
	out, doc, err := o.Op.run(ctx, ccQuerier(x, p, o.CCKey), o)
	if err != nil {
		return cmdutil.WithContext(err, "operation %s", o.Op.Name)
	}
	if o.Common.JSON {
		return cmdutil.WriteJSONDocument(o.IO.Out, ccQueryDoc{Operation: o.Op.Name, Result: doc, Target: p.String()})
	}
	_, err = o.IO.Out.Write(out)
	return err
}

// ccSimple reads one attribute and dumps it under "# Name: target".
func ccSimple(newAttr func() mad.Attribute, what string) func(ctx context.Context, q *madrpc.Querier, o *ibccqueryOptions) ([]byte, any, error) {
	return func(ctx context.Context, q *madrpc.Querier, o *ibccqueryOptions) ([]byte, any, error) {
		a := newAttr()
		data, err := q.Get(ctx, a, 0)
		if err != nil {
			return nil, nil, cmdutil.WithContext(err, "%s query failed", what)
		}
		b := fmt.Appendf(nil, "# %s: %s\n", a.Layout().Name, q.Path)
		return madtext.AppendDump(b, a.Layout(), data), a, nil
	}
}

// Congestion log types (IBA A10.4.3.5).
const (
	ccLogSwitch = 1
	ccLogCA     = 2
)

// ccLogDoc is CongestionLog's result: the log's fields and its events.
type ccLogDoc struct {
	Events []mad.Attribute `json:"events"`
	Log    mad.Attribute   `json:"log"`
}

func ccCongestionLog(ctx context.Context, q *madrpc.Querier, o *ibccqueryOptions) ([]byte, any, error) {
	var sw mad.CongestionLogSwitch
	data, err := q.Get(ctx, &sw, 0)
	if err != nil {
		return nil, nil, cmdutil.WithContext(err, "congestion log query failed")
	}
	var head mad.Attribute = &sw
	switch sw.LogType {
	case ccLogSwitch:
	case ccLogCA:
		head = new(mad.CongestionLogCA)
		if err := head.UnmarshalBinary(data); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, fmt.Errorf("unrecognized log type %d", sw.LogType)
	}
	b := fmt.Appendf(nil, "# CongestionLog: %s\n", q.Path)
	l := head.Layout()
	b = madtext.AppendFields(b, sw.Layout().Fields[:2], data) // LogType, CongestionFlags
	b = madtext.AppendFields(b, l.Fields[2:], data)
	b = append(b, '\n')
	doc := ccLogDoc{Events: []mad.Attribute{}, Log: head}
	for i := range l.Block.Count {
		e := l.Block.ElementData(data, i)
		if allZero(e) {
			continue // no event logged in this entry
		}
		b = madtext.AppendDump(b, l.Block.Element, e)
		b = append(b, '\n')
		doc.Events = append(doc.Events, l.Block.Element.Decode(e))
	}
	return b, doc, nil
}

// allZero reports whether every byte of b is 0.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// ccPortSetting is one port's SwitchPortCongestionSetting element.
type ccPortSetting struct {
	Port    int                                     `json:"port"`
	Setting *mad.SwitchPortCongestionSettingElement `json:"setting"`
}

func ccSwitchPortSetting(ctx context.Context, q *madrpc.Querier, o *ibccqueryOptions) ([]byte, any, error) {
	nports, err := ccSwitchPorts(ctx, q, "node info query failed")
	if err != nil {
		return nil, nil, err
	}
	var sp mad.SwitchPortCongestionSetting
	blk := sp.Layout().Block
	b := fmt.Appendf(nil, "# SwitchPortCongestionSetting: %s\n", q.Path)
	if o.Port != 0 {
		if o.Port > nports {
			return nil, nil, fmt.Errorf("invalid port number %d: the switch has %d ports", o.Port, nports)
		}
		data, err := q.Get(ctx, &sp, uint32(o.Port/blk.Count))
		if err != nil {
			return nil, nil, cmdutil.WithContext(err, "switch port congestion setting query failed")
		}
		i := o.Port % blk.Count
		return madtext.AppendDump(b, blk.Element, blk.ElementData(data, i)), ccPortSetting{o.Port, &sp.Ports[i]}, nil
	}
	var list []ccPortSetting
	shown := 0
	for block := 0; block < nports/blk.Count+1; block++ {
		var sp mad.SwitchPortCongestionSetting
		data, err := q.Get(ctx, &sp, uint32(block))
		if err != nil {
			return nil, nil, cmdutil.WithContext(err, "switch port congestion setting query failed")
		}
		for j := 0; j < blk.Count && shown <= nports; j++ {
			port := block*blk.Count + j
			b = fmt.Appendf(b, "Port:............................%d\n", port)
			b = madtext.AppendDump(b, blk.Element, blk.ElementData(data, j))
			b = append(b, '\n')
			list = append(list, ccPortSetting{port, &sp.Ports[j]})
			shown++
		}
	}
	return b, list, nil
}

// ccCADoc is CACongestionSetting's result: the setting and its 16 SLs'
// entries.
type ccCADoc struct {
	Entries []mad.CACongestionEntry  `json:"entries"`
	Setting *mad.CACongestionSetting `json:"setting"`
}

func ccCASetting(ctx context.Context, q *madrpc.Querier, o *ibccqueryOptions) ([]byte, any, error) {
	var cs mad.CACongestionSetting
	data, err := q.Get(ctx, &cs, 0)
	if err != nil {
		return nil, nil, cmdutil.WithContext(err, "ca congestion setting query failed")
	}
	blk := cs.Layout().Block
	b := fmt.Appendf(nil, "# CACongestionSetting: %s\n", q.Path)
	b = madtext.AppendDump(b, cs.Layout(), data)
	b = append(b, '\n')
	for sl := range blk.Count {
		b = fmt.Appendf(b, "SL:..............................%d\n", sl)
		b = madtext.AppendDump(b, blk.Element, blk.ElementData(data, sl))
		b = append(b, '\n')
	}
	return b, ccCADoc{Entries: cs.Entries[:], Setting: &cs}, nil
}

// ccTableDoc is CongestionControlTable's result: CCTI_Limit and the
// entries up to it.
type ccTableDoc struct {
	CCTILimit int                               `json:"cctiLimit"`
	Entries   []mad.CongestionControlTableEntry `json:"entries"`
}

func ccControlTable(ctx context.Context, q *madrpc.Querier, o *ibccqueryOptions) ([]byte, any, error) {
	var cct mad.CongestionControlTable
	data, err := q.Get(ctx, &cct, 0)
	if err != nil {
		return nil, nil, cmdutil.WithContext(err, "congestion control table query failed")
	}
	limit := int(cct.CCTILimit)
	b := fmt.Appendf(nil, "# CongestionControlTable: %s\n", q.Path)
	b = madtext.AppendDump(b, cct.Layout(), data)
	b = append(b, '\n')
	doc := ccTableDoc{CCTILimit: limit, Entries: []mad.CongestionControlTableEntry{}}
	if limit == 0 {
		return b, doc, nil
	}
	blk := cct.Layout().Block
	shown := 0
	for block := 0; block < limit/blk.Count+1; block++ {
		if block > 0 {
			if data, err = q.Get(ctx, &cct, uint32(block)); err != nil {
				return nil, nil, cmdutil.WithContext(err, "congestion control table query failed")
			}
		}
		for j := 0; j < blk.Count && shown <= limit; j++ {
			b = fmt.Appendf(b, "Entry:...........................%d\n", block*blk.Count+j)
			b = madtext.AppendDump(b, blk.Element, blk.ElementData(data, j))
			b = append(b, '\n')
			doc.Entries = append(doc.Entries, cct.Entries[j])
			shown++
		}
	}
	return b, doc, nil
}
