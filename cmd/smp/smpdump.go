package smp

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/madtext"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "smpdump",
		Light:   true,
		Summary: "dump the raw data of any SMP attribute",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newSmpdumpCmd(f, nil) },
	})
}

// smpdumpOptions are smpdump's parsed flags and arguments.
type smpdumpOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	Target endport.Target
	Attr   uint16
	Mod    uint32
	// String is -s: print the data as text up to its first NUL.
	String bool
	// Decode is -p: print the whole reply decoded, header and fields
	// (python-rdma's smpdump --decode), instead of the data in hex.
	Decode bool
}

func newSmpdumpCmd(f *cmdutil.Factory, runF func(*smpdumpOptions) error) *cobra.Command {
	o := &smpdumpOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "smpdump [options] <dlid|dr_path> <attr> [mod]",
		Short: "dump the raw data of any SMP attribute",
		Long: `smpdump sends a SubnGet of any attribute ID, with any attribute modifier,
and prints the 64 bytes of data in hex (or, with -s, as text), plus the SMP
status when it is not zero, as infiniband-diags' smpdump does.`,
		Example: `  smpdump -D 0,1,2,3,5 16   # NodeDescription by direct route
  smpdump -D 0,1,2 0x15 2   # PortInfo of port 2
  smpdump 3 0x15 2          # PortInfo of LID 3, port 2
  smpdump -s 0,1 0x10       # a node description as text`,
		Args: cmdutil.ArgsRange(2, 3),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			t, err := o.Common.ParseTarget(args[0])
			if err != nil {
				return err
			}
			o.Target = t
			n, err := cmdutil.ParseUintArg(args[1], 0xffff)
			if err != nil {
				return cmdutil.UsageErrorf("invalid attribute ID %q: %v", args[1], err)
			}
			o.Attr = uint16(n)
			if len(args) > 2 {
				n, err := cmdutil.ParseUintArg(args[2], 0xffffffff)
				if err != nil {
					return cmdutil.UsageErrorf("invalid attribute modifier %q: %v", args[2], err)
				}
				o.Mod = uint32(n)
			}
			if runF != nil {
				return runF(o)
			}
			return smpdumpRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsNoSMPortShort|cmdutil.FlagsMKey|cmdutil.FlagsSA)
	fl := c.Flags()
	cmdutil.AddTargetFlags(c, &o.Common, "LGD")
	fl.BoolVarP(&o.String, "string", "s", false, "print the data as a string")
	fl.BoolVarP(&o.Decode, "decode", "p", false, "print the whole reply decoded: its header and, for attributes ibtool knows, every field (python-rdma's)")
	return c
}

func smpdumpRun(o *smpdumpOptions) error {
	p, err := o.Target.Path()
	if err != nil {
		return err
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	if p, err = x.Resolve(o.Common.Context(), p); err != nil {
		return err
	}
	r, err := x.Do(o.Common.Context(), &madrpc.Request{Path: p, Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: mad.AttrID(o.Attr), AttrMod: o.Mod})
	var se *madrpc.StatusError
	if err != nil && !(errors.As(err, &se) && r != nil) {
		return err
	}
	data := r.Data()[:64]
	// The status as the MAD carries it: a DR SMP's includes the D bit.
	status := uint16(r.Header.Status)
	if o.Common.JSON {
		return cmdutil.WriteJSONDocument(o.IO.Out, struct {
			AttributeID       uint16 `json:"attributeID"`
			AttributeModifier uint32 `json:"attributeModifier"`
			Data              string `json:"data"`
			Status            uint16 `json:"status"`
			Target            string `json:"target"`
		}{o.Attr, o.Mod, fmt.Sprintf("%x", data), status, p.String()})
	}
	var b []byte
	if o.Decode {
		if b, err = madtext.AppendMADDump(nil, r.MAD); err != nil {
			return fmt.Errorf("decoding the reply: %w", err)
		}
		_, err = o.IO.Out.Write(b)
		return err
	}
	if o.String {
		for _, c := range data {
			if c == 0 {
				break
			}
			b = append(b, c)
		}
		b = append(b, '\n')
	} else {
		b = madtext.AppendXdump(b, data)
	}
	if status != 0 {
		b = fmt.Appendf(b, "SMP status: 0x%x\n", status)
	}
	_, err = o.IO.Out.Write(b)
	return err
}
