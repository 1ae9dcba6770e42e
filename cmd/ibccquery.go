package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
)

func init() {
	register(Tool{
		Name:    "ibccquery",
		Summary: "query congestion control attributes of a port",
		New:     func(f *Factory) *cobra.Command { return newIbccqueryCmd(f, nil) },
	})
}

// ccOp is one operation of ibccquery, as infiniband-diags' match_tbl lists
// them.
type ccOp struct {
	Name, Alias string
	PortArg     bool
	run         func(q *ccQuerier, o *ibccqueryOptions) ([]byte, any, error)
}

var ccOps = []ccOp{
	{"ClassPortInfo", "CP", false, ccSimple("ClassPortInfo", "ClassPortInfo", "class port info")},
	{"CongestionInfo", "CI", false, ccSimple("CongestionInfo", "CongestionInfo", "congestion info")},
	{"CongestionKeyInfo", "CK", false, ccSimple("CongestionKeyInfo", "CongestionKeyInfo", "congestion key info")},
	{"CongestionLog", "CL", false, ccCongestionLog},
	{"SwitchCongestionSetting", "SS", false, ccSimple("SwitchCongestionSetting", "SwitchCongestionSetting", "switch congestion setting")},
	{"SwitchPortCongestionSetting", "SP", true, ccSwitchPortSetting},
	{"CACongestionSetting", "CS", false, ccCASetting},
	{"CongestionControlTable", "CT", false, ccControlTable},
	{"Timestamp", "TI", false, ccSimple("Timestamp", "Timestamp", "timestamp")},
}

// ibccqueryOptions are ibccquery's parsed flags and arguments.
type ibccqueryOptions struct {
	IO         IOStreams
	Common     CommonOptions
	Op         *ccOp
	Target     endport.Target
	Port       int
	CCKey      uint64
	ccKeyArg   string
	Transactor func() (*mad.Transactor, error)
}

func newIbccqueryCmd(f *Factory, runF func(*ibccqueryOptions) error) *cobra.Command {
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
		Args: argsRange(2, 3),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.finish(c); err != nil {
				return err
			}
			if err := o.parse(args); err != nil {
				return err
			}
			o.Transactor = func() (*mad.Transactor, error) { return f.openTransactor(&o.Common) }
			if runF != nil {
				return runF(o)
			}
			return ibccqueryRun(o)
		},
	}
	addCommonFlags(c, &o.Common, flagsLocalPort|flagsMAD|flagsJSON)
	fl := c.Flags()
	addTargetFlags(c, &o.Common, "LG")
	fl.StringVarP(&o.ccKeyArg, "cckey", "c", "", "CC key")
	return c
}

// parseCCKey parses a -c CC_Key: any 64-bit value, decimal or 0x hex;
// "" is 0.
func parseCCKey(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	k, err := parseUintArg(s, ^uint64(0))
	if err != nil {
		return 0, usageErrorf("invalid CC key %q: %v", s, err)
	}
	return k, nil
}

func (o *ibccqueryOptions) parse(args []string) error {
	for i := range ccOps {
		if strings.EqualFold(args[0], ccOps[i].Name) || strings.EqualFold(args[0], ccOps[i].Alias) {
			o.Op = &ccOps[i]
		}
	}
	if o.Op == nil {
		return usageErrorf("operation '%s' not supported", args[0])
	}
	var err error
	if o.CCKey, err = parseCCKey(o.ccKeyArg); err != nil {
		return err
	}
	t, err := o.Common.parseTarget(args[1])
	if err != nil {
		return err
	}
	o.Target = t
	if len(args) > 2 {
		if !o.Op.PortArg {
			return &UsageError{Err: fmt.Errorf("operation %s takes no port number: %q", o.Op.Name, args[2]), Syntax: true}
		}
		n, err := parsePortArg(args[2])
		if err != nil {
			return err
		}
		o.Port = n
	}
	return nil
}

// ccQuerier sends CC class Gets to one LID.
type ccQuerier struct {
	smp *smpQuerier
	key uint64
}

// attrSwitchPortCongestionSetting is the attribute whose blocks hold 48
// SwitchPortCongestionSettingElements.
const attrSwitchPortCongestionSetting mad.AttrID = 0x0015

// get reads a CC attribute and returns its data.
func (q *ccQuerier) get(attr string, mod uint32) ([]byte, error) {
	l := mad.LayoutByName(attr)
	id, name := l.ID, l.Name
	if attr == "SwitchPortCongestionSettingElement" {
		id, name = attrSwitchPortCongestionSetting, "SwitchPortCongestionSetting"
	}
	r := &mad.Request{Path: q.smp.path, Class: mad.ClassCC, Method: mad.MethodGet, AttrID: id, AttrMod: mod, Name: name, MKey: q.key}
	if id == mad.AttrCongestionLogSwitch {
		r.Name = "CongestionLog"
		r.DataOffset = 32 // CongestionLog's data starts right after the CC_Key
	}
	resp, err := q.smp.x.Do(q.smp.ctx, r)
	if err != nil {
		return nil, err
	}
	return resp.Data(), nil
}

func ibccqueryRun(o *ibccqueryOptions) error {
	p, err := gmpPath(o.Target, "congestion control MADs")
	if err != nil {
		return err
	}
	x, err := o.Transactor()
	if err != nil {
		return err
	}
	defer x.Close()
	if p, err = x.Resolve(o.Common.context(), p); err != nil {
		return err
	}
	q := &ccQuerier{smp: &smpQuerier{ctx: o.Common.context(), x: x, path: p}, key: o.CCKey}
	out, doc, err := o.Op.run(q, o)
	if err != nil {
		return withContext(err, "operation %s", o.Op.Name)
	}
	if o.Common.JSON {
		return writeJSONDocument(o.IO.Out, map[string]any{"target": p.String(), "operation": o.Op.Name, "result": doc})
	}
	_, err = o.IO.Out.Write(out)
	return err
}

// ccSimple reads one attribute and dumps it under "# Title: target".
func ccSimple(attr, title, what string) func(q *ccQuerier, o *ibccqueryOptions) ([]byte, any, error) {
	return func(q *ccQuerier, o *ibccqueryOptions) ([]byte, any, error) {
		data, err := q.get(attr, 0)
		if err != nil {
			return nil, nil, withContext(err, "%s query failed", what)
		}
		b := fmt.Appendf(nil, "# %s: %s\n", title, q.smp.path)
		l := mad.LayoutByName(attr)
		return l.AppendDump(b, data), l.Decode(data), nil
	}
}

// Congestion log types (IBA A10.4.3.5).
const (
	ccLogSwitch = 1
	ccLogCA     = 2
)

func ccCongestionLog(q *ccQuerier, o *ibccqueryOptions) ([]byte, any, error) {
	data, err := q.get("CongestionLogSwitch", 0)
	if err != nil {
		return nil, nil, withContext(err, "congestion log query failed")
	}
	sw := mad.LayoutByName("CongestionLogSwitch")
	logType, _ := sw.Field("LogType")
	t := logType.Value(data)
	if t != ccLogSwitch && t != ccLogCA {
		return nil, nil, fmt.Errorf("unrecognized log type %d", t)
	}
	b := fmt.Appendf(nil, "# CongestionLog: %s\n", q.smp.path)
	b = mad.AppendFields(b, sw.Fields[:2], data) // LogType, CongestionFlags
	events, size, count, first := "CongestionLogEventSwitch", 12, 15, 40
	head := sw
	if t == ccLogCA {
		head = mad.LayoutByName("CongestionLogCA")
		events, size, count, first = "CongestionLogEventCA", 16, 13, 12
	}
	b = mad.AppendFields(b, head.Fields[2:], data)
	b = append(b, '\n')
	ev := mad.LayoutByName(events)
	empty := make([]byte, size)
	list := []mad.Attribute{}
	for i := range count {
		e := data[first+i*size : first+(i+1)*size]
		if !bytes.Equal(e, empty) {
			b = ev.AppendDump(b, e)
			b = append(b, '\n')
			list = append(list, ev.Decode(e))
		}
	}
	return b, map[string]any{"log": head.Decode(data), "events": list}, nil
}

// ccPortsPerBlock is how many SwitchPortCongestionSetting elements one MAD
// holds.
const ccPortsPerBlock = 48

func ccSwitchPortSetting(q *ccQuerier, o *ibccqueryOptions) ([]byte, any, error) {
	ni, _, err := q.smp.nodeInfo()
	if err != nil {
		return nil, nil, withContext(err, "node info query failed")
	}
	if ni.NodeType != mad.NodeTypeSwitch {
		return nil, nil, errors.New("destination not a switch")
	}
	el := mad.LayoutByName("SwitchPortCongestionSettingElement")
	b := fmt.Appendf(nil, "# SwitchPortCongestionSetting: %s\n", q.smp.path)
	nports := int(ni.NumPorts)
	if o.Port != 0 {
		if o.Port > nports {
			return nil, nil, fmt.Errorf("invalid port number %d: the switch has %d ports", o.Port, nports)
		}
		data, err := q.get(el.Name, uint32(o.Port/ccPortsPerBlock))
		if err != nil {
			return nil, nil, withContext(err, "switch port congestion setting query failed")
		}
		off := o.Port % ccPortsPerBlock * 4
		return el.AppendDump(b, data[off:off+4]), map[string]any{"port": o.Port, "setting": el.Decode(data[off : off+4])}, nil
	}
	type portSetting struct {
		Port    int           `json:"port"`
		Setting mad.Attribute `json:"setting"`
	}
	var list []portSetting
	shown := 0
	for block := 0; block < nports/ccPortsPerBlock+1; block++ {
		data, err := q.get(el.Name, uint32(block))
		if err != nil {
			return nil, nil, withContext(err, "switch port congestion setting query failed")
		}
		for j := 0; j < ccPortsPerBlock && shown <= nports; j++ {
			b = fmt.Appendf(b, "Port:............................%d\n", block*ccPortsPerBlock+j)
			b = el.AppendDump(b, data[j*4:j*4+4])
			b = append(b, '\n')
			list = append(list, portSetting{block*ccPortsPerBlock + j, el.Decode(data[j*4 : j*4+4])})
			shown++
		}
	}
	return b, list, nil
}

func ccCASetting(q *ccQuerier, o *ibccqueryOptions) ([]byte, any, error) {
	data, err := q.get("CACongestionSetting", 0)
	if err != nil {
		return nil, nil, withContext(err, "ca congestion setting query failed")
	}
	b := fmt.Appendf(nil, "# CACongestionSetting: %s\n", q.smp.path)
	b = mad.LayoutByName("CACongestionSetting").AppendDump(b, data)
	b = append(b, '\n')
	entry := mad.LayoutByName("CACongestionEntry")
	var entries []mad.Attribute
	for sl := range 16 {
		b = fmt.Appendf(b, "SL:..............................%d\n", sl)
		b = entry.AppendDump(b, data[4+sl*8:4+sl*8+8])
		b = append(b, '\n')
		entries = append(entries, entry.Decode(data[4+sl*8:4+sl*8+8]))
	}
	return b, map[string]any{"setting": mad.LayoutByName("CACongestionSetting").Decode(data), "entries": entries}, nil
}

// ccEntriesPerBlock is how many CongestionControlTable entries one MAD
// holds.
const ccEntriesPerBlock = 64

func ccControlTable(q *ccQuerier, o *ibccqueryOptions) ([]byte, any, error) {
	data, err := q.get("CongestionControlTable", 0)
	if err != nil {
		return nil, nil, withContext(err, "congestion control table query failed")
	}
	cct := mad.LayoutByName("CongestionControlTable")
	f, _ := cct.Field("CCTILimit")
	limit := int(f.Value(data))
	b := fmt.Appendf(nil, "# CongestionControlTable: %s\n", q.smp.path)
	b = cct.AppendDump(b, data)
	b = append(b, '\n')
	doc := map[string]any{"cctiLimit": limit, "entries": []mad.Attribute{}}
	if limit == 0 {
		return b, doc, nil
	}
	entry := mad.LayoutByName("CongestionControlTableEntry")
	var entries []mad.Attribute
	shown := 0
	for block := 0; block < limit/ccEntriesPerBlock+1; block++ {
		if block > 0 {
			if data, err = q.get(cct.Name, uint32(block)); err != nil {
				return nil, nil, withContext(err, "congestion control table query failed")
			}
		}
		for j := 0; j < ccEntriesPerBlock && shown <= limit; j++ {
			b = fmt.Appendf(b, "Entry:...........................%d\n", block*ccEntriesPerBlock+j)
			b = entry.AppendDump(b, data[4+j*2:4+j*2+2])
			b = append(b, '\n')
			entries = append(entries, entry.Decode(data[4+j*2:4+j*2+2]))
			shown++
		}
	}
	doc["entries"] = entries
	return b, doc, nil
}
