package smp

import (
	"errors"
	"fmt"
	"sort"
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
		Name:    "query",
		Light:   true,
		Summary: "send a Get of any attribute by name and print every field",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newQueryCmd(f, nil) },
	})
}

// queryMethods maps the methods query takes (python-rdma's names and
// ibtool's) to the class they use.
var queryMethods = map[string]mad.Class{
	"subnget":        mad.ClassSMI,
	"performanceget": mad.ClassPerf,
	"perfget":        mad.ClassPerf,
	"congestionget":  mad.ClassCC,
	"ccget":          mad.ClassCC,
}

// queryOptions are query's parsed flags and arguments.
type queryOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	Class  mad.Class
	Layout *mad.Layout
	// Target is the port asked; nil means the local port.
	Target  *endport.Target
	AttrMod uint32
	// Fields are the -f NAME=VALUE settings of the request.
	Fields  []string
	modArg  string
	request []byte
}

func newQueryCmd(f *cmdutil.Factory, runF func(*queryOptions) error) *cobra.Command {
	o := &queryOptions{IO: f.IO}
	var names []string
	for _, l := range mad.Layouts {
		if l.ID != 0 {
			names = append(names, l.Name)
		}
	}
	sort.Strings(names)
	c := &cobra.Command{
		Use:   "query [options] METHOD ATTRIBUTE [TARGET]",
		Short: "send a Get of any attribute by name and print every field",
		Long: `query sends one Get of any attribute ibtool knows and prints every field of
the reply, as python-rdma's query does. METHOD is SubnGet, PerformanceGet or
CongestionGet; ATTRIBUTE is the attribute's name, with or without
python-rdma's prefix (SMPPortInfo, PMPortCounters, CCCongestionInfo). -f sets
fields of the request by name, -a its attribute modifier. Without a target
it asks the local port.

Attributes: ` + strings.Join(names, ", ") + ".",
		Example: `  query SubnGet PortInfo 3 -a 1
  query PerformanceGet PMPortCounters 3 -f portSelect=1
  query SubnGet NodeDescription 0,1`,
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
			return queryRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsTarget|cmdutil.FlagsSA|cmdutil.FlagsMKey)
	fl := c.Flags()
	fl.StringVarP(&o.modArg, "attribute-id", "a", "", "the attribute modifier of the request")
	fl.StringArrayVarP(&o.Fields, "field", "f", nil, "set a field of the request: NAME=VALUE (repeatable)")
	return c
}

// parse reads the method, the attribute, the target and the settings.
func (o *queryOptions) parse(args []string) error {
	class, ok := queryMethods[strings.ToLower(args[0])]
	if !ok {
		return cmdutil.UsageErrorf("method %q: want SubnGet, PerformanceGet or CongestionGet", args[0])
	}
	o.Class = class
	name := args[1]
	for _, prefix := range []string{"SMP", "PM", "CC"} {
		if len(name) > len(prefix) && strings.EqualFold(name[:len(prefix)], prefix) && mad.LayoutByName(name) == nil {
			if l := mad.LayoutByName(name[len(prefix):]); l != nil {
				name = l.Name
			}
		}
	}
	for _, l := range mad.Layouts {
		if strings.EqualFold(l.Name, name) && l.ID != 0 && (l.Class == class || l.Name == "ClassPortInfo" && class != mad.ClassSMI) {
			o.Layout = l
		}
	}
	if o.Layout == nil {
		return cmdutil.UsageErrorf("attribute %q: not a %v attribute ibtool knows (see query --help)", args[1], class)
	}
	if o.modArg != "" {
		n, err := cmdutil.ParseUintArg(o.modArg, 0xffffffff)
		if err != nil {
			return cmdutil.UsageErrorf("invalid attribute modifier %q: %v", o.modArg, err)
		}
		o.AttrMod = uint32(n)
	}
	// The request starts as the attribute's zero encoding.
	req, err := o.Layout.New().AppendBinary(nil)
	if err != nil {
		return err
	}
	o.request = req
	for _, set := range o.Fields {
		if err := setField(o.Layout, o.request, set); err != nil {
			return err
		}
	}
	if len(args) > 2 {
		t, err := o.Common.ParseTarget(args[2])
		if err != nil {
			return err
		}
		o.Target = &t
	}
	return nil
}

// setField applies one NAME=VALUE to a request's data: the field by its Go,
// JSON or libibmad name, the value decimal or 0x hex.
func setField(l *mad.Layout, data []byte, set string) error {
	name, value, ok := strings.Cut(set, "=")
	if !ok {
		return cmdutil.UsageErrorf("field %q: want NAME=VALUE", set)
	}
	for _, f := range l.Fields {
		if !strings.EqualFold(f.Name, name) && !strings.EqualFold(f.JSON, name) && !strings.EqualFold(f.Label, name) {
			continue
		}
		if f.Width > 64 {
			return cmdutil.UsageErrorf("field %s of %s is %d bits: only fields up to 64 bits can be set", f.Name, l.Name, f.Width)
		}
		max := ^uint64(0)
		if f.Width < 64 {
			max = 1<<f.Width - 1
		}
		v, err := cmdutil.ParseUintArg(value, max)
		if err != nil {
			return cmdutil.UsageErrorf("field %s=%q: %v", f.Name, value, err)
		}
		f.SetValue(data, v)
		return nil
	}
	return cmdutil.UsageErrorf("%s has no field %q", l.Name, name)
}

func queryRun(o *queryOptions) error {
	x, local, err := o.Common.Open()
	if err != nil {
		return err
	}
	var p mad.Path
	switch {
	case o.Target != nil && o.Class == mad.ClassSMI:
		p, err = o.Target.Path()
	case o.Target != nil:
		if p, err = o.Target.LIDRoutedPath("GMPs"); errors.Is(err, endport.ErrNotLIDRouted) {
			err = &cmdutil.UsageError{Err: err}
		}
	case o.Class == mad.ClassSMI:
		p = mad.DRPath(0)
	default:
		p = mad.LIDPath(local.LID)
	}
	if err != nil {
		return err
	}
	if p, err = x.Resolve(o.Common.Context(), p); err != nil {
		return err
	}
	r := &madrpc.Request{Path: p, Class: o.Class, Method: mad.MethodGet, AttrID: o.Layout.ID, AttrMod: o.AttrMod, Name: o.Layout.Name, Data: o.request}
	if o.Layout.Name == "CongestionLogSwitch" {
		r.DataOffset = 32
	}
	resp, err := x.Do(o.Common.Context(), r)
	if err != nil {
		return err
	}
	data := resp.Data()
	if len(data) < o.Layout.Size {
		return fmt.Errorf("%v: %d bytes of data, %s needs %d", r, len(data), o.Layout.Name, o.Layout.Size)
	}
	if o.Common.JSON {
		return cmdutil.WriteJSONDocument(o.IO.Out, struct {
			Attribute         string        `json:"attribute"`
			AttributeModifier uint32        `json:"attributeModifier"`
			Data              mad.Attribute `json:"data"`
			Target            string        `json:"target"`
		}{o.Layout.Name, o.AttrMod, o.Layout.Decode(data), p.String()})
	}
	b := fmt.Appendf(nil, "# %s: %s attribute modifier 0x%x\n", o.Layout.Name, p, o.AttrMod)
	for _, f := range o.Layout.Fields {
		label := f.Label
		if label == "" {
			label = f.Name
		}
		b = madtext.AppendDotted(b, label)
		b = f.AppendValue(b, data)
		b = append(b, '\n')
	}
	_, err = o.IO.Out.Write(b)
	return err
}
