package cmd

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	register(Tool{
		Name:    "vendstat",
		Summary: "query Mellanox vendor attributes (general info, config space, counter groups)",
		New:     func(f *Factory) *cobra.Command { return newVendstatCmd(f, nil) },
	})
}

// Mellanox's vendor class (range 1, no OUI) and its attributes.
const (
	classMellanox             mad.Class  = 0x0a
	mlxGeneralInfo            mad.AttrID = 0x17
	mlxConfigSpaceAccess      mad.AttrID = 0x50
	mlxCounterGroupInfo       mad.AttrID = 0x90
	mlxConfigCounterGroup     mad.AttrID = 0x91
	mlxPortXmitWaitAddr                  = 0x10013c
	is3DeviceID                          = 47396 // InfiniScale III
	maxConfigSpaceRecords                = 18
	vendor1DataLen                       = mad.Size - mad.HeaderLen
	configSpaceRecordsOff                = 8
	configSpaceRecordLen                 = 12
	configSpaceAccessModifier            = 2 << 22
	attrClassPortInfo         mad.AttrID = 0x01
)

// extFWInfoDevices are the device ID ranges whose general info carries the
// extended firmware version (vendstat's ext_fw_info_device).
var extFWInfoDevices = [][2]uint16{
	{0x0245, 0x0245}, {0xc738, 0xc73b}, {0xcb20, 0xcb20}, {0xcf08, 0xcf08}, {0xd2f0, 0xd2f0},
	{0x01b3, 0x01b3}, {0x1003, 0x101b}, {0xa2d2, 0xa2d2}, {0x1b02, 0x1b02}, {0x1b50, 0x1b50},
	{0x1ba0, 0x1ba0}, {0x1bd0, 0x1bd5}, {0x1bf0, 0x1bf0}, {0x1b33, 0x1b33}, {0x1b73, 0x1b73},
	{0x1b40, 0x1b41}, {0x1b60, 0x1b61}, {0x1b83, 0x1b83}, {0x1b93, 0x1b94}, {0x1bb4, 0x1bb5},
	{0x1bc4, 0x1bc6},
}

func extFWInfo(dev uint16) bool {
	for _, r := range extFWInfoDevices {
		if r[0] <= dev && dev <= r[1] {
			return true
		}
	}
	return false
}

// csRecord is one config space record: an address, its data and a mask.
type csRecord struct{ Address, Data, Mask uint32 }

// vendstatOptions are vendstat's parsed flags and arguments.
type vendstatOptions struct {
	IO     IOStreams
	Common CommonOptions
	// Target is the port asked; nil means the local port.
	Target *endport.Target
	// Port is the port number the counter group operations name (the
	// local port's without a target).
	Port                  int
	GeneralInfo, XmitWait bool // -N, -w
	CounterGroupInfo      bool // -i
	ConfigGroups          bool // -c
	Group0, Group1        uint8
	Read, Write           []csRecord // -R, -W
	readArgs, writeArgs   []string
	groupsArg             string
	Open                  func() (*mad.Transactor, *rdma.Port, error)
	vendorCall            func(method mad.Method, attr mad.AttrID, mod uint32, data []byte) (*mad.Response, error)
	// plans are the Sets a --dry-run run did not send, until their lines
	// join the output where the Set's would be.
	plans *planScope
}

func newVendstatCmd(f *Factory, runF func(*vendstatOptions) error) *cobra.Command {
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
		Args: argsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.finish(c); err != nil {
				return err
			}
			if err := o.parse(args); err != nil {
				return err
			}
			o.Open = func() (*mad.Transactor, *rdma.Port, error) { return f.openTransactorAt(&o.Common) }
			if runF != nil {
				return runF(o)
			}
			return vendstatRun(o)
		},
	}
	addCommonFlags(c, &o.Common, flagsLocalPort|flagsMAD|flagsJSON|flagsTarget|flagsDryRun)
	fl := c.Flags()
	fl.BoolVarP(&o.GeneralInfo, "N", "N", false, "show IS3 or IS4 general information")
	fl.BoolVarP(&o.XmitWait, "w", "w", false, "show IS3 port xmit wait counters")
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
	parseRecord := func(flag, arg string, want int) (csRecord, error) {
		parts := strings.Split(arg, ",")
		if len(parts) < want || len(parts) > want+1 {
			return csRecord{}, usageErrorf("-%s %q: want %d or %d hex numbers separated by commas", flag, arg, want, want+1)
		}
		vals := []uint32{0, 0, 0xffffffff}
		idx := []int{0, 2}
		if flag == "W" {
			idx = []int{0, 1, 2}
		}
		for i, p := range parts {
			v, err := hex(p)
			if err != nil {
				return csRecord{}, usageErrorf("-%s %q: %q is not a hex number", flag, arg, p)
			}
			vals[idx[i]] = v
		}
		return csRecord{Address: vals[0], Data: vals[1], Mask: vals[2]}, nil
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
	if len(o.Read) > maxConfigSpaceRecords || len(o.Write) > maxConfigSpaceRecords {
		return usageErrorf("at most %d config space records at once", maxConfigSpaceRecords)
	}
	if o.groupsArg != "" {
		a, b, ok := strings.Cut(o.groupsArg, ",")
		g0, err0 := strconv.ParseUint(a, 10, 8)
		g1, err1 := strconv.ParseUint(b, 10, 8)
		if !ok || err0 != nil || err1 != nil {
			return usageErrorf("-c %q: want two counter group numbers: <num,num>", o.groupsArg)
		}
		o.ConfigGroups, o.Group0, o.Group1 = true, uint8(g0), uint8(g1)
	}
	if !o.GeneralInfo && !o.XmitWait && !o.CounterGroupInfo && !o.ConfigGroups && o.Read == nil && o.Write == nil {
		return usageErrorf("at least one of -N and -w must be specified (or -i, -c, -R, -W)")
	}
	if len(args) > 0 {
		t, err := o.Common.parseTarget(args[0])
		if err != nil {
			return err
		}
		o.Target = &t
	}
	return nil
}

func vendstatRun(o *vendstatOptions) error {
	x, local, err := o.Open()
	if err != nil {
		return err
	}
	defer x.Close()
	var p mad.Path
	if o.Target != nil {
		if p, err = gmpPath(*o.Target, "vendor MADs"); err != nil {
			return err
		}
		if p, err = x.Resolve(o.Common.context(), p); err != nil {
			return err
		}
	} else {
		p = mad.LIDPath(local.LID)
		o.Port = local.Number
	}
	ctx := o.Common.context()
	if o.Common.DryRun {
		ctx, o.plans = withPlanScope(ctx)
	}
	o.vendorCall = func(method mad.Method, attr mad.AttrID, mod uint32, data []byte) (*mad.Response, error) {
		return x.Do(ctx, &mad.Request{Path: p, Class: classMellanox, Method: method, AttrID: attr, AttrMod: mod, Data: data, Name: mlxAttrName(attr)})
	}
	out, err := vendstatDo(o)
	if o.Common.JSON {
		if err != nil {
			return err
		}
		lines := []string{}
		if len(out) > 0 {
			lines = strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		}
		doc := map[string]any{"target": p.String(), "lines": lines}
		o.Common.addDryRun(doc)
		return writeJSONDocument(o.IO.Out, doc)
	}
	if _, werr := o.IO.Out.Write(out); err == nil {
		err = werr
	}
	return err
}

func mlxAttrName(a mad.AttrID) string {
	switch a {
	case attrClassPortInfo:
		return "ClassPortInfo"
	case mlxGeneralInfo:
		return "GeneralInfo"
	case mlxConfigSpaceAccess:
		return "ConfigSpaceAccess"
	case mlxCounterGroupInfo:
		return "CounterGroupInfo"
	case mlxConfigCounterGroup:
		return "ConfigCounterGroup"
	}
	return ""
}

// vendstatDo runs the operations asked, returning what to print; text
// already produced is returned with an error.
func vendstatDo(o *vendstatOptions) ([]byte, error) {
	var b []byte
	if o.CounterGroupInfo {
		r, err := o.vendorCall(mad.MethodGet, mlxCounterGroupInfo, uint32(o.Port), nil)
		if err != nil {
			return b, withContext(err, "counter group info query")
		}
		data := r.Data()
		n := int(data[11])
		b = fmt.Appendf(b, "counter_group_info:\n%d counter groups\n", n)
		for i := 0; i < n && i < 2; i++ {
			b = fmt.Appendf(b, "group%d mask %#x\n", i, binary.BigEndian.Uint32(data[12+4*i:]))
		}
		return b, nil
	}
	if o.ConfigGroups {
		b = fmt.Appendf(b, "counter_groups_config: configuring group0 %d group1 %d\n", o.Group0, o.Group1)
		req := make([]byte, vendor1DataLen)
		req[15], req[19] = o.Group0, o.Group1
		if _, err := o.vendorCall(mad.MethodSet, mlxConfigCounterGroup, uint32(o.Port), req); err != nil {
			return b, withContext(err, "config counter group set")
		}
		b = append(b, o.Common.planLog.take(o.plans)...)
		// The read back goes out in a dry run too, as every read does;
		// vendstat prints nothing of it.
		if _, err := o.vendorCall(mad.MethodGet, mlxConfigCounterGroup, uint32(o.Port), nil); err != nil {
			return b, withContext(err, "config counter group query")
		}
		return b, nil
	}
	if o.Read != nil || o.Write != nil {
		for _, set := range []struct {
			method  mad.Method
			records []csRecord
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
	if _, err := o.vendorCall(mad.MethodGet, attrClassPortInfo, 0, nil); err != nil {
		return b, withContext(err, "classportinfo query")
	}
	r, err := o.vendorCall(mad.MethodGet, mlxGeneralInfo, 0, nil)
	if err != nil {
		return b, withContext(err, "generalinfo query")
	}
	gi := r.Data()
	devID := binary.BigEndian.Uint16(gi[10:])
	fw := [3]uint32{uint32(gi[41]), uint32(gi[42]), uint32(gi[43])}
	sw := [3]uint8{gi[77], gi[78], gi[79]}
	if extFWInfo(devID) {
		fw = [3]uint32{binary.BigEndian.Uint32(gi[76:]), binary.BigEndian.Uint32(gi[80:]), binary.BigEndian.Uint32(gi[84:])}
		sw = [3]uint8{gi[105], gi[106], gi[107]}
	}
	if o.GeneralInfo {
		psid := gi[56:72]
		if i := bytes.IndexByte(psid, 0); i >= 0 {
			psid = psid[:i]
		}
		b = fmt.Appendf(b, "hw_dev_rev:  0x%04x\n", binary.BigEndian.Uint16(gi[8:]))
		b = fmt.Appendf(b, "hw_dev_id:   0x%04x\n", devID)
		b = fmt.Appendf(b, "hw_uptime:   0x%08x\n", binary.BigEndian.Uint32(gi[36:]))
		b = fmt.Appendf(b, "fw_version:  %02d.%02d.%02d\n", fw[0], fw[1], fw[2])
		b = fmt.Appendf(b, "fw_build_id: 0x%04x\n", binary.BigEndian.Uint32(gi[44:]))
		b = fmt.Appendf(b, "fw_date:     %02x/%02x/%04x\n", gi[48], gi[49], binary.BigEndian.Uint16(gi[50:]))
		b = fmt.Appendf(b, "fw_psid:     '%s'\n", psid)
		b = fmt.Appendf(b, "fw_ini_ver:  %d\n", binary.BigEndian.Uint32(gi[72:]))
		b = fmt.Appendf(b, "sw_version:  %02d.%02d.%02d\n", sw[0], sw[1], sw[2])
	}
	if o.XmitWait {
		if devID != is3DeviceID {
			return b, fmt.Errorf("unsupported device ID 0x%x: -w reads InfiniScale III (0x%x) config space", devID, is3DeviceID)
		}
		// Ports 4-19, then 20-24 and 1-3, as the device lays them out.
		for _, q := range []struct{ first, n int }{{1, 16}, {17, 8}} {
			req := make([]byte, vendor1DataLen)
			for i := range q.n {
				binary.BigEndian.PutUint32(req[configSpaceRecordsOff+i*configSpaceRecordLen:], mlxPortXmitWaitAddr+uint32((q.first+i)<<12))
			}
			r, err := o.vendorCall(mad.MethodGet, mlxConfigSpaceAccess, configSpaceAccessModifier|uint32(q.n)<<16, req)
			if err != nil {
				return b, withContext(err, "reading PortXmitWait")
			}
			data := r.Data()
			for i := range q.n {
				v := binary.BigEndian.Uint32(data[configSpaceRecordsOff+i*configSpaceRecordLen+4:])
				if v == 0 {
					continue
				}
				port := i + 4
				if q.first == 17 {
					port = i + 21
					if i >= 4 {
						port = i - 3
					}
				}
				b = fmt.Appendf(b, "Port %d: PortXmitWait 0x%x\n", port, v)
			}
		}
	}
	return b, nil
}

// configSpace reads or writes config space records and prints what comes
// back, each record's data under its mask; for a write a dry run did not
// send, its plan instead.
func configSpace(o *vendstatOptions, b []byte, method mad.Method, records []csRecord) ([]byte, error) {
	req := make([]byte, vendor1DataLen)
	for i, r := range records {
		off := configSpaceRecordsOff + i*configSpaceRecordLen
		binary.BigEndian.PutUint32(req[off:], r.Address)
		binary.BigEndian.PutUint32(req[off+4:], r.Data)
		binary.BigEndian.PutUint32(req[off+8:], r.Mask)
	}
	r, err := o.vendorCall(method, mlxConfigSpaceAccess, configSpaceAccessModifier|uint32(len(records))<<16, req)
	if err != nil {
		what := "get"
		if method == mad.MethodSet {
			what = "set"
		}
		return b, withContext(err, "cannot %s config space records", what)
	}
	if r.DryRun {
		// The reply would be the records as written: none came.
		return append(b, o.Common.planLog.take(o.plans)...), nil
	}
	data := r.Data()
	for i := range records {
		off := configSpaceRecordsOff + i*configSpaceRecordLen
		addr := binary.BigEndian.Uint32(data[off:])
		v := binary.BigEndian.Uint32(data[off+4:]) & binary.BigEndian.Uint32(data[off+8:])
		b = fmt.Appendf(b, "Config space record at 0x%x: 0x%x\n", addr, v)
	}
	return b, nil
}
