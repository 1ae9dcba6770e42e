package vs

import (
	"context"
	"fmt"
	"strconv"
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
		Name:    "vendstat",
		Light:   true,
		Summary: "query Mellanox vendor attributes (general info, config space, counter groups)",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newVendstatCmd(f, nil) },
	})
}

// vendstatOptions are vendstat's parsed flags and arguments.
type vendstatOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	// Target is the port asked; nil means the local port.
	Target *endport.Target
	// Port is the port number the counter group operations name (the
	// local port's without a target).
	Port                  int
	GeneralInfo, XmitWait bool // -N, -w
	// ClassPortInfo is --cpi (python-rdma's): print the vendor class's
	// ClassPortInfo.
	ClassPortInfo       bool
	CounterGroupInfo    bool // -i
	ConfigGroups        bool // -c
	Group0, Group1      uint8
	Read, Write         []mad.ConfigSpaceRecord // -R, -W
	readArgs, writeArgs []string
	groupsArg           string
	// q sends the vendor MADs to the port asked, under ctx.
	q   *madrpc.Querier
	ctx context.Context
	// plans are the Sets a --dry-run run did not send, until their lines
	// join the output where the Set's would be.
	plans *cmdutil.PlanScope
}

func newVendstatCmd(f *cmdutil.Factory, runF func(*vendstatOptions) error) *cobra.Command {
	o := &vendstatOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "vendstat [options] [<lid|guid>]",
		Short: "query Mellanox vendor attributes (general info, config space, counter groups)",
		Long: `vendstat sends Mellanox vendor-class (0x0A) MADs to a port, as
infiniband-diags' vendstat does: -N prints the device's general information
(hardware revision and ID, firmware and software versions), -w the
PortXmitWait counters of an InfiniScale III switch, -i the counter group
info, -c configures the counter groups, -R and -W read and write config
space records. With --dry-run, -c and -W print the Set they would send
and send none.`,
		Example: `  vendstat -N 6           # general information of LID 6
  vendstat -w 6           # InfiniScale III PortXmitWait counters
  vendstat -R 0x10013c 6  # one config space record
  vendstat --dry-run -W 0x10013c,0x5 6  # the Set -W would send, not sent`,
		Args: cmdutil.ArgsRange(0, 1),
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
			return vendstatRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsTarget|cmdutil.FlagsDryRun|cmdutil.FlagsSA)
	fl := c.Flags()
	fl.BoolVarP(&o.GeneralInfo, "N", "N", false, "show IS3 or IS4 general information")
	fl.BoolVarP(&o.XmitWait, "w", "w", false, "show IS3 port xmit wait counters")
	fl.BoolVar(&o.ClassPortInfo, "cpi", false, "show the Mellanox vendor class's ClassPortInfo (python-rdma's)")
	fl.BoolVarP(&o.CounterGroupInfo, "i", "i", false, "show IS4 counter group info")
	fl.StringVarP(&o.groupsArg, "c", "c", "", "configure IS4 counter groups: <num,num>")
	fl.StringArrayVarP(&o.readArgs, "Read", "R", nil, "read configuration space record at addr: <addr,mask>")
	fl.StringArrayVarP(&o.writeArgs, "Write", "W", nil, "write configuration space record at addr: <addr,val,mask>")
	return c
}

// parse reads the record arguments and the target.
func (o *vendstatOptions) parse(args []string) error {
	hex := func(s string) (uint32, error) {
		s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
		v, err := strconv.ParseUint(s, 16, 32)
		return uint32(v), err
	}
	parseRecord := func(flag, arg string, want int) (mad.ConfigSpaceRecord, error) {
		parts := strings.Split(arg, ",")
		if len(parts) < want || len(parts) > want+1 {
			return mad.ConfigSpaceRecord{}, cmdutil.UsageErrorf("-%s %q: want %d or %d hex numbers separated by commas", flag, arg, want, want+1)
		}
		vals := []uint32{0, 0, 0xffffffff}
		idx := []int{0, 2}
		if flag == "W" {
			idx = []int{0, 1, 2}
		}
		for i, p := range parts {
			v, err := hex(p)
			if err != nil {
				return mad.ConfigSpaceRecord{}, cmdutil.UsageErrorf("-%s %q: %q is not a hex number", flag, arg, p)
			}
			vals[idx[i]] = v
		}
		return mad.ConfigSpaceRecord{Address: vals[0], Data: vals[1], Mask: vals[2]}, nil
	}
	for _, a := range o.readArgs {
		r, err := parseRecord("R", a, 1)
		if err != nil {
			return err
		}
		o.Read = append(o.Read, r)
	}
	for _, a := range o.writeArgs {
		r, err := parseRecord("W", a, 2)
		if err != nil {
			return err
		}
		o.Write = append(o.Write, r)
	}
	if len(o.Read) > mad.MaxConfigSpaceRecords || len(o.Write) > mad.MaxConfigSpaceRecords {
		return cmdutil.UsageErrorf("at most %d config space records at once", mad.MaxConfigSpaceRecords)
	}
	if o.groupsArg != "" {
		a, b, ok := strings.Cut(o.groupsArg, ",")
		g0, err0 := strconv.ParseUint(a, 10, 8)
		g1, err1 := strconv.ParseUint(b, 10, 8)
		if !ok || err0 != nil || err1 != nil {
			return cmdutil.UsageErrorf("-c %q: want two counter group numbers: <num,num>", o.groupsArg)
		}
		o.ConfigGroups, o.Group0, o.Group1 = true, uint8(g0), uint8(g1)
	}
	if !o.GeneralInfo && !o.XmitWait && !o.ClassPortInfo && !o.CounterGroupInfo && !o.ConfigGroups && o.Read == nil && o.Write == nil {
		return cmdutil.UsageErrorf("at least one of -N and -w must be specified (or -i, -c, -R, -W, --cpi)")
	}
	if len(args) > 0 {
		t, err := o.Common.ParseTarget(args[0])
		if err != nil {
			return err
		}
		o.Target = &t
	}
	return nil
}

func vendstatRun(o *vendstatOptions) error {
	x, local, err := o.Common.Open()
	if err != nil {
		return err
	}
	var p mad.Path
	if o.Target != nil {
		if p, err = o.Common.GMPTarget(x, *o.Target, "vendor MADs"); err != nil {
			return err
		}
	} else {
		p = mad.LIDPath(local.LID)
		o.Port = local.Number
	}
	ctx := o.Common.Context()
	if o.Common.DryRun {
		ctx, o.plans = cmdutil.WithPlanScope(ctx)
	}
	o.q, o.ctx = &madrpc.Querier{X: x, Path: p, Class: mad.ClassMellanox}, ctx
	out, err := vendstatDo(o)
	if o.Common.JSON {
		if err != nil {
			return err
		}
		doc := vendstatDoc{Lines: []string{}, Target: p.String()}
		if len(out) > 0 {
			doc.Lines = strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		}
		if plans := o.Common.DryRunPlans(); plans != nil {
			doc.DryRun = &plans
		}
		return cmdutil.WriteJSONDocument(o.IO.Out, doc)
	}
	if _, werr := o.IO.Out.Write(out); err == nil {
		err = werr
	}
	return err
}

// vendstatDoc is vendstat's --json document: the lines it prints.
type vendstatDoc struct {
	// DryRun is set under --dry-run, an empty list when nothing was
	// planned.
	DryRun *[]*madrpc.Plan `json:"dryRun,omitempty"`
	Lines  []string        `json:"lines"`
	Target string          `json:"target"`
}

// vendstatDo runs the operations asked, returning what to print; text
// already produced is returned with an error.
func vendstatDo(o *vendstatOptions) ([]byte, error) {
	var b []byte
	if o.CounterGroupInfo {
		var ci mad.CounterGroupInfo
		if _, err := o.q.Get(o.ctx, &ci, uint32(o.Port)); err != nil {
			return b, cmdutil.WithContext(err, "counter group info query")
		}
		b = fmt.Appendf(b, "counter_group_info:\n%d counter groups\n", ci.NumGroups)
		for i := range min(int(ci.NumGroups), len(ci.GroupMasks)) {
			b = fmt.Appendf(b, "group%d mask %#x\n", i, ci.GroupMasks[i].Mask)
		}
		return b, nil
	}
	if o.ConfigGroups {
		b = fmt.Appendf(b, "counter_groups_config: configuring group0 %d group1 %d\n", o.Group0, o.Group1)
		set := mad.ConfigCounterGroup{Group0Select: o.Group0, Group1Select: o.Group1}
		if _, err := o.q.Set(o.ctx, &set, uint32(o.Port), nil); err != nil {
			return b, cmdutil.WithContext(err, "config counter group set")
		}
		b = append(b, o.Common.PlanLog.Take(o.plans)...)
		// The read back goes out in a dry run too, as every read does;
		// vendstat prints nothing of it.
		if _, err := o.q.Get(o.ctx, &mad.ConfigCounterGroup{}, uint32(o.Port)); err != nil {
			return b, cmdutil.WithContext(err, "config counter group query")
		}
		return b, nil
	}
	if o.Read != nil || o.Write != nil {
		for _, set := range []struct {
			method  mad.Method
			records []mad.ConfigSpaceRecord
		}{{mad.MethodGet, o.Read}, {mad.MethodSet, o.Write}} {
			if set.records == nil {
				continue
			}
			var err error
			if b, err = configSpace(o, b, set.method, set.records); err != nil {
				return b, err
			}
		}
		return b, nil
	}
	var cpi mad.ClassPortInfo
	cpiData, err := o.q.Get(o.ctx, &cpi, 0)
	if err != nil {
		return b, cmdutil.WithContext(err, "classportinfo query")
	}
	if o.ClassPortInfo {
		b = madtext.AppendDump(b, cpi.Layout(), cpiData)
		if !o.GeneralInfo && !o.XmitWait {
			return b, nil
		}
	}
	var gi mad.GeneralInfo
	data, err := o.q.Get(o.ctx, &gi, 0)
	if err != nil {
		return b, cmdutil.WithContext(err, "generalinfo query")
	}
	fw, sw, err := gi.Versions(data)
	if err != nil {
		return b, cmdutil.WithContext(err, "generalinfo query")
	}
	if o.GeneralInfo {
		b = fmt.Appendf(b, "hw_dev_rev:  0x%04x\n", gi.HWRevision)
		b = fmt.Appendf(b, "hw_dev_id:   0x%04x\n", gi.DeviceID)
		b = fmt.Appendf(b, "hw_uptime:   0x%08x\n", gi.Uptime)
		b = fmt.Appendf(b, "fw_version:  %02d.%02d.%02d\n", fw[0], fw[1], fw[2])
		b = fmt.Appendf(b, "fw_build_id: 0x%04x\n", gi.FWBuildID)
		b = fmt.Appendf(b, "fw_date:     %02x/%02x/%04x\n", gi.FWMonth, gi.FWDay, gi.FWYear)
		b = fmt.Appendf(b, "fw_psid:     '%s'\n", gi.PSID)
		b = fmt.Appendf(b, "fw_ini_ver:  %d\n", gi.INIFileVersion)
		b = fmt.Appendf(b, "sw_version:  %02d.%02d.%02d\n", sw[0], sw[1], sw[2])
	}
	if o.XmitWait {
		if gi.DeviceID != mad.IS3DeviceID {
			return b, fmt.Errorf("unsupported device ID 0x%x: -w reads InfiniScale III (0x%x) config space", gi.DeviceID, mad.IS3DeviceID)
		}
		// Ports 4-19, then 20-24 and 1-3, as the device lays them out.
		for _, q := range []struct{ first, n int }{{1, 16}, {17, 8}} {
			var cs mad.ConfigSpaceAccess
			for i := range q.n {
				cs.Records[i].Address = mad.IS3PortXmitWaitAddr + uint32((q.first+i)<<12)
			}
			if _, err := o.q.Get(o.ctx, &cs, mad.ConfigSpaceAccessMod(q.n)); err != nil {
				return b, cmdutil.WithContext(err, "reading PortXmitWait")
			}
			for i, r := range cs.Records[:q.n] {
				if r.Data == 0 {
					continue
				}
				port := i + 4
				if q.first == 17 {
					port = i + 21
					if i >= 4 {
						port = i - 3
					}
				}
				b = fmt.Appendf(b, "Port %d: PortXmitWait 0x%x\n", port, r.Data)
			}
		}
	}
	return b, nil
}

// configSpace reads or writes config space records and prints what comes
// back, each record's data under its mask; for a write a dry run did not
// send, its plan instead.
func configSpace(o *vendstatOptions, b []byte, method mad.Method, records []mad.ConfigSpaceRecord) ([]byte, error) {
	var cs mad.ConfigSpaceAccess
	copy(cs.Records[:], records)
	var err error
	if method == mad.MethodSet {
		_, err = o.q.Set(o.ctx, &cs, mad.ConfigSpaceAccessMod(len(records)), nil)
	} else {
		_, err = o.q.Get(o.ctx, &cs, mad.ConfigSpaceAccessMod(len(records)))
	}
	if err != nil {
		what := "get"
		if method == mad.MethodSet {
			what = "set"
		}
		return b, cmdutil.WithContext(err, "cannot %s config space records", what)
	}
	if method == mad.MethodSet && o.Common.DryRun {
		// The reply would be the records as written: none came.
		return append(b, o.Common.PlanLog.Take(o.plans)...), nil
	}
	for _, r := range cs.Records[:len(records)] {
		b = fmt.Appendf(b, "Config space record at 0x%x: 0x%x\n", r.Address, r.Data&r.Mask)
	}
	return b, nil
}
