package sa

import (
	"bytes"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "set_guid",
		Light:   true,
		Summary: "set an alias GUID of a port through the SA (python-rdma's)",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newSetGUIDCmd(f, nil) },
	})
}

// setGUIDOptions are set_guid's parsed flags and arguments.
type setGUIDOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	Target endport.Target
	// Slot is the entry of the port's GUID table (0 to 255).
	Slot int
	GUID rdma.GUID
}

func newSetGUIDCmd(f *cmdutil.Factory, runF func(*setGUIDOptions) error) *cobra.Command {
	o := &setGUIDOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "set_guid [options] <target> <slot> <guid>",
		Short: "set an alias GUID of a port through the SA (python-rdma's)",
		Long: `set_guid asks the SA to program an alias GUID on a port: a SubnAdmSet of the
port's GUIDInfoRecord with the GUID in entry <slot> of its GUID table (block
slot/8, entry slot%8) and only that entry selected, as python-rdma's
set_guid does; the SM then writes the port's GUIDInfo. It prints the
record the SA answers with, as saquery GUIDInfoRecord prints it. The SA
takes such a Set from a trusted requester: --smkey (default 1, opensm's
default SM_Key).`,
		Example: `  set_guid 4 1 0x0002c90300001234          # entry 1 of LID 4's GUID table
  set_guid --dry-run 4 1 0x0002c90300001234 # print the Set, send nothing`,
		Args: cmdutil.ArgsRange(3, 3),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			t, err := o.Common.ParseTarget(args[0])
			if err != nil {
				return err
			}
			o.Target = t
			slot, err := strconv.Atoi(args[1])
			if err != nil || slot < 0 || slot > mad.MaxGUIDSlot {
				return cmdutil.UsageErrorf("invalid slot %q: want 0 to %d", args[1], mad.MaxGUIDSlot)
			}
			o.Slot = slot
			if o.GUID, err = rdma.ParseGUID(args[2]); err != nil {
				return cmdutil.UsageErrorf("invalid GUID %q: %v", args[2], err)
			}
			if runF != nil {
				return runF(o)
			}
			return setGUIDRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsTarget|cmdutil.FlagsSA|cmdutil.FlagsDryRun)
	return c
}

func setGUIDRun(o *setGUIDOptions) error {
	if err := o.Common.CheckGMPTarget(o.Target, "the SA's records"); err != nil {
		return err
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	p, err := o.Common.GMPTarget(x, o.Target, "the SA's records")
	if err != nil {
		return err
	}
	rec, mask, err := mad.AliasGUIDRecord(p.LID, o.Slot, o.GUID)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	data, err := rec.MarshalBinary()
	if err != nil {
		return err
	}
	res, err := x.QuerySA(o.Common.Context(), &madrpc.SAQuery{Method: mad.MethodSet, AttrID: mad.AttrGUIDInfoRecord,
		Name: "GUIDInfoRecord", ComponentMask: mask, Record: data, SMKey: o.Common.SMKey})
	if err != nil {
		return err
	}
	if res.Response.DryRun || len(res.Records) == 0 {
		return nil
	}
	r := newGUIDInfoRecord(res.Records[0])
	if o.Common.JSON {
		return cmdutil.WriteJSONDocument(o.IO.Out, r)
	}
	var b bytes.Buffer
	r.writeText(&b, nil)
	_, err = o.IO.Out.Write(b.Bytes())
	return err
}
