package smp

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibaddr",
		Light:   true,
		Summary: "show a port's GID and LID range",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbaddrCmd(f, nil) },
	})
}

// ibaddrOptions are ibaddr's parsed flags and arguments.
type ibaddrOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	// Target is the port to show; nil means the local port.
	Target *endport.Target
	Port   int // the port number for PortInfo
	// ShowGID, ShowLID and Decimal are -g, -l and -L; neither -g nor -l
	// (nor -L) shows both.
	ShowGID, ShowLID, Decimal bool
}

func newIbaddrCmd(f *cmdutil.Factory, runF func(*ibaddrOptions) error) *cobra.Command {
	o := &ibaddrOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "ibaddr [options] [<lid|dr_path|guid> [port]]",
		Short: "show a port's GID and LID range",
		Long: `ibaddr prints a port's GID (its subnet prefix and port GUID) and the LID
range its LMC gives it, from the node's NodeInfo and the port's PortInfo.
Without a target it shows the local port.`,
		Example: `  ibaddr            # the local port
  ibaddr 32         # LID 32's GID and LID range
  ibaddr -l 32      # the LID range only
  ibaddr -L 32      # the LID range in decimal
  ibaddr -g 32      # the GID only`,
		Args: cmdutil.ArgsRange(0, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if o.Decimal {
				o.ShowLID = true
			}
			if !o.ShowGID && !o.ShowLID {
				o.ShowGID, o.ShowLID = true, true
			}
			if len(args) > 0 {
				t, err := o.Common.ParseTarget(args[0])
				if err != nil {
					return err
				}
				o.Target = &t
			}
			if len(args) > 1 {
				n, err := cmdutil.ParsePortArg(args[1])
				if err != nil {
					return err
				}
				o.Port = n
			}
			if runF != nil {
				return runF(o)
			}
			return ibaddrRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsSA|cmdutil.FlagsMKey)
	fl := c.Flags()
	// ibaddr's -L is --Lid_show, so the LID assertion is --Lid alone (as
	// python-rdma's ibaddr has it).
	cmdutil.AddTargetFlags(c, &o.Common, "GD")
	cmdutil.AddTargetLongFlags(c, &o.Common, "L")
	fl.BoolVarP(&o.ShowGID, "gid_show", "g", false, "show gid address only")
	fl.BoolVarP(&o.ShowLID, "lid_show", "l", false, "show lid range only")
	fl.BoolVarP(&o.Decimal, "Lid_show", "L", false, "show lid range (in decimal) only")
	return c
}

// ibaddrDoc is ibaddr's JSON: the GID and the LID range, each when shown.
type ibaddrDoc struct {
	GID      *rdma.GID `json:"gid,omitempty"`
	LIDEnd   *int      `json:"lidEnd,omitempty"`
	LIDStart *int      `json:"lidStart,omitempty"`
	Target   string    `json:"target"`
}

func ibaddrRun(o *ibaddrOptions) error {
	x, local, err := o.Common.Open()
	if err != nil {
		return err
	}
	var path mad.Path
	if o.Target != nil {
		if path, err = o.Target.Path(); err != nil {
			return err
		}
		if path, err = x.Resolve(o.Common.Context(), path); err != nil {
			return err
		}
	} else {
		path = mad.LIDPath(local.LID)
		if !mad.IsUnicastLID(local.LID) {
			path = mad.DRPath(0) // a port without a LID is still reachable by DR
		}
		o.Port = local.Number
	}
	q := madrpc.NewQuerier(x, path)
	ni, err := q.NodeInfo(o.Common.Context())
	if err != nil {
		return err
	}
	var pi mad.PortInfo
	if _, err := q.Get(o.Common.Context(), &pi, uint32(o.Port)); err != nil {
		return err
	}
	gid := rdma.NewGID(pi.GIDPrefix, ni.PortGUID)
	first, last := int(pi.LID), int(pi.LID)+(1<<pi.LMC)-1
	if o.Common.JSON {
		doc := ibaddrDoc{Target: path.String()}
		if o.ShowGID {
			doc.GID = &gid
		}
		if o.ShowLID {
			doc.LIDStart, doc.LIDEnd = &first, &last
		}
		return cmdutil.WriteJSONDocument(o.IO.Out, doc)
	}
	var b []byte
	if o.ShowGID {
		b = fmt.Appendf(b, "GID %s ", gid)
	}
	switch {
	case o.Decimal:
		b = fmt.Appendf(b, "LID start %d end %d", first, last)
	case o.ShowLID:
		b = fmt.Appendf(b, "LID start 0x%x end 0x%x", first, last)
	}
	b = append(b, '\n')
	_, err = o.IO.Out.Write(b)
	return err
}
