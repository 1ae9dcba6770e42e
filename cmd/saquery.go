package cmd

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	register(Tool{
		Name:    "saquery",
		Summary: "query the subnet administrator's records",
		New:     func(f *Factory) *cobra.Command { return newSaqueryCmd(f, nil) },
	})
}

// saCommand is what saquery does besides querying one record type.
type saCommand int

const (
	saCmdQuery       saCommand = iota // a record type, NodeRecord by default
	saCmdNodeRecords                  // -N, -D, -L, -l, -G, -O, -U
	saCmdClassPort                    // -c
	saCmdIsSM                         // -s
	saCmdMCGroups                     // -g
	saCmdMCMembers                    // -m
)

// saNodePrint is how -N and its relatives print NodeRecords.
type saNodePrint int

const (
	saPrintAll        saNodePrint = iota // every record, whole
	saPrintLIDs                          // -L: the LIDs of the name
	saPrintUniqueLID                     // -l: the first LID of the name
	saPrintGUIDs                         // -G: the port GUIDs of the name
	saPrintCADescs                       // -D: the CAs' LIDs and descriptions
	saPrintNameOfLID                     // -O: the name of a LID
	saPrintNameOfGUID                    // -U: the name of a port GUID
)

// saParams are the record fields the options give (query_params): -1
// where infiniband-diags starts a field at -1, 0 otherwise; a field
// selects when it differs from its start.
type saParams struct {
	serviceID                         uint64
	sgid, dgid, gid, mgid             rdma.GID
	slid, dlid, mlid                  uint64
	flowLabel                         uint64
	hopLimit                          int64
	tclass                            uint64
	reversible, numbPath              int64
	pkey                              uint64
	qosClass, sl                      int64
	mtu, rate, pktLife                uint64
	qkey                              uint64
	scope, joinState                  uint64
	proxyJoin                         int64
	srcToDst, sgidToDgid, smkeyArg    string
	mtuArg, rateArg, pktLifeArg       string
	numbArg, revArg, qosArg, slArg    string
	hopArg, flowArg, tclassArg        string
	pkeyArg, qkeyArg, scopeArg        string
	joinArg, proxyArg, serviceIDArg   string
	slidArg, dlidArg, mlidArg         string
	sgidArg, dgidArg, gidArg, mgidArg string
}

// saqueryOptions are saquery's parsed flags and arguments.
type saqueryOptions struct {
	IO     IOStreams
	Common CommonOptions
	// Query is the record type to query when Command is saCmdQuery.
	Query   *saQueryType
	Command saCommand
	Print   saNodePrint
	// Name is the argument after the record type: a node name, a LID, a
	// LID/port spec; RequestedLID and RequestedGUID are -O's and -U's.
	Name          string
	RequestedLID  uint16
	RequestedGUID uint64
	Args          []string // the record type's arguments
	// Assigns are python-rdma's trailing MEMBER=VALUE arguments: more
	// fields of the record to select by ("nodeInfo.portGUID=0x...").
	Assigns []string
	// assigned is the template and mask Assigns make, over which the
	// record type's own selectors are laid.
	assigned     []byte
	assignedMask uint64
	ShowKeys     bool
	SMKey        uint64
	p            saParams
	flags        struct{ p, N, L, l, G, O, U, s, g, m, x, c, S, I, D bool }
	Open         func() (*mad.Transactor, *rdma.Port, error)
}

// saQueryType is one record type saquery queries by name.
type saQueryType struct {
	name, alias string
	attr        mad.AttrID
	usage       string
	run         func(q *saQuerier, args []string) error
}

// saQueryTypes are saquery's record types, in its usage's order.
var saQueryTypes = []*saQueryType{
	{"ClassPortInfo", "CPI", saAttrClassPortInfo, "", (*saQuerier).classPortInfo},
	{"NodeRecord", "NR", saAttrNodeRecord, "[lid]", (*saQuerier).nodeRecords},
	{"PortInfoRecord", "PIR", saAttrPortInfoRecord, "[[lid]/[port]/[options]]", (*saQuerier).portInfoRecords},
	{"SL2VLTableRecord", "SL2VL", saAttrSL2VLRecord, "[[lid]/[in_port]/[out_port]]", (*saQuerier).sl2vlRecords},
	{"PKeyTableRecord", "PKTR", saAttrPKeyTableRecord, "[[lid]/[port]/[block]]", (*saQuerier).pkeyRecords},
	{"VLArbitrationTableRecord", "VLAR", saAttrVLArbRecord, "[[lid]/[port]/[block]]", (*saQuerier).vlArbRecords},
	{"InformInfoRecord", "IIR", saAttrInformInfoRec, "[subscriber_gid]", (*saQuerier).informInfoRecords},
	{"LinkRecord", "LR", saAttrLinkRecord, "[[from_lid]/[from_port]] [[to_lid]/[to_port]]", (*saQuerier).linkRecords},
	{"ServiceRecord", "SR", saAttrServiceRecord, "", (*saQuerier).serviceRecords},
	{"PathRecord", "PR", saAttrPathRecord, "", (*saQuerier).pathRecords},
	{"MCMemberRecord", "MCMR", saAttrMCMemberRecord, "", (*saQuerier).mcMemberRecords},
	{"LFTRecord", "LFTR", saAttrLFTRecord, "[[lid]/[block]]", (*saQuerier).lftRecords},
	{"MFTRecord", "MFTR", saAttrMFTRecord, "[[mlid]/[position]/[block]]", (*saQuerier).mftRecords},
	{"GUIDInfoRecord", "GIR", saAttrGUIDInfoRecord, "[[lid]/[block]]", (*saQuerier).guidInfoRecords},
	{"SwitchInfoRecord", "SWIR", saAttrSwitchInfoRec, "[lid]", (*saQuerier).switchInfoRecords},
	{"SMInfoRecord", "SMIR", saAttrSMInfoRecord, "[lid]", (*saQuerier).smInfoRecords},
	// ibtool's own: infiniband-diags' saquery has no MultiPathRecord.
	{"MultiPathRecord", "MPR", saAttrMultiPathRecord, "<sgid>[,<sgid>...] <dgid>[,<dgid>...]", (*saQuerier).multiPathRecords},
}

// findSAQuery returns the record type with the name or alias, compared
// without regard to case, or nil.
func findSAQuery(name string) *saQueryType {
	for _, q := range saQueryTypes {
		if strings.EqualFold(name, q.name) || strings.EqualFold(name, q.alias) {
			return q
		}
	}
	return nil
}

// saRecordNames names the record types in messages, as the query table
// does; filled at init, as the table's handlers refer to getTable, which
// uses it.
var saRecordNames = map[mad.AttrID]string{}

func init() {
	for _, q := range saQueryTypes {
		saRecordNames[q.attr] = q.name
	}
}

func saQueryByAttr(attr mad.AttrID) *saQueryType {
	for _, q := range saQueryTypes {
		if q.attr == attr {
			return q
		}
	}
	return nil
}

func newSaqueryCmd(f *Factory, runF func(*saqueryOptions) error) *cobra.Command {
	o := &saqueryOptions{IO: f.IO}
	var names strings.Builder
	for _, q := range saQueryTypes {
		fmt.Fprintf(&names, "  %s (%s) %s\n", q.name, q.alias, q.usage)
	}
	c := &cobra.Command{
		Use:   "saquery [options] [query-name] [<name> | <lid> | <guid>] [MEMBER=VALUE ...]",
		Short: "query the subnet administrator's records",
		Long: `saquery asks the subnet administrator (the SA of the subnet manager the
local port knows) for records of one type and prints them, as
infiniband-diags' saquery does. Long answers come in RMPP segments, which
ibtool reassembles.

Supported query names (and aliases):
` + names.String() + `
Queries node records by default.`,
		Example: `  saquery                  # every NodeRecord
  saquery NR nodeInfo.portGUID=0002:c903:0001:2345   # by any field (python-rdma's form)
  saquery NR 12            # the NodeRecord of LID 12
  saquery PIR 12/1         # the PortInfoRecord of LID 12, port 1
  saquery -x               # every LinkRecord
  saquery --src-to-dst 12:23   # the PathRecords from LID 12 to LID 23
  saquery -D               # the CAs' LIDs and descriptions
  saquery -s               # the ports with IsSM or IsSMdisabled`,
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
			return saqueryRun(o)
		},
	}
	addCommonFlags(c, &o.Common, flagsLocalPort|flagsMAD|flagsJSON|flagsNodeMap)
	fl := c.Flags()
	b := &o.flags
	fl.BoolVarP(&b.p, "p", "p", false, "get PathRecord info")
	fl.BoolVarP(&b.N, "N", "N", false, "get NodeRecord info")
	fl.BoolVarP(&b.L, "L", "L", false, "return the Lids of the name specified")
	fl.BoolVarP(&b.l, "l", "l", false, "return the unique Lid of the name specified")
	fl.BoolVarP(&b.G, "G", "G", false, "return the Guids of the name specified")
	fl.BoolVarP(&b.O, "O", "O", false, "return name for the Lid specified")
	fl.BoolVarP(&b.U, "U", "U", false, "return name for the Guid specified")
	fl.BoolVarP(&b.s, "s", "s", false, "return the PortInfoRecords with isSM or isSMdisabled capability mask bit on")
	fl.BoolVarP(&b.g, "g", "g", false, "get multicast group info")
	fl.BoolVarP(&b.m, "m", "m", false, "get multicast member info (with a group's MLID, its member GIDs only: saquery -m 0xC000)")
	fl.BoolVarP(&b.x, "x", "x", false, "get LinkRecord info")
	fl.BoolVarP(&b.c, "c", "c", false, "get the SA's class port info")
	fl.BoolVarP(&b.S, "S", "S", false, "get ServiceRecord info")
	fl.BoolVarP(&b.I, "I", "I", false, "get InformInfoRecord (subscription) info")
	fl.BoolVarP(&b.D, "list", "D", false, "the node desc of the CA's")
	fl.BoolVarP(&o.ShowKeys, "show_keys", "K", false, "display security keys in output")
	p := &o.p
	fl.StringVar(&p.srcToDst, "src-to-dst", "", "get a PathRecord for <src:dst> where src and dst are either node names or LIDs")
	fl.StringVar(&p.sgidToDgid, "sgid-to-dgid", "", "get a PathRecord for <sgid-dgid> where sgid and dgid are addresses in IPv6 format")
	fl.StringVar(&p.smkeyArg, "smkey", "", "SA SM_Key value for the query (default 0, untrusted)")
	for _, s := range []struct {
		dst         *string
		name, short string
		usage       string
	}{
		{&p.slidArg, "slid", "", "Source LID (PathRecord)"},
		{&p.dlidArg, "dlid", "", "Destination LID (PathRecord)"},
		{&p.mlidArg, "mlid", "", "Multicast LID (MCMemberRecord)"},
		{&p.sgidArg, "sgid", "", "Source GID (IPv6 format) (PathRecord)"},
		{&p.dgidArg, "dgid", "", "Destination GID (IPv6 format) (PathRecord)"},
		{&p.gidArg, "gid", "", "Port GID (MCMemberRecord)"},
		{&p.mgidArg, "mgid", "", "Multicast GID (MCMemberRecord)"},
		{&p.revArg, "reversible", "r", "Reversible path (PathRecord)"},
		{&p.numbArg, "numb_path", "n", "Number of paths (PathRecord)"},
		{&p.pkeyArg, "pkey", "", "P_Key (PathRecord, MCMemberRecord)"},
		{&p.qosArg, "qos_class", "Q", "QoS Class (PathRecord)"},
		{&p.slArg, "sl", "", "Service level (PathRecord, MCMemberRecord)"},
		{&p.mtuArg, "mtu", "M", "MTU and selector (PathRecord, MCMemberRecord)"},
		{&p.rateArg, "rate", "R", "Rate and selector (PathRecord, MCMemberRecord)"},
		{&p.pktLifeArg, "pkt_lifetime", "", "Packet lifetime and selector (PathRecord, MCMemberRecord)"},
		{&p.qkeyArg, "qkey", "q", "Q_Key (MCMemberRecord)"},
		{&p.tclassArg, "tclass", "T", "Traffic Class (PathRecord, MCMemberRecord)"},
		{&p.flowArg, "flow_label", "F", "Flow Label (PathRecord, MCMemberRecord)"},
		{&p.hopArg, "hop_limit", "H", "Hop limit (PathRecord, MCMemberRecord)"},
		{&p.scopeArg, "scope", "", "Scope (MCMemberRecord)"},
		{&p.joinArg, "join_state", "J", "Join state (MCMemberRecord)"},
		{&p.proxyArg, "proxy_join", "X", "Proxy join (MCMemberRecord)"},
		{&p.serviceIDArg, "service_id", "", "ServiceID (PathRecord)"},
	} {
		fl.StringVarP(s.dst, s.name, s.short, "", s.usage)
	}
	return c
}

// parse turns the flags and arguments into what saquery does, with
// infiniband-diags' precedence: the last of -N, -D, -L, -l, -G, -O, -U,
// -c, -s, -g and -m wins among themselves; -p, -x, -S, -I and the path
// options pick a record type.
func (o *saqueryOptions) parse(args []string) error {
	if err := o.parseParams(); err != nil {
		return err
	}
	b := &o.flags
	var query *saQueryType
	set := func(on bool, cmd saCommand, pr saNodePrint) {
		if on {
			o.Command, o.Print = cmd, pr
		}
	}
	set(b.N, saCmdNodeRecords, o.Print)
	set(b.D, saCmdNodeRecords, saPrintCADescs)
	set(b.L, saCmdNodeRecords, saPrintLIDs)
	set(b.l, saCmdNodeRecords, saPrintUniqueLID)
	set(b.G, saCmdNodeRecords, saPrintGUIDs)
	set(b.O, saCmdNodeRecords, saPrintNameOfLID)
	set(b.U, saCmdNodeRecords, saPrintNameOfGUID)
	set(b.c, saCmdClassPort, o.Print)
	set(b.s, saCmdIsSM, o.Print)
	set(b.g, saCmdMCGroups, o.Print)
	set(b.m, saCmdMCMembers, o.Print)
	for _, q := range []struct {
		on   bool
		attr mad.AttrID
	}{{b.p, saAttrPathRecord}, {b.S, saAttrServiceRecord}, {b.I, saAttrInformInfoRec}, {b.x, saAttrLinkRecord},
		{o.p.srcToDst != "" || o.p.sgidToDgid != "", saAttrPathRecord}} {
		if q.on {
			query = saQueryByAttr(q.attr)
		}
	}
	if query == nil && o.Command == saCmdQuery {
		if len(args) > 0 {
			if query = findSAQuery(args[0]); query != nil {
				args = args[1:]
			}
		}
		if query == nil {
			query = saQueryByAttr(saAttrNodeRecord)
		}
	}
	o.Query = query
	// Trailing MEMBER=VALUE arguments select by any field of the record
	// (python-rdma's form).
	n := len(args)
	for n > 0 && strings.Contains(args[n-1], "=") {
		n--
	}
	o.Assigns = args[n:]
	args = args[:n]
	if len(o.Assigns) > 0 {
		if o.Command != saCmdQuery || query.attr == saAttrClassPortInfo {
			return usageErrorf("%s: MEMBER=VALUE selects the fields of a record query (NR, PIR, PR, ...)", o.Assigns[0])
		}
		var err error
		if o.assigned, o.assignedMask, err = mad.SATemplate(mad.SARecordLayout(query.name), o.Assigns); err != nil {
			return &UsageError{Err: err}
		}
	}
	o.Args = args
	if len(args) > 0 {
		switch o.Print {
		case saPrintNameOfLID:
			n, err := parseUintArg(args[0], 0xffff)
			if err != nil {
				return usageErrorf("invalid LID %q: %v", args[0], err)
			}
			o.RequestedLID = uint16(n)
			if n == 0 {
				return usageErrorf("ERROR: lid invalid")
			}
		case saPrintNameOfGUID:
			n, err := parseUintArg(args[0], 1<<64-1)
			if err != nil {
				return usageErrorf("invalid GUID %q: %v", args[0], err)
			}
			o.RequestedGUID = n
		default:
			o.Name = args[0]
		}
	}
	switch {
	case (o.Print == saPrintLIDs || o.Print == saPrintUniqueLID || o.Print == saPrintGUIDs) && o.Name == "":
		return usageErrorf("ERROR: name not specified")
	case o.Print == saPrintNameOfLID && len(args) == 0:
		return usageErrorf("ERROR: lid not specified")
	case o.Print == saPrintNameOfGUID && len(args) == 0:
		return usageErrorf("ERROR: guid not specified")
	}
	return nil
}

// parseParams reads the record field options.
func (o *saqueryOptions) parseParams() error {
	p := &o.p
	p.hopLimit, p.reversible, p.numbPath, p.qosClass, p.sl, p.proxyJoin = -1, -1, -1, -1, -1, -1
	for _, v := range []struct {
		name, arg string
		max       uint64
		dst       func(uint64)
	}{
		{"smkey", p.smkeyArg, 1<<64 - 1, func(n uint64) { o.SMKey = n }},
		{"slid", p.slidArg, 1<<64 - 1, func(n uint64) { p.slid = n }},
		{"dlid", p.dlidArg, 1<<64 - 1, func(n uint64) { p.dlid = n }},
		{"mlid", p.mlidArg, 1<<64 - 1, func(n uint64) { p.mlid = n }},
		{"reversible", p.revArg, 1<<63 - 1, func(n uint64) { p.reversible = int64(n) }},
		{"numb_path", p.numbArg, 1<<63 - 1, func(n uint64) { p.numbPath = int64(n) }},
		{"pkey", p.pkeyArg, 1<<64 - 1, func(n uint64) { p.pkey = n }},
		{"qos_class", p.qosArg, 1<<63 - 1, func(n uint64) { p.qosClass = int64(n) }},
		{"sl", p.slArg, 1<<63 - 1, func(n uint64) { p.sl = int64(n) }},
		{"mtu", p.mtuArg, 1<<64 - 1, func(n uint64) { p.mtu = n }},
		{"rate", p.rateArg, 1<<64 - 1, func(n uint64) { p.rate = n }},
		{"pkt_lifetime", p.pktLifeArg, 1<<64 - 1, func(n uint64) { p.pktLife = n }},
		{"qkey", p.qkeyArg, 1<<64 - 1, func(n uint64) { p.qkey = n }},
		{"tclass", p.tclassArg, 1<<64 - 1, func(n uint64) { p.tclass = n }},
		{"flow_label", p.flowArg, 1<<64 - 1, func(n uint64) { p.flowLabel = n }},
		{"hop_limit", p.hopArg, 1<<63 - 1, func(n uint64) { p.hopLimit = int64(n) }},
		{"scope", p.scopeArg, 1<<64 - 1, func(n uint64) { p.scope = n }},
		{"join_state", p.joinArg, 1<<64 - 1, func(n uint64) { p.joinState = n }},
		{"proxy_join", p.proxyArg, 1<<63 - 1, func(n uint64) { p.proxyJoin = int64(n) }},
		{"service_id", p.serviceIDArg, 1<<64 - 1, func(n uint64) { p.serviceID = n }},
	} {
		if v.arg == "" {
			continue
		}
		n, err := parseUintArg(v.arg, v.max)
		if err != nil {
			return usageErrorf("invalid --%s %q: %v", v.name, v.arg, err)
		}
		v.dst(n)
	}
	for _, g := range []struct {
		name, arg string
		dst       *rdma.GID
	}{{"sgid", p.sgidArg, &p.sgid}, {"dgid", p.dgidArg, &p.dgid}, {"gid", p.gidArg, &p.gid}, {"mgid", p.mgidArg, &p.mgid}} {
		if g.arg == "" {
			continue
		}
		gid, err := parseIPv6GID(g.arg)
		if err != nil {
			return usageErrorf("invalid --%s %q: %v", g.name, g.arg, err)
		}
		*g.dst = gid
	}
	if p.srcToDst != "" {
		if !strings.Contains(p.srcToDst, ":") {
			return usageErrorf("invalid --src-to-dst %q: want <src>:<dst>", p.srcToDst)
		}
		p.numbPath = 0x7f
	}
	if p.sgidToDgid != "" {
		src, dst, ok := strings.Cut(p.sgidToDgid, "-")
		if !ok {
			return usageErrorf("invalid --sgid-to-dgid %q: want <sgid>-<dgid>", p.sgidToDgid)
		}
		var err error
		if p.sgid, err = parseIPv6GID(src); err != nil {
			return usageErrorf("invalid --sgid-to-dgid source %q: %v", src, err)
		}
		if p.dgid, err = parseIPv6GID(dst); err != nil {
			return usageErrorf("invalid --sgid-to-dgid destination %q: %v", dst, err)
		}
		p.numbPath = 0x7f
	}
	return nil
}

// parseIPv6GID parses a GID in IPv6 form, as inet_pton(AF_INET6) does.
func parseIPv6GID(s string) (rdma.GID, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return rdma.GID{}, errors.New("want a GID in IPv6 form, like fe80::2:c903:0:1491")
	}
	return rdma.GID(a.As16()), nil
}

// saQuerier runs one saquery invocation.
type saQuerier struct {
	ctx  context.Context
	x    *mad.Transactor
	o    *saqueryOptions
	w    *bufio.Writer
	text saText
	json []any // records printed, for --json
	// nodes caches the NodeRecords, asked once for names and -m.
	nodes []*nodeRecord
}

func saqueryRun(o *saqueryOptions) error {
	names, err := o.Common.loadNodeMap("saquery", o.IO.ErrOut)
	if err != nil {
		return err
	}
	x, _, err := o.Open()
	if err != nil {
		return err
	}
	defer x.Close()
	if _, err := x.SAPath(); err != nil {
		return fmt.Errorf("failed to bind to the SA: %w", err)
	}
	q := &saQuerier{ctx: o.Common.context(), x: x, o: o, w: newTableWriter(o.IO.Out)}
	q.text.showKeys = o.ShowKeys
	if names != nil {
		q.text.names = names
	}
	if err := q.run(); err != nil {
		if !o.Common.JSON {
			q.flush() // the text printed before the failure, as the C tool has
		}
		return err // no JSON document: its records would look complete
	}
	return q.flush()
}

// flush writes the text, or the JSON document of the records.
func (q *saQuerier) flush() error {
	if q.o.Common.JSON {
		return writeJSONList(q.o.IO.Out, "records", q.json)
	}
	return q.w.Flush()
}

func (q *saQuerier) run() error {
	o := q.o
	if o.p.srcToDst != "" {
		src, dst, _ := strings.Cut(o.p.srcToDst, ":")
		for _, s := range []struct {
			arg string
			dst *uint64
		}{{src, &o.p.slid}, {dst, &o.p.dlid}} {
			if s.arg == "" {
				continue
			}
			lid, err := q.lidOf(s.arg)
			if err != nil {
				return err
			}
			*s.dst = uint64(lid)
		}
	}
	if o.Command == saCmdClassPort || (o.Command == saCmdQuery && (o.Query.attr == saAttrClassPortInfo || o.Query.attr == saAttrSwitchInfoRec)) {
		if err := q.askClassPortInfo(); err != nil {
			return fmt.Errorf("failed to query SA:ClassPortInfo: %w", err)
		}
	}
	switch o.Command {
	case saCmdNodeRecords:
		return q.printNodeRecords()
	case saCmdClassPort:
		q.emit(q.text.cpi)
		return nil
	case saCmdIsSM:
		return q.isSMRecords()
	case saCmdMCGroups:
		recs, err := q.getTable(saAttrMCMemberRecord, 0, 0, nil)
		if err != nil {
			return err
		}
		for _, r := range recs {
			q.emit(mcGroupText{decodeMCMemberRecord(r)})
		}
		return nil
	case saCmdMCMembers:
		return q.mcMembers()
	}
	return o.Query.run(q, o.Args)
}

// emit prints one record, or keeps it for the JSON document.
func (q *saQuerier) emit(r saTextRecord) {
	if q.o.Common.JSON {
		if g, ok := r.(mcGroupText); ok {
			q.json = append(q.json, g.mcMemberRecord)
			return
		}
		q.json = append(q.json, r)
		return
	}
	r.writeText(q.w, &q.text)
}

// getTable asks SubnAdmGetTable for records of one type, the template rec
// selecting by mask, and returns the records (each at least as long as
// the type's layout).
func (q *saQuerier) getTable(attr mad.AttrID, mod uint32, mask uint64, rec []byte) ([][]byte, error) {
	name, ok := saRecordNames[attr]
	if !ok {
		name = fmt.Sprintf("attribute %#04x", uint16(attr))
	}
	res, err := q.x.QuerySA(q.ctx, &mad.SAQuery{Method: mad.MethodGetTable, AttrID: attr, Name: name,
		AttrMod: mod, ComponentMask: mask, SMKey: q.o.SMKey, Record: rec})
	if err != nil {
		return nil, err
	}
	want := saRecordLen[attr]
	if len(res.Records) > 0 && res.RecordLen < want {
		return nil, fmt.Errorf("SubnAdmGetTable(%s): records of %d bytes, want at least %d", name, res.RecordLen, want)
	}
	return res.Records, nil
}

// askClassPortInfo gets the SA's ClassPortInfo.
func (q *saQuerier) askClassPortInfo() error {
	res, err := q.x.QuerySA(q.ctx, &mad.SAQuery{Method: mad.MethodGet, AttrID: saAttrClassPortInfo,
		Name: "ClassPortInfo", SMKey: q.o.SMKey})
	if err != nil {
		return err
	}
	if len(res.Records) == 0 || len(res.Records[0]) < saRecordLen[saAttrClassPortInfo] {
		return errors.New("short ClassPortInfo")
	}
	q.text.cpi = decodeClassPortInfo(res.Records[0])
	return nil
}

// allNodes returns every NodeRecord, asked once.
func (q *saQuerier) allNodes() ([]*nodeRecord, error) {
	if q.nodes != nil {
		return q.nodes, nil
	}
	recs, err := q.getTable(saAttrNodeRecord, 0, 0, nil)
	if err != nil {
		return nil, err
	}
	q.nodes = make([]*nodeRecord, 0, len(recs))
	for _, r := range recs {
		q.nodes = append(q.nodes, decodeNodeRecord(r))
	}
	return q.nodes, nil
}

// lidOf is saquery's get_lid: a name starting with a letter is looked up
// among the NodeRecords' descriptions; anything else is a LID.
func (q *saQuerier) lidOf(name string) (uint16, error) {
	if name != "" && isAlpha(name[0]) {
		nodes, err := q.allNodes()
		if err != nil {
			return 0, err
		}
		for _, n := range nodes {
			if n.descMatches(name) {
				return n.LID, nil
			}
		}
		return 0, fmt.Errorf("failed to find lid for %q: no NodeRecord has that description", name)
	}
	// strtol's leading number, as saquery takes it.
	n, ok := strtoulPrefix(name)
	if !ok || n == 0 || n > 0xffff {
		return 0, usageErrorf("Invalid lid specified: %q", name)
	}
	return uint16(n), nil
}

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// lidAndPorts is saquery's parse_lid_and_ports: "lid[/a[/b]]", where the
// LID may be a name; missing numbers are -1.
func (q *saQuerier) lidAndPorts(s string) (lid uint16, a, b int64, err error) {
	parts := strings.SplitN(s, "/", 3)
	if lid, err = q.lidOf(parts[0]); err != nil {
		return 0, -1, -1, err
	}
	num := func(i int) int64 {
		if i >= len(parts) {
			return -1
		}
		n, ok := strtoulPrefix(parts[i])
		if !ok {
			return -1
		}
		return int64(n)
	}
	return lid, num(1), num(2), nil
}

// strtoulPrefix is C's strtoul(s, &end, 0) for the ports of a LID spec:
// the leading number, ok false when there is none.
func strtoulPrefix(s string) (uint64, bool) {
	base, digits := 10, s
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, digits = 16, s[2:]
	case strings.HasPrefix(s, "0") && len(s) > 1:
		base, digits = 8, s[1:]
	}
	end := 0
	for end < len(digits) {
		if _, err := strconv.ParseUint(digits[end:end+1], base, 8); err != nil {
			break
		}
		end++
	}
	if end == 0 {
		if base == 8 {
			return 0, true // "0"
		}
		return 0, false
	}
	n, _ := strconv.ParseUint(digits[:end], base, 64)
	return n, true
}

// printNodeRecords is -N, -D, -L, -l, -G, -O and -U.
func (q *saQuerier) printNodeRecords() error {
	nodes, err := q.allNodes()
	if err != nil {
		return err
	}
	o := q.o
	if o.Print == saPrintCADescs && !o.Common.JSON {
		fmt.Fprint(q.w, "   LID \"name\"\n================\n")
	}
	for _, n := range nodes {
		switch o.Print {
		case saPrintCADescs:
			if n.NodeInfo.NodeType == 1 {
				if o.Common.JSON {
					q.json = append(q.json, n)
					continue
				}
				fmt.Fprintf(q.w, "%6d  \"%s\"\n", n.LID, q.text.name(uint64(n.NodeInfo.NodeGUID), n.NodeDescription))
			}
		case saPrintNameOfLID:
			if n.LID == o.RequestedLID {
				q.printNode(n)
			}
		case saPrintNameOfGUID:
			if uint64(n.NodeInfo.PortGUID) == o.RequestedGUID {
				q.printNode(n)
			}
		default:
			name := q.text.name(uint64(n.NodeInfo.NodeGUID), n.NodeDescription)
			if o.Name == "" || n.descMatches(o.Name) || strncmp64(o.Name, []byte(name)) {
				q.printNode(n)
				if o.Print == saPrintUniqueLID {
					return nil
				}
			}
		}
	}
	return nil
}

// printNode prints one NodeRecord the way the node print mode asks.
func (q *saQuerier) printNode(n *nodeRecord) {
	if q.o.Common.JSON {
		q.json = append(q.json, n)
		return
	}
	switch q.o.Print {
	case saPrintLIDs, saPrintUniqueLID:
		fmt.Fprintf(q.w, "%d\n", n.LID)
	case saPrintGUIDs:
		fmt.Fprintf(q.w, "0x%016x\n", uint64(n.NodeInfo.PortGUID))
	case saPrintNameOfLID, saPrintNameOfGUID:
		fmt.Fprintf(q.w, "%s\n", q.text.name(uint64(n.NodeInfo.NodeGUID), n.NodeDescription))
	default:
		n.writeText(q.w, &q.text)
	}
}

// Capability mask bits -s asks for (PortInfo:CapabilityMask).
const (
	capIsSM         = 1 << 1
	capIsSMDisabled = 1 << 10
)

// isSMRecords is -s: the PortInfoRecords with IsSM, then IsSMdisabled.
func (q *saQuerier) isSMRecords() error {
	for _, c := range []struct {
		head string
		mask uint32
	}{{"IsSM ports\n", capIsSM}, {"\nIsSMdisabled ports\n", capIsSMDisabled}} {
		rec := make([]byte, 72)
		binary.BigEndian.PutUint32(rec[4+20:], c.mask) // PortInfo:CapabilityMask
		// Attribute modifier bit 31: match any of the mask's bits.
		recs, err := q.getTable(saAttrPortInfoRecord, 1<<31, 1<<7, rec)
		if err != nil {
			return err
		}
		if !q.o.Common.JSON {
			fmt.Fprint(q.w, c.head)
		}
		for _, r := range recs {
			pir := decodePortInfoRecord(r)
			pir.brief = true
			q.emit(pir)
		}
	}
	return nil
}

// mcMembers is -m: every MCMemberRecord with the name of its port's
// node; with an MLID argument, only that group's member GIDs.
func (q *saQuerier) mcMembers() error {
	recs, err := q.getTable(saAttrMCMemberRecord, 0, 0, nil)
	if err != nil {
		return err
	}
	nodes, err := q.allNodes()
	if err != nil {
		return err
	}
	var mlid int64 = -1
	if q.o.Name != "" {
		n, _ := strconv.ParseInt(q.o.Name, 0, 64)
		mlid = n
	}
	for _, r := range recs {
		m := decodeMCMemberRecord(r)
		name := "<unknown>"
		for _, n := range nodes {
			if n.NodeInfo.PortGUID == m.PortGID.GUID() {
				name = q.text.name(uint64(n.NodeInfo.NodeGUID), n.NodeDescription)
				break
			}
		}
		if q.o.Common.JSON {
			if mlid < 0 || mlid == int64(m.MLID) {
				q.json = append(q.json, struct {
					*mcMemberRecord
					NodeDescription string `json:"nodeDescription"`
				}{m, name})
			}
			continue
		}
		if q.o.Name != "" {
			if mlid == int64(m.MLID) {
				fmt.Fprintf(q.w, "\t\tPortGid.................%s (%s)\n", m.PortGID, name)
			}
			continue
		}
		fmt.Fprintf(q.w, "MCMemberRecord member dump:\n"+
			"\t\tMGID....................%s\n"+
			"\t\tMlid....................0x%X\n"+
			"\t\tPortGid.................%s\n"+
			"\t\tScopeState..............0x%X\n"+
			"\t\tProxyJoin...............0x%X\n"+
			"\t\tNodeDescription.........%s\n",
			m.MGID, m.MLID, m.PortGID, m.ScopeState, m.ProxyJoin, name)
	}
	return nil
}

// saTextRecord is a decoded record saquery prints.
type saTextRecord interface {
	writeText(io.Writer, *saText)
}

// dumpAll asks for the records of one type and prints them all, each
// decoded by decode.
func dumpAll[R saTextRecord](q *saQuerier, attr mad.AttrID, mask uint64, rec []byte, decode func([]byte) R) error {
	if len(q.o.Assigns) > 0 {
		rec, mask = q.o.applyAssigns(rec, mask)
	}
	recs, err := q.getTable(attr, 0, mask, rec)
	if err != nil {
		return err
	}
	for _, r := range recs {
		q.emit(decode(r))
	}
	return nil
}

// applyAssigns adds the MEMBER=VALUE selections parse made to the
// template rec and its mask: each member's field and mask bits, over what
// the options set.
func (o *saqueryOptions) applyAssigns(rec []byte, mask uint64) ([]byte, uint64) {
	l := mad.SARecordLayout(o.Query.name)
	set := o.assigned
	if len(rec) < len(set) {
		rec = append(rec, make([]byte, len(set)-len(rec))...)
	}
	for _, a := range o.Assigns {
		name, _, _ := strings.Cut(a, "=")
		c, _ := l.Component(name)
		if c.Width > 64 {
			copy(rec[c.Offset/8:(c.Offset+c.Width)/8], set[c.Offset/8:])
		} else {
			c.SetValue(rec, c.Value(set))
		}
	}
	return rec, mask | o.assignedMask
}

// selector collects a template record and its component mask, as
// saquery's CHECK_AND_SET_VAL macros build them.
type selector struct {
	rec  []byte
	mask uint64
}

func newSelector(n int) *selector { return &selector{rec: make([]byte, n)} }

// set8, set16 and set32 store v at off and select component bit when v
// differs from unset, compared at the field's width as C does.
func (s *selector) set8(v, unset int64, off int, bit uint) {
	if uint8(v) != uint8(unset) {
		s.rec[off] = uint8(v)
		s.mask |= 1 << bit
	}
}

func (s *selector) set16(v, unset int64, off int, bit uint) {
	if uint16(v) != uint16(unset) {
		binary.BigEndian.PutUint16(s.rec[off:], uint16(v))
		s.mask |= 1 << bit
	}
}

func (s *selector) set32(v, unset int64, off int, bit uint) {
	if uint32(v) != uint32(unset) {
		binary.BigEndian.PutUint32(s.rec[off:], uint32(v))
		s.mask |= 1 << bit
	}
}

func (s *selector) setGID(g rdma.GID, off int, bit uint) {
	if !g.IsZero() {
		copy(s.rec[off:], g[:])
		s.mask |= 1 << bit
	}
}

func (q *saQuerier) classPortInfo(_ []string) error {
	q.emit(q.text.cpi)
	return nil
}

func (q *saQuerier) nodeRecords(args []string) error {
	s := newSelector(112)
	if len(args) > 0 {
		lid, _, _, err := q.lidAndPorts(args[0])
		if err != nil {
			return err
		}
		s.set16(int64(lid), 0, 0, 0)
	}
	return dumpAll(q, saAttrNodeRecord, s.mask, s.rec, decodeNodeRecord)
}

// lidSelector is the selector of the record types whose template starts
// with a LID and two more numbers from a "lid/a/b" argument.
func (q *saQuerier) lidSelector(args []string, size int, lidBit uint, a, b func(s *selector, v int64)) (*selector, error) {
	s := newSelector(size)
	var lid uint16
	va, vb := int64(-1), int64(-1)
	if len(args) > 0 {
		var err error
		if lid, va, vb, err = q.lidAndPorts(args[0]); err != nil {
			return nil, err
		}
	}
	s.set16(int64(lid), 0, 0, lidBit)
	if a != nil {
		a(s, va)
	}
	if b != nil {
		b(s, vb)
	}
	return s, nil
}

func (q *saQuerier) portInfoRecords(args []string) error {
	s, err := q.lidSelector(args, 72, 0,
		func(s *selector, v int64) { s.set8(v, -1, 2, 1) },
		func(s *selector, v int64) { s.set8(v, -1, 3, 2) })
	if err != nil {
		return err
	}
	return dumpAll(q, saAttrPortInfoRecord, s.mask, s.rec, decodePortInfoRecord)
}

func (q *saQuerier) sl2vlRecords(args []string) error {
	s, err := q.lidSelector(args, 16, 0,
		func(s *selector, v int64) { s.set8(v, -1, 2, 1) },
		func(s *selector, v int64) { s.set8(v, -1, 3, 2) })
	if err != nil {
		return err
	}
	return dumpAll(q, saAttrSL2VLRecord, s.mask, s.rec, decodeSL2VLRecord)
}

func (q *saQuerier) pkeyRecords(args []string) error {
	s, err := q.lidSelector(args, 72, 0,
		func(s *selector, v int64) { s.set8(v, -1, 4, 2) },
		func(s *selector, v int64) { s.set16(v, -1, 2, 1) })
	if err != nil {
		return err
	}
	return dumpAll(q, saAttrPKeyTableRecord, s.mask, s.rec, decodePKeyTableRecord)
}

func (q *saQuerier) vlArbRecords(args []string) error {
	s, err := q.lidSelector(args, 72, 0,
		func(s *selector, v int64) { s.set8(v, -1, 2, 1) },
		func(s *selector, v int64) { s.set8(v, -1, 3, 2) })
	if err != nil {
		return err
	}
	return dumpAll(q, saAttrVLArbRecord, s.mask, s.rec, decodeVLArbRecord)
}

func (q *saQuerier) lftRecords(args []string) error {
	s, err := q.lidSelector(args, 72, 0,
		func(s *selector, v int64) { s.set16(v, -1, 2, 1) }, nil)
	if err != nil {
		return err
	}
	return dumpAll(q, saAttrLFTRecord, s.mask, s.rec, decodeLFTRecord)
}

func (q *saQuerier) guidInfoRecords(args []string) error {
	s, err := q.lidSelector(args, 72, 0,
		func(s *selector, v int64) { s.set8(v, -1, 2, 1) }, nil)
	if err != nil {
		return err
	}
	return dumpAll(q, saAttrGUIDInfoRecord, s.mask, s.rec, decodeGUIDInfoRecord)
}

func (q *saQuerier) mftRecords(args []string) error {
	// "mlid/position/block": the block goes in the low 9 bits, the
	// position in the top 4 of one 16-bit field.
	var position, block int64 = -1, -1
	s, err := q.lidSelector(args, 72, 0,
		func(_ *selector, v int64) { position = v },
		func(_ *selector, v int64) { block = v })
	if err != nil {
		return err
	}
	var pb uint16
	if uint16(block) != 0xffff {
		pb = uint16(block)
		s.mask |= 1 << 3
	}
	pb &= 0x1ff
	var pos uint8
	if uint8(position) != 0xff {
		pos = uint8(position)
		s.mask |= 1 << 1
	}
	pb |= uint16(pos) << 12
	binary.BigEndian.PutUint16(s.rec[2:], pb)
	return dumpAll(q, saAttrMFTRecord, s.mask, s.rec, decodeMFTRecord)
}

func (q *saQuerier) switchInfoRecords(args []string) error {
	s, err := q.lidSelector(args, 24, 0, nil, nil)
	if err != nil {
		return err
	}
	return dumpAll(q, saAttrSwitchInfoRec, s.mask, s.rec, decodeSwitchInfoRecord)
}

func (q *saQuerier) smInfoRecords(args []string) error {
	s, err := q.lidSelector(args, 32, 0, nil, nil)
	if err != nil {
		return err
	}
	return dumpAll(q, saAttrSMInfoRecord, s.mask, s.rec, decodeSMInfoRecord)
}

func (q *saQuerier) linkRecords(args []string) error {
	s := newSelector(8)
	var from, to uint16
	fromPort, toPort := int64(-1), int64(-1)
	var err error
	if len(args) > 0 {
		if from, fromPort, _, err = q.lidAndPorts(args[0]); err != nil {
			return err
		}
	}
	if len(args) > 1 {
		if to, toPort, _, err = q.lidAndPorts(args[1]); err != nil {
			return err
		}
	}
	s.set16(int64(from), 0, 0, 0)
	s.set8(fromPort, -1, 2, 1)
	s.set16(int64(to), 0, 4, 3)
	s.set8(toPort, -1, 3, 2)
	return dumpAll(q, saAttrLinkRecord, s.mask, s.rec, decodeLinkRecord)
}

func (q *saQuerier) serviceRecords(_ []string) error {
	return dumpAll(q, saAttrServiceRecord, 0, nil, decodeServiceRecord)
}

func (q *saQuerier) informInfoRecords(args []string) error {
	s := newSelector(64)
	if len(args) > 0 {
		g, err := parseIPv6GID(args[0])
		if err != nil {
			return usageErrorf("Invalid SubscriberGID specified: %q", args[0])
		}
		copy(s.rec, g[:])
		s.mask = 1 << 0
	}
	return dumpAll(q, saAttrInformInfoRec, s.mask, s.rec, decodeInformInfoRecord)
}

// pathRecords builds the PathRecord template from the path options as
// saquery's query_path_records does (bit numbers: IBA 15.2.5.16).
func (q *saQuerier) pathRecords(_ []string) error {
	p := &q.o.p
	s := newSelector(64)
	if p.serviceID != 0 {
		binary.BigEndian.PutUint64(s.rec[0:], p.serviceID)
		s.mask |= 1<<0 | 1<<1
	}
	s.setGID(p.sgid, 24, 3)
	s.setGID(p.dgid, 8, 2)
	s.set16(int64(p.slid), 0, 42, 5)
	s.set16(int64(p.dlid), 0, 40, 4)
	s.set32(p.hopLimit, -1, 44, 9)
	var flow uint8
	if uint8(p.flowLabel) != 0 { // saquery compares and keeps 8 bits of it
		flow = uint8(p.flowLabel)
		s.mask |= 1 << 8
	}
	binary.BigEndian.PutUint32(s.rec[44:], binary.BigEndian.Uint32(s.rec[44:])|uint32(flow)<<8)
	s.set8(int64(p.tclass), 0, 48, 10)
	var reversible uint8
	if uint8(p.reversible) != 0xff {
		reversible = uint8(p.reversible)
		s.mask |= 1 << 11
	}
	s.set8(p.numbPath, -1, 49, 12)
	s.rec[49] |= reversible << 7
	s.set16(int64(p.pkey), 0, 50, 13)
	s.set16(p.sl, -1, 52, 15)
	var qos uint16
	if p.qosClass != -1 {
		qos = uint16(p.qosClass)
		s.mask |= 1 << 14
	}
	binary.BigEndian.PutUint16(s.rec[52:], binary.BigEndian.Uint16(s.rec[52:])&0xf|qos<<4)
	for _, v := range []struct {
		val      uint64
		off      int
		bit, sel uint
	}{{p.mtu, 54, 17, 16}, {p.rate, 55, 19, 18}, {p.pktLife, 56, 21, 20}} {
		if uint8(v.val) != 0 {
			s.rec[v.off] = uint8(v.val)
			s.mask |= 1<<v.bit | 1<<v.sel
		}
	}
	return dumpAll(q, saAttrPathRecord, s.mask, s.rec, decodePathRecord)
}

// mprGIDsOffset is where a MultiPathRecord's GIDs start, after its fixed
// part (IBA 15.2.5.20); mprMaxGIDs is how many fit in one segment (the SA
// header takes 56 bytes of the MAD). opensm takes at most 16.
const (
	mprGIDsOffset = 24
	mprMaxGIDs    = (mad.Size - 56 - mprGIDsOffset) / 16
)

// multiPathRecords asks the SA for the paths between source and
// destination GIDs in one SubnAdmGetMulti(MultiPathRecord), itself sent
// with RMPP, and prints the PathRecords of the answer as -p prints them.
// --numb_path and --reversible select as for PathRecords; any member of
// the record as MEMBER=VALUE. An ibtool addition: infiniband-diags'
// saquery has no MultiPathRecord.
func (q *saQuerier) multiPathRecords(args []string) error {
	if len(args) != 2 {
		return usageErrorf("MultiPathRecord: want <sgid>[,<sgid>...] <dgid>[,<dgid>...], got %d argument(s)", len(args))
	}
	var gids []rdma.GID
	var counts [2]int
	for i, list := range args {
		for _, g := range strings.Split(list, ",") {
			gid, err := parseIPv6GID(g)
			if err != nil {
				return usageErrorf("MultiPathRecord: invalid GID %q: %v", g, err)
			}
			gids = append(gids, gid)
			counts[i]++
		}
	}
	if len(gids) > mprMaxGIDs {
		return usageErrorf("MultiPathRecord: %d GIDs; at most %d", len(gids), mprMaxGIDs)
	}
	rec := make([]byte, mprGIDsOffset+16*len(gids))
	rec[15], rec[16] = byte(counts[0]), byte(counts[1])
	mask := uint64(1<<19 | 1<<20 | 1<<22) // SGIDCount, DGIDCount, SDGID
	for i, g := range gids {
		copy(rec[mprGIDsOffset+16*i:], g[:])
	}
	p := &q.o.p
	if p.numbPath != -1 {
		rec[5] |= byte(p.numbPath) & 0x7f
		mask |= 1 << 6
	}
	if p.reversible != -1 {
		rec[5] |= byte(p.reversible&1) << 7
		mask |= 1 << 5
	}
	if len(q.o.Assigns) > 0 {
		var fixed []byte
		fixed, mask = q.o.applyAssigns(rec[:mprGIDsOffset], mask)
		copy(rec, fixed)
	}
	res, err := q.x.QuerySA(q.ctx, &mad.SAQuery{Method: mad.MethodGetMulti, AttrID: saAttrMultiPathRecord,
		Name: "MultiPathRecord", ComponentMask: mask, SMKey: q.o.SMKey, Record: rec})
	if err != nil {
		return err
	}
	if len(res.Records) > 0 && res.RecordLen < saRecordLen[saAttrPathRecord] {
		return fmt.Errorf("SubnAdmGetMulti(MultiPathRecord): records of %d bytes, want PathRecords of %d", res.RecordLen, saRecordLen[saAttrPathRecord])
	}
	for _, r := range res.Records {
		q.emit(decodePathRecord(r))
	}
	return nil
}

// mcMemberRecords builds the MCMemberRecord template from the options as
// saquery's query_mcmember_records does (IBA 15.2.5.17).
func (q *saQuerier) mcMemberRecords(_ []string) error {
	p := &q.o.p
	s := newSelector(56)
	s.setGID(p.mgid, 0, 0)
	s.setGID(p.gid, 16, 1)
	s.set16(int64(p.mlid), 0, 36, 3)
	s.set32(int64(p.qkey), 0, 32, 2)
	for _, v := range []struct {
		val      uint64
		off      int
		bit, sel uint
	}{{p.mtu, 38, 5, 4}, {p.rate, 42, 9, 8}, {p.pktLife, 43, 11, 10}} {
		if uint8(v.val) != 0 {
			s.rec[v.off] = uint8(v.val)
			s.mask |= 1<<v.bit | 1<<v.sel
		}
	}
	s.set8(int64(p.tclass), 0, 39, 6)
	s.set16(int64(p.pkey), 0, 40, 7)
	var sl, hop, flow uint32
	if uint8(p.sl) != 0xff {
		sl = uint32(uint8(p.sl))
		s.mask |= 1 << 12
	}
	if uint8(p.flowLabel) != 0 {
		flow = uint32(uint8(p.flowLabel))
		s.mask |= 1 << 13
	}
	if uint8(p.hopLimit) != 0xff {
		hop = uint32(uint8(p.hopLimit))
		s.mask |= 1 << 14
	}
	binary.BigEndian.PutUint32(s.rec[44:], sl<<28|flow<<8|hop)
	var scope uint8
	if uint8(p.scope) != 0 {
		scope = uint8(p.scope)
		s.mask |= 1 << 15
	}
	s.set8(int64(p.joinState), 0, 48, 16)
	s.rec[48] |= scope << 4
	if uint8(p.proxyJoin) != 0xff {
		s.rec[49] = uint8(p.proxyJoin) & 1
		s.mask |= 1 << 17
	}
	return dumpAll(q, saAttrMCMemberRecord, s.mask, s.rec, decodeMCMemberRecord)
}
