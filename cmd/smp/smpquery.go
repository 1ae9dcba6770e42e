package smp

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
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "smpquery",
		Light:   true,
		Summary: "query SMP attributes (NodeInfo, NodeDesc, ...) of a port",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newSmpqueryCmd(f, nil) },
	})
}

// smpqueryOp is one operation of smpquery, as infiniband-diags' match_tbl
// lists them.
type smpqueryOp struct {
	Name, Alias string
	PortArg     bool // takes an optional port number
	// run queries the attribute and renders it.
	run func(ctx context.Context, q *madrpc.Querier, o *smpqueryOptions) (smpqueryResult, error)
}

var smpqueryOps = []smpqueryOp{
	{"NodeInfo", "NI", false, smpqueryNodeInfo},
	{"NodeDesc", "ND", false, smpqueryNodeDesc},
	{"PortInfo", "PI", true, smpqueryPortInfo},
	{"PortInfoExtended", "PIE", true, smpqueryPIE},
	{"SwitchInfo", "SI", false, smpquerySwitchInfo},
	{"PKeyTable", "PKeys", true, smpqueryPKeyTable},
	{"SL2VLTable", "SL2VL", true, smpquerySL2VL},
	{"VLArbitration", "VLArb", true, smpqueryVLArb},
	{"GUIDInfo", "GI", false, smpqueryGUIDInfo},
	{"MlnxExtPortInfo", "MEPI", true, smpqueryMlnxExtPortInfo},
}

// smpqueryOptions are smpquery's parsed flags and arguments.
type smpqueryOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	Op     *smpqueryOp
	Target endport.Target
	Path   mad.Path
	// Port is the operation's port number, 0 when not given.
	Port int
	// Extended is -x: PortInfo with extended speeds (attribute modifier
	// bit 31).
	Extended bool
	// ShowKeys is -K: print the M_Key instead of "<not displayed>".
	ShowKeys bool
	// Names is the node name map (nil: none).
	Names *nodemap.Map
	// Combined is -c: the target is a LID and a DR path from that LID
	// (a combined route); CombinedLID is the LID.
	Combined    bool
	CombinedLID rdma.LID
	// LocalLID is the local port's LID, the DrSLID of a combined route;
	// Transactor sets it.
	LocalLID rdma.LID
}

// smpqueryResult is what one operation found: the text infiniband-diags
// prints and the JSON document.
type smpqueryResult struct {
	Text []byte
	JSON any
}

func newSmpqueryCmd(f *cmdutil.Factory, runF func(*smpqueryOptions) error) *cobra.Command {
	o := &smpqueryOptions{IO: f.IO}
	var ops strings.Builder
	for _, op := range smpqueryOps {
		port := ""
		if op.PortArg {
			port = " [<portnum>]"
		}
		fmt.Fprintf(&ops, "  %s (%s) <addr>%s\n", op.Name, op.Alias, port)
	}
	c := &cobra.Command{
		Use:   "smpquery [options] <op> <dest dr_path|lid|guid> [op params]",
		Short: "query SMP attributes (NodeInfo, NodeDesc, ...) of a port",
		Long: `smpquery sends a subnet management Get for one attribute to a port and
prints the reply as infiniband-diags' smpquery does.

Supported ops (and aliases, case insensitive):
` + ops.String() + `
The target is a LID (12, 0x1a), a DR path (0,1,3), a port GUID
(0x0002c90300a1b2c4) or a GID (fe80::2:c903:a1:b2c4); its format decides
which, -L, -G and -D only assert it. GUIDs and GIDs are resolved to a LID
through the SA; a scoped GID (fe80::2:c903:a1:b2c4%mlx5_0/1) is also asked
from the local port its scope names.`,
		Example: `  smpquery nodeinfo 3          # NodeInfo of LID 3
  smpquery -D nodedesc 0,1     # NodeDesc one hop away by direct route
  smpquery --json ni 0         # this port's NodeInfo as JSON`,
		Args: cmdutil.ArgsRange(2, 4),
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
			return smpqueryRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsTarget|cmdutil.FlagsNodeMap|cmdutil.FlagsSA|cmdutil.FlagsMKey)
	c.Flags().BoolVarP(&o.Extended, "extended", "x", false, "use extended speeds (PortInfo)")
	c.Flags().BoolVarP(&o.ShowKeys, "show_keys", "K", false, "display security keys in output")
	c.Flags().BoolVarP(&o.Combined, "combined", "c", false, "use Combined route address argument: <lid> <dr_path>")
	return c
}

// parseArgs picks the operation and parses the target.
func (o *smpqueryOptions) parseArgs(args []string) error {
	op, err := cmdutil.FindOperation(smpqueryOps, args[0], func(op *smpqueryOp) (string, string) { return op.Name, op.Alias })
	if err != nil {
		return err
	}
	o.Op = op
	if o.Combined {
		// <lid> <dr_path>, as infiniband-diags' -c takes them.
		if len(args) < 3 {
			return &cmdutil.UsageError{Err: errors.New("-c needs a LID and a DR path"), Syntax: true}
		}
		lid, err := rdma.ParseLID(args[1])
		if err != nil {
			return &cmdutil.UsageError{Err: err}
		}
		o.CombinedLID = lid
		args = append(args[:1:1], args[2:]...)
	} else if len(args) > 3 {
		return &cmdutil.UsageError{Err: fmt.Errorf("expected at most 3 argument(s), got %d: %q", len(args), args[3:]), Syntax: true}
	}
	if len(args) > 2 && !o.Op.PortArg {
		return &cmdutil.UsageError{Err: fmt.Errorf("operation %s takes no port number: %q", o.Op.Name, args[2]), Syntax: true}
	}
	if len(args) > 2 {
		n, err := cmdutil.ParsePortArg(args[2])
		if err != nil {
			return err
		}
		o.Port = n
	}
	t, err := o.Common.ParseTarget(args[1])
	if err != nil {
		return err
	}
	o.Target = t
	return nil
}

// smpqueryRun queries the attribute and prints it.
func smpqueryRun(o *smpqueryOptions) error {
	p, err := o.Target.Path()
	if err != nil {
		return err
	}
	if o.Combined && !p.IsDR() {
		return cmdutil.UsageErrorf("-c: %s is not a DR path", o.Target)
	}
	if o.Names, err = o.Common.LoadNodeMap("smpquery", o.IO.ErrOut); err != nil {
		return err
	}
	x, local, err := o.Common.Open()
	if local != nil {
		o.LocalLID = local.LID
	}
	if err != nil {
		return err
	}
	ctx := o.Common.Context()
	if p, err = x.Resolve(ctx, p); err != nil {
		return err
	}
	if o.Combined {
		// LID-routed to CombinedLID, then by direct route from there;
		// responses come back to this port's LID.
		p = mad.Path{LID: o.CombinedLID, DR: p.DR, DrSLID: o.LocalLID}
	}
	o.Path = p
	res, err := o.Op.run(ctx, madrpc.NewQuerier(x, p), o)
	if err != nil {
		return cmdutil.WithContext(err, "operation %s", o.Op.Name)
	}
	if o.Common.JSON {
		return cmdutil.WriteJSONDocument(o.IO.Out, res.JSON)
	}
	_, err = o.IO.Out.Write(res.Text)
	return err
}

func smpqueryNodeInfo(ctx context.Context, q *madrpc.Querier, o *smpqueryOptions) (smpqueryResult, error) {
	var ni mad.NodeInfo
	data, err := q.Get(ctx, &ni, 0)
	if err != nil {
		return smpqueryResult{}, err
	}
	text := fmt.Appendf(nil, "# Node info: %s\n", q.Path)
	text = madtext.AppendDump(text, ni.Layout(), data)
	return smpqueryResult{Text: text, JSON: struct {
		NodeInfo *mad.NodeInfo `json:"nodeInfo"`
		Target   string        `json:"target"`
	}{&ni, q.Path.String()}}, nil
}

func smpqueryNodeDesc(ctx context.Context, q *madrpc.Querier, o *smpqueryOptions) (smpqueryResult, error) {
	// NodeInfo first, for the node name map's GUID.
	ni, err := q.NodeInfo(ctx)
	if err != nil {
		return smpqueryResult{}, err
	}
	var nd mad.NodeDescription
	if _, err := q.Get(ctx, &nd, 0); err != nil {
		return smpqueryResult{}, err
	}
	desc := o.Names.Name(uint64(ni.NodeGUID), nd.NodeDescription.String())
	// smpquery pads the name, not the label, to its column: 32 dots less
	// the name's length, at least one.
	dots := max(32-len(desc), 1)
	text := fmt.Appendf(nil, "Node Description:%s%s\n", strings.Repeat(".", dots), desc)
	return smpqueryResult{Text: text, JSON: struct {
		NodeDescription string `json:"nodeDescription"`
		Target          string `json:"target"`
	}{desc, q.Path.String()}}, nil
}

func smpqueryPortInfo(ctx context.Context, q *madrpc.Querier, o *smpqueryOptions) (smpqueryResult, error) {
	mod := uint32(o.Port)
	if o.Extended {
		mod |= 1 << 31
	}
	var pi mad.PortInfo
	if _, err := q.Get(ctx, &pi, mod); err != nil {
		return smpqueryResult{}, err
	}
	text := fmt.Appendf(nil, "# Port info: %s port %d\n", q.Path, o.Port)
	text = madtext.AppendPortInfo(text, &pi, "", o.ShowKeys)
	if !o.ShowKeys {
		pi.MKey = 0
	}
	return smpqueryResult{Text: text, JSON: struct {
		Port     int           `json:"port"`
		PortInfo *mad.PortInfo `json:"portInfo"`
		Target   string        `json:"target"`
	}{o.Port, &pi, q.Path.String()}}, nil
}

// notDisplayed stands in for a key when -K is not given.
const notDisplayed = madtext.NotDisplayed

// Attribute modifiers of the VL arbitration table's blocks (IBA 14.2.5.9,
// bits 16-31): the low priority entries from block 1, the high from 3.
const (
	vlArbLowBlock  = 1
	vlArbHighBlock = 3
)

func smpqueryPIE(ctx context.Context, q *madrpc.Querier, o *smpqueryOptions) (smpqueryResult, error) {
	pie, data, err := q.PortInfoExtended(ctx, o.Port)
	if err != nil {
		return smpqueryResult{}, err
	}
	text := fmt.Appendf(nil, "# Port info Extended: %s port %d\n", q.Path, o.Port)
	text = madtext.AppendDump(text, pie.Layout(), data)
	return smpqueryResult{Text: text, JSON: struct {
		Port             int                   `json:"port"`
		PortInfoExtended *mad.PortInfoExtended `json:"portInfoExtended"`
		Target           string                `json:"target"`
	}{o.Port, pie, q.Path.String()}}, nil
}

func smpquerySwitchInfo(ctx context.Context, q *madrpc.Querier, o *smpqueryOptions) (smpqueryResult, error) {
	var si mad.SwitchInfo
	data, err := q.Get(ctx, &si, 0)
	if err != nil {
		return smpqueryResult{}, err
	}
	text := fmt.Appendf(nil, "# Switch info: %s\n", q.Path)
	text = madtext.AppendDump(text, si.Layout(), data)
	return smpqueryResult{Text: text, JSON: struct {
		SwitchInfo *mad.SwitchInfo `json:"switchInfo"`
		Target     string          `json:"target"`
	}{&si, q.Path.String()}}, nil
}

func smpqueryMlnxExtPortInfo(ctx context.Context, q *madrpc.Querier, o *smpqueryOptions) (smpqueryResult, error) {
	var mepi mad.MlnxExtPortInfo
	data, err := q.Get(ctx, &mepi, uint32(o.Port))
	if err != nil {
		return smpqueryResult{}, err
	}
	text := fmt.Appendf(nil, "# MLNX ext Port info: %s port %d\n", q.Path, o.Port)
	text = madtext.AppendDump(text, mepi.Layout(), data)
	return smpqueryResult{Text: text, JSON: struct {
		MlnxExtPortInfo *mad.MlnxExtPortInfo `json:"mlnxExtPortInfo"`
		Port            int                  `json:"port"`
		Target          string               `json:"target"`
	}{&mepi, o.Port, q.Path.String()}}, nil
}
