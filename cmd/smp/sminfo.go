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
		Name:    "sminfo",
		Light:   true,
		Summary: "query (or set) the SMInfo of a subnet manager",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newSminfoCmd(f, nil) },
	})
}

// sminfoOptions are sminfo's parsed flags and arguments.
type sminfoOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	// Target is the SM's port; nil means the SM the local port knows.
	Target *endport.Target
	// Modifier, when not 0, makes sminfo send a Set (an SM control
	// request) with this attribute modifier instead of a Get.
	Modifier uint32
	// State, Priority and Activity are the values a Set carries (-s, -p,
	// -a); a Get carries them too, as infiniband-diags sends them.
	State, Priority int
	Activity        uint32
	// SMKey is --sminfo_smkey (python-rdma's): the SMInfo's SM_Key, in
	// the Get and the Set. infiniband-diags sends 0.
	SMKey       uint64
	stateArg    string
	priorityArg string
	activityArg string
	smKeyArg    string
}

func newSminfoCmd(f *cmdutil.Factory, runF func(*sminfoOptions) error) *cobra.Command {
	o := &sminfoOptions{IO: f.IO, State: 2}
	c := &cobra.Command{
		Use:   "sminfo [options] [<sm_lid|sm_dr_path> [modifier]]",
		Short: "query (or set) the SMInfo of a subnet manager",
		Long: `sminfo reads the SMInfo attribute of a subnet manager: its GUID, activity
count, priority and state. Without a target it asks the SM the local port
knows (its SM LID). A non-zero modifier sends a Set instead, carrying -s, -p
and -a (an SM control request: handover, acknowledge, ...); with --dry-run it
reads and prints the SMInfo as it is, then prints the Set instead of sending it.`,
		Example: `  sminfo            # the subnet's master SM
  sminfo 1          # the SM at LID 1
  sminfo -D 0,1     # the SM one hop away by direct route
  sminfo --dry-run 1 1   # the SM at LID 1, and the handover Set it would get`,
		Args: cmdutil.ArgsRange(0, 2),
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
			return sminfoRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsTarget|cmdutil.FlagsSA|cmdutil.FlagsDryRun|cmdutil.FlagsNoSMPortShort|cmdutil.FlagsMKey)
	fl := c.Flags()
	fl.StringVarP(&o.stateArg, "state", "s", "", "set SM state (0-3)")
	fl.StringVarP(&o.priorityArg, "priority", "p", "", "set SM priority (0-15)")
	fl.StringVarP(&o.activityArg, "activity", "a", "", "set activity count")
	fl.StringVar(&o.smKeyArg, "sminfo_smkey", "", "the SM_Key to send in the SMInfo, Get and Set (python-rdma's sminfo; default 0)")
	return c
}

// parse reads the flags' numbers and the arguments.
func (o *sminfoOptions) parse(args []string) error {
	for _, v := range []struct {
		name string
		arg  string
		max  uint64
		dst  func(uint64)
	}{
		{"state", o.stateArg, 3, func(n uint64) { o.State = int(n) }},
		{"priority", o.priorityArg, 15, func(n uint64) { o.Priority = int(n) }},
		{"activity", o.activityArg, 0xffffffff, func(n uint64) { o.Activity = uint32(n) }},
		{"sminfo_smkey", o.smKeyArg, 1<<64 - 1, func(n uint64) { o.SMKey = n }},
	} {
		if v.arg == "" {
			continue
		}
		n, err := cmdutil.ParseUintArg(v.arg, v.max)
		if err != nil {
			return cmdutil.UsageErrorf("invalid %s %q: %v", v.name, v.arg, err)
		}
		v.dst(n)
	}
	if len(args) > 0 {
		t, err := o.Common.ParseTarget(args[0])
		if err != nil {
			return err
		}
		o.Target = &t
	}
	if len(args) > 1 {
		n, err := cmdutil.ParseUintArg(args[1], 0xffffffff)
		if err != nil {
			return cmdutil.UsageErrorf("invalid modifier %q: %v", args[1], err)
		}
		o.Modifier = uint32(n)
	}
	return nil
}

func sminfoRun(o *sminfoOptions) error {
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
		if !mad.IsUnicastLID(local.SMLID) {
			return fmt.Errorf("the local port %d knows no SM (SM LID %d); give the SM's LID or DR path", local.Number, local.SMLID)
		}
		path = mad.LIDPath(local.SMLID)
	}
	q := madrpc.NewQuerier(x, path)
	ctx := o.Common.Context()
	// A Get carries the values of a Set too, as infiniband-diags sends
	// them; the reply replaces them.
	req := mad.SMInfo{SMKey: o.SMKey, ActCount: o.Activity, Priority: uint8(o.Priority), SMState: uint8(o.State)}
	si := req
	// A dry run of a Set reads the SMInfo as it is, shows it, and then
	// plans the Set: the Set's reply, which sminfo prints, never comes.
	planSet := o.Modifier != 0 && o.Common.DryRun
	if o.Modifier != 0 && !planSet {
		_, err = q.Set(ctx, &si, o.Modifier, nil)
	} else {
		_, err = q.Get(ctx, &si, 0)
	}
	if err != nil {
		return err
	}
	lid := int(path.LID) // infiniband-diags prints 0 for a directed route
	if path.IsDR() {
		lid = 0
	}
	if !o.Common.JSON {
		if _, err := fmt.Fprintf(o.IO.Out, "sminfo: sm lid %d sm guid 0x%x, activity count %d priority %d state %d %s\n",
			lid, uint64(si.GUID), si.ActCount, si.Priority, si.SMState, mad.SMState(si.SMState).String()); err != nil {
			return err
		}
	}
	if planSet {
		if _, err := q.Set(ctx, &req, o.Modifier, nil); err != nil {
			return err
		}
	}
	if !o.Common.JSON {
		return nil
	}
	return cmdutil.WriteJSONDocument(o.IO.Out, sminfoDoc{
		ActCount: si.ActCount, DryRun: smpDryRunPlans(&o.Common), GUID: si.GUID, Priority: si.Priority,
		SMLID: lid, SMState: si.SMState, SMStateName: mad.SMState(si.SMState).String(), Target: path.String(),
	})
}

// sminfoDoc is sminfo's JSON: the SMInfo read, and under --dry-run the
// Set planned.
type sminfoDoc struct {
	ActCount    uint32          `json:"actCount"`
	DryRun      *[]*madrpc.Plan `json:"dryRun,omitempty"`
	GUID        rdma.GUID       `json:"guid"`
	Priority    uint8           `json:"priority"`
	SMLID       int             `json:"smLid"`
	SMState     uint8           `json:"smState"`
	SMStateName string          `json:"smStateName"`
	Target      string          `json:"target"`
}

// smpDryRunPlans returns the run's plans for a JSON document's "dryRun":
// nil, which leaves the key out, without --dry-run; a list, maybe empty,
// with it.
func smpDryRunPlans(o *cmdutil.CommonOptions) *[]*madrpc.Plan {
	plans := o.DryRunPlans()
	if plans == nil {
		return nil
	}
	return &plans
}
