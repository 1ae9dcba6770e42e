package cmd

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
)

func init() {
	register(Tool{
		Name:    "smpquery",
		Summary: "query SMP attributes (NodeInfo, NodeDesc, ...) of a port",
		New:     func(f *Factory) *cobra.Command { return newSmpqueryCmd(f, nil) },
	})
}

// smpqueryOp is one operation of smpquery, as infiniband-diags' match_tbl
// lists them.
type smpqueryOp struct {
	Name, Alias string
	PortArg     bool // takes an optional port number
	// run queries the attribute; nil for operations ibtool lacks so far.
	run func(ctx context.Context, o *smpqueryOptions, x *mad.Transactor, p mad.Path) (smpqueryResult, error)
}

var smpqueryOps = []smpqueryOp{
	{"NodeInfo", "NI", false, smpqueryNodeInfo},
	{"NodeDesc", "ND", false, smpqueryNodeDesc},
	{"PortInfo", "PI", true, nil},
	{"PortInfoExtended", "PIE", true, nil},
	{"SwitchInfo", "SI", false, nil},
	{"PKeyTable", "PKeys", true, nil},
	{"SL2VLTable", "SL2VL", true, nil},
	{"VLArbitration", "VLArb", true, nil},
	{"GUIDInfo", "GI", false, nil},
	{"MlnxExtPortInfo", "MEPI", true, nil},
}

// smpqueryOptions are smpquery's parsed flags and arguments.
type smpqueryOptions struct {
	IO     IOStreams
	Common CommonOptions
	Op     *smpqueryOp
	Target endport.Target
	Path   mad.Path
	// Transactor opens the MAD transport.
	Transactor func() (*mad.Transactor, error)
}

// smpqueryResult is what one operation found: the text infiniband-diags
// prints and the JSON document.
type smpqueryResult struct {
	Text []byte
	JSON any
}

func newSmpqueryCmd(f *Factory, runF func(*smpqueryOptions) error) *cobra.Command {
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
The target is a LID (12, 0x1a) or a DR path (0,1,3); its format decides which,
-L and -D only assert it. ibtool does not yet query PortInfo and the other
attributes marked above beyond NodeInfo and NodeDesc, nor resolve GUIDs.`,
		Example: `  smpquery nodeinfo 3          # NodeInfo of LID 3
  smpquery -D nodedesc 0,1     # NodeDesc one hop away by direct route
  smpquery --json ni 0         # this port's NodeInfo as JSON`,
		Args: argsRange(2, 3),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.finish(c); err != nil {
				return err
			}
			if err := o.parseArgs(args); err != nil {
				return err
			}
			o.Transactor = func() (*mad.Transactor, error) { return f.openTransactor(&o.Common) }
			if runF != nil {
				return runF(o)
			}
			return smpqueryRun(o)
		},
	}
	addCommonFlags(c, &o.Common, flagsLocalPort|flagsMAD|flagsJSON|flagsTarget)
	return c
}

// parseArgs picks the operation and parses the target.
func (o *smpqueryOptions) parseArgs(args []string) error {
	for i := range smpqueryOps {
		op := &smpqueryOps[i]
		if strings.EqualFold(args[0], op.Name) || strings.EqualFold(args[0], op.Alias) {
			o.Op = op
		}
	}
	if o.Op == nil {
		return usageErrorf("operation '%s' not supported", args[0])
	}
	if len(args) > 2 && !o.Op.PortArg {
		return &UsageError{Err: fmt.Errorf("operation %s takes no port number: %q", o.Op.Name, args[2]), Syntax: true}
	}
	t, err := o.Common.parseTarget(args[1])
	if err != nil {
		return err
	}
	o.Target = t
	return nil
}

// smpqueryRun queries the attribute and prints it.
func smpqueryRun(o *smpqueryOptions) error {
	if o.Op.run == nil {
		return fmt.Errorf("operation %s: not in ibtool yet (NodeInfo and NodeDesc are)", o.Op.Name)
	}
	p, err := smpPath(o.Target)
	if err != nil {
		return err
	}
	o.Path = p
	x, err := o.Transactor()
	if err != nil {
		return err
	}
	defer x.Close()
	res, err := o.Op.run(o.Common.context(), o, x, p)
	if err != nil {
		return withContext(err, "operation %s", o.Op.Name)
	}
	if o.Common.JSON {
		return writeJSONDocument(o.IO.Out, res.JSON)
	}
	_, err = o.IO.Out.Write(res.Text)
	return err
}

// smpGet sends a SubnGet of attr to p and returns the attribute data.
func smpGet(ctx context.Context, x *mad.Transactor, p mad.Path, attr mad.AttrID, name string, mod uint32) ([]byte, error) {
	r, err := x.Do(ctx, &mad.Request{Path: p, Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: attr, AttrMod: mod, Name: name})
	if err != nil {
		return nil, err
	}
	return r.Data(), nil
}

func smpqueryNodeInfo(ctx context.Context, o *smpqueryOptions, x *mad.Transactor, p mad.Path) (smpqueryResult, error) {
	data, err := smpGet(ctx, x, p, mad.AttrNodeInfo, "NodeInfo", 0)
	if err != nil {
		return smpqueryResult{}, err
	}
	text := fmt.Appendf(nil, "# Node info: %s\n", p)
	text = mad.AppendFields(text, mad.NodeInfoFields, data)
	return smpqueryResult{Text: text, JSON: map[string]any{
		"target":   p.String(),
		"nodeInfo": fieldsJSON(mad.NodeInfoFields, data),
	}}, nil
}

func smpqueryNodeDesc(ctx context.Context, o *smpqueryOptions, x *mad.Transactor, p mad.Path) (smpqueryResult, error) {
	// infiniband-diags asks NodeInfo first (for the node name map's GUID).
	if _, err := smpGet(ctx, x, p, mad.AttrNodeInfo, "NodeInfo", 0); err != nil {
		return smpqueryResult{}, err
	}
	data, err := smpGet(ctx, x, p, mad.AttrNodeDesc, "NodeDesc", 0)
	if err != nil {
		return smpqueryResult{}, err
	}
	desc := data[:mad.SMPDataLen]
	if i := bytes.IndexByte(desc, 0); i >= 0 {
		desc = desc[:i]
	}
	// smpquery pads the name, not the label, to its column: 32 dots less
	// the name's length, at least one.
	dots := max(32-len(desc), 1)
	text := fmt.Appendf(nil, "Node Description:%s%s\n", strings.Repeat(".", dots), desc)
	return smpqueryResult{Text: text, JSON: map[string]any{
		"target":          p.String(),
		"nodeDescription": string(desc),
	}}, nil
}

// fieldsJSON maps each field's label, in lowerCamelCase, to its value:
// numbers as numbers, 64-bit GUIDs as "0x..." strings, text as strings.
func fieldsJSON(fields []mad.Field, data []byte) map[string]any {
	m := make(map[string]any, len(fields))
	for _, f := range fields {
		name := strings.ToLower(f.Label[:1]) + f.Label[1:]
		switch {
		case f.Format == mad.FormatString:
			m[name] = strings.Trim(string(f.AppendValue(nil, data)), "'")
		case f.Width == 64:
			m[name] = fmt.Sprintf("0x%016x", f.Uint(data))
		default:
			m[name] = f.Uint(data)
		}
	}
	return m
}
