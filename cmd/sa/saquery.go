package sa

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "saquery",
		Summary: "query the subnet administrator's records",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newSaqueryCmd(f, nil) },
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
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
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
	// Get is python-rdma's --get: a record query asks SubnAdmGet, one
	// record, instead of SubnAdmGetTable.
	Get bool
	// NoDefaults is python-rdma's --no-defaults: the template holds only
	// what the options and arguments give, without the NumbPath of 127
	// --src-to-dst and --sgid-to-dgid otherwise select.
	NoDefaults bool
	p          saParams
	flags      struct{ p, N, L, l, G, O, U, s, g, m, x, c, S, I, D bool }
}

// saQueryType is one record type saquery queries by name.
type saQueryType struct {
	name, alias string
	layout      *mad.Layout
	usage       string
	run         func(q *saQuerier, args []string) error
}

// Layouts of the records saquery's options name.
var (
	cpiLayout        = (&mad.ClassPortInfo{}).Layout()
	nodeRecordLayout = (&mad.NodeRecord{}).Layout()
	pirLayout        = (&mad.PortInfoRecord{}).Layout()
	pathRecordLayout = (&mad.PathRecord{}).Layout()
	mcmrLayout       = (&mad.MCMemberRecord{}).Layout()
	linkRecordLayout = (&mad.LinkRecord{}).Layout()
	swirLayout       = (&mad.SwitchInfoRecord{}).Layout()
)

// saQueryTypes returns saquery's record types, in its usage's order.
// The table is built on first use: its queries name record types through
// it (an initialization cycle for a package-level table), and built by
// an init it cost 18 allocations at every start of every tool.
func saQueryTypes() []*saQueryType {
	saQueryTypesOnce.Do(func() { saQueryTypeTable = buildSAQueryTypes() })
	return saQueryTypeTable
}

var (
	saQueryTypesOnce sync.Once
	saQueryTypeTable []*saQueryType
)

func buildSAQueryTypes() []*saQueryType {
	return []*saQueryType{
		{"ClassPortInfo", "CPI", cpiLayout, "", (*saQuerier).classPortInfo},
		{"NodeRecord", "NR", nodeRecordLayout, "[lid]", (*saQuerier).nodeRecords},
		{"PortInfoRecord", "PIR", pirLayout, "[[lid]/[port]/[options]]", (*saQuerier).portInfoRecords},
		{"SL2VLTableRecord", "SL2VL", (&mad.SLtoVLMappingTableRecord{}).Layout(), "[[lid]/[in_port]/[out_port]]", (*saQuerier).sl2vlRecords},
		{"PKeyTableRecord", "PKTR", (&mad.PKeyTableRecord{}).Layout(), "[[lid]/[port]/[block]]", (*saQuerier).pkeyRecords},
		{"VLArbitrationTableRecord", "VLAR", (&mad.VLArbitrationTableRecord{}).Layout(), "[[lid]/[port]/[block]]", (*saQuerier).vlArbRecords},
		{"InformInfoRecord", "IIR", (&mad.InformInfoRecord{}).Layout(), "[subscriber_gid]", (*saQuerier).informInfoRecords},
		{"LinkRecord", "LR", linkRecordLayout, "[[from_lid]/[from_port]] [[to_lid]/[to_port]]", (*saQuerier).linkRecords},
		{"ServiceRecord", "SR", (&mad.ServiceRecord{}).Layout(), "", (*saQuerier).serviceRecords},
		{"PathRecord", "PR", pathRecordLayout, "", (*saQuerier).pathRecords},
		{"MCMemberRecord", "MCMR", mcmrLayout, "", (*saQuerier).mcMemberRecords},
		{"LFTRecord", "LFTR", (&mad.LinearForwardingTableRecord{}).Layout(), "[[lid]/[block]]", (*saQuerier).lftRecords},
		{"MFTRecord", "MFTR", (&mad.MulticastForwardingTableRecord{}).Layout(), "[[mlid]/[position]/[block]]", (*saQuerier).mftRecords},
		{"GUIDInfoRecord", "GIR", (&mad.GUIDInfoRecord{}).Layout(), "[[lid]/[block]]", (*saQuerier).guidInfoRecords},
		{"SwitchInfoRecord", "SWIR", swirLayout, "[lid]", (*saQuerier).switchInfoRecords},
		{"SMInfoRecord", "SMIR", (&mad.SMInfoRecord{}).Layout(), "[lid]", (*saQuerier).smInfoRecords},
		// ibtool's own: infiniband-diags' saquery has no MultiPathRecord.
		{"MultiPathRecord", "MPR", (&mad.MultiPathRecord{}).Layout(), "<sgid>[,<sgid>...] <dgid>[,<dgid>...]", (*saQuerier).multiPathRecords},
	}
}

// genericQueries are the SA records of the attribute table saquery has no
// view of: queried by name, selected by MEMBER=VALUE, printed as their
// layouts dump them.
func genericQueries() []*saQueryType {
	var qs []*saQueryType
	for _, l := range mad.SALayouts {
		if saQueryByLayout(l) == nil && strings.HasSuffix(l.Name, "Record") {
			qs = append(qs, &saQueryType{name: l.Name, layout: l, usage: "[MEMBER=VALUE ...]", run: (*saQuerier).genericRecords})
		}
	}
	return qs
}

// findSAQuery returns the record type with the name or alias, compared
// without regard to case, or nil. A record of the attribute table with
// no view of its own is found by the names mad.SARecordLayout knows.
func findSAQuery(name string) *saQueryType {
	for _, q := range saQueryTypes() {
		if strings.EqualFold(name, q.name) || strings.EqualFold(name, q.alias) {
			return q
		}
	}
	if l := mad.SARecordLayout(name); l != nil {
		for _, q := range genericQueries() {
			if q.layout == l {
				return q
			}
		}
	}
	return nil
}

// isRecordName reports whether a first argument that names no query has
// the form of a record or attribute name (letters and digits ending in
// Record or Info: BogusRecord, NodeInfo), which then is a typo, not the
// node description infiniband-diags takes any other word for. -N keeps
// such a word a node description.
func isRecordName(s string) bool {
	lower := strings.ToLower(s)
	stem, ok := strings.CutSuffix(lower, "record")
	if !ok {
		stem, ok = strings.CutSuffix(lower, "info")
	}
	if !ok || stem == "" {
		return false
	}
	for i, c := range lower {
		if !('a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// saQueryByLayout returns the record type of the layout, or nil.
func saQueryByLayout(l *mad.Layout) *saQueryType {
	for _, q := range saQueryTypes() {
		if q.layout == l {
			return q
		}
	}
	return nil
}

// saRecordName names a record type in messages as saquery does
// ("SL2VLTableRecord"), or by its layout.
func saRecordName(l *mad.Layout) string {
	if q := saQueryByLayout(l); q != nil {
		return q.name
	}
	return l.Name
}

func newSaqueryCmd(f *cmdutil.Factory, runF func(*saqueryOptions) error) *cobra.Command {
	o := &saqueryOptions{IO: f.IO}
	var names strings.Builder
	for _, q := range saQueryTypes() {
		fmt.Fprintf(&names, "  %s (%s) %s\n", q.name, q.alias, q.usage)
	}
	for _, q := range genericQueries() {
		fmt.Fprintf(&names, "  %s %s\n", q.name, q.usage)
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
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.parse(args); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return saqueryRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsNodeMap|cmdutil.FlagsNoSMPortShort)
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
	// infiniband-diags' saquery man page lists -o (its binary rejects
	// it); saquery's queries go one at a time, so the value changes
	// nothing.
	fl.IntP("outstanding_smps", "o", 2, "SMPs in flight at once (accepted for the man page; saquery sends its queries one at a time)")
	p := &o.p
	fl.StringVar(&p.srcToDst, "src-to-dst", "", "get a PathRecord for <src:dst> where src and dst are either node names or LIDs")
	fl.StringVar(&p.sgidToDgid, "sgid-to-dgid", "", "get a PathRecord for <sgid-dgid> where sgid and dgid are addresses in IPv6 format")
	fl.StringVar(&p.smkeyArg, "smkey", "", "SA SM_Key value for the query (default 0, untrusted)")
	fl.BoolVar(&o.Get, "get", false, "ask SubnAdmGet (one record) instead of SubnAdmGetTable (python-rdma's)")
	fl.BoolVar(&o.NoDefaults, "no-defaults", false, "select only what the options give: no NumbPath 127 for --src-to-dst and --sgid-to-dgid (python-rdma's)")
	fl.BoolVar(&o.Common.ViaSA, "sa", false, "python-rdma's --sa; saquery always asks the SA")
	fl.StringVar(&o.Common.SAPathArg, "sa-path", "", "send the queries to the SA at this LID, port GUID, GID or IBPath(...) instead of the local port's SM (python-rdma's)")
	// python-rdma spells the flow label option -f; infiniband-diags -F.
	fl.StringVarP(&p.flowArg, "f", "f", "", "Flow Label (python-rdma's spelling of -F)")
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
		on     bool
		layout *mad.Layout
	}{{b.p, pathRecordLayout}, {b.S, (&mad.ServiceRecord{}).Layout()}, {b.I, (&mad.InformInfoRecord{}).Layout()},
		{b.x, linkRecordLayout}, {o.p.srcToDst != "" || o.p.sgidToDgid != "", pathRecordLayout}} {
		if q.on {
			query = saQueryByLayout(q.layout)
		}
	}
	if query == nil && o.Command == saCmdQuery {
		if len(args) > 0 {
			if query = findSAQuery(args[0]); query != nil {
				args = args[1:]
			} else if isRecordName(args[0]) {
				return cmdutil.UsageErrorf("unknown record %q; 'saquery --help' lists the query names (for a node described so: saquery -N %s)", args[0], args[0])
			}
		}
		if query == nil {
			query = saQueryByLayout(nodeRecordLayout)
		}
	}
	o.Query = query
	if o.Get && (o.Command != saCmdQuery || query.layout == (&mad.MultiPathRecord{}).Layout()) {
		return cmdutil.UsageErrorf("--get asks for one record of a record query (NR, PIR, PR, LR, ...): not with -N, -D, -L, -l, -G, -O, -U, -c, -s, -g, -m or MultiPathRecord")
	}
	// Trailing MEMBER=VALUE arguments select by any field of the record
	// (python-rdma's form).
	n := len(args)
	for n > 0 && strings.Contains(args[n-1], "=") {
		n--
	}
	o.Assigns = args[n:]
	args = args[:n]
	if len(o.Assigns) > 0 {
		if o.Command != saCmdQuery || query.layout == cpiLayout {
			return cmdutil.UsageErrorf("%s: MEMBER=VALUE selects the fields of a record query (NR, PIR, PR, ...)", o.Assigns[0])
		}
		var err error
		if o.assigned, o.assignedMask, err = mad.SATemplate(query.layout, o.Assigns); err != nil {
			return &cmdutil.UsageError{Err: err}
		}
	}
	o.Args = args
	if len(args) > 0 {
		switch o.Print {
		case saPrintNameOfLID:
			n, err := cmdutil.ParseUintArg(args[0], 0xffff)
			if err != nil {
				return cmdutil.UsageErrorf("invalid LID %q: %v", args[0], err)
			}
			o.RequestedLID = uint16(n)
			if n == 0 {
				return cmdutil.UsageErrorf("ERROR: lid invalid")
			}
		case saPrintNameOfGUID:
			n, err := cmdutil.ParseUintArg(args[0], 1<<64-1)
			if err != nil {
				return cmdutil.UsageErrorf("invalid GUID %q: %v", args[0], err)
			}
			o.RequestedGUID = n
		default:
			o.Name = args[0]
		}
	}
	switch {
	case (o.Print == saPrintLIDs || o.Print == saPrintUniqueLID || o.Print == saPrintGUIDs) && o.Name == "":
		return cmdutil.UsageErrorf("ERROR: name not specified")
	case o.Print == saPrintNameOfLID && len(args) == 0:
		return cmdutil.UsageErrorf("ERROR: lid not specified")
	case o.Print == saPrintNameOfGUID && len(args) == 0:
		return cmdutil.UsageErrorf("ERROR: guid not specified")
	}
	return nil
}

// parseParams reads the record field options.
func (o *saqueryOptions) parseParams() error {
	p := &o.p
	p.hopLimit, p.reversible, p.numbPath, p.qosClass, p.sl, p.proxyJoin = -1, -1, -1, -1, -1, -1
	if key, ok := o.Common.ConfigSAKey(); ok {
		o.SMKey = key // ibdiag.conf's sa_key; --smkey below wins
	}
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
		n, err := cmdutil.ParseUintArg(v.arg, v.max)
		if err != nil {
			return cmdutil.UsageErrorf("invalid --%s %q: %v", v.name, v.arg, err)
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
			return cmdutil.UsageErrorf("invalid --%s %q: %v", g.name, g.arg, err)
		}
		*g.dst = gid
	}
	if p.srcToDst != "" {
		if !strings.Contains(p.srcToDst, ":") {
			return cmdutil.UsageErrorf("invalid --src-to-dst %q: want <src>:<dst>", p.srcToDst)
		}
		p.numbPath = o.defaultNumbPath()
	}
	if p.sgidToDgid != "" {
		src, dst, ok := strings.Cut(p.sgidToDgid, "-")
		if !ok {
			return cmdutil.UsageErrorf("invalid --sgid-to-dgid %q: want <sgid>-<dgid>", p.sgidToDgid)
		}
		var err error
		if p.sgid, err = parseIPv6GID(src); err != nil {
			return cmdutil.UsageErrorf("invalid --sgid-to-dgid source %q: %v", src, err)
		}
		if p.dgid, err = parseIPv6GID(dst); err != nil {
			return cmdutil.UsageErrorf("invalid --sgid-to-dgid destination %q: %v", dst, err)
		}
		p.numbPath = o.defaultNumbPath()
	}
	return nil
}

// defaultNumbPath is the NumbPath --src-to-dst and --sgid-to-dgid select:
// 127, as infiniband-diags' saquery, or with --no-defaults what -n gave
// (-1: none).
func (o *saqueryOptions) defaultNumbPath() int64 {
	if o.NoDefaults {
		return o.p.numbPath
	}
	return 0x7f
}

// parseIPv6GID parses a GID in IPv6 form, as inet_pton(AF_INET6) does.
func parseIPv6GID(s string) (rdma.GID, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return rdma.GID{}, errors.New("want a GID in IPv6 form, like fe80::2:c903:0:1491")
	}
	return rdma.GID(a.As16()), nil
}
