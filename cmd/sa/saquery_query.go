package sa

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// saQuerier runs one saquery invocation.
type saQuerier struct {
	ctx  context.Context
	x    *madrpc.Transactor
	o    *saqueryOptions
	w    *bufio.Writer
	text saText
	json []any // records printed, for --json
	// nodes caches the NodeRecords, asked once for names and -m.
	nodes []*nodeRecord
}

func saqueryRun(o *saqueryOptions) error {
	names, err := o.Common.LoadNodeMap("saquery", o.IO.ErrOut)
	if err != nil {
		return err
	}
	x, _, err := o.Common.Open()
	if err != nil {
		return err
	}
	if _, err := x.SAPath(); err != nil {
		return fmt.Errorf("failed to bind to the SA: %w", err)
	}
	q := &saQuerier{ctx: o.Common.Context(), x: x, o: o, w: cmdutil.NewTableWriter(o.IO.Out)}
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
		return cmdutil.WriteJSONList(q.o.IO.Out, "records", q.json)
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
	if o.Command == saCmdClassPort || (o.Command == saCmdQuery && (o.Query.layout == cpiLayout || o.Query.layout == swirLayout)) {
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
		recs, err := q.getTable(mcmrLayout, 0, 0, nil)
		if err != nil {
			return err
		}
		for _, r := range recs {
			q.emit(mcGroupText{newMCMemberRecord(r)})
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
func (q *saQuerier) getTable(l *mad.Layout, mod uint32, mask uint64, rec []byte) ([][]byte, error) {
	return q.query(mad.MethodGetTable, l, mod, mask, rec)
}

// query is getTable with the method given: SubnAdmGet for --get.
func (q *saQuerier) query(m mad.Method, l *mad.Layout, mod uint32, mask uint64, rec []byte) ([][]byte, error) {
	name := saRecordName(l)
	res, err := q.x.QuerySA(q.ctx, &madrpc.SAQuery{Method: m, AttrID: l.ID, Name: name,
		AttrMod: mod, ComponentMask: mask, SMKey: q.o.SMKey, Record: rec})
	if err != nil {
		return nil, err
	}
	want := l.Size
	if len(res.Records) > 0 && res.RecordLen < want {
		return nil, fmt.Errorf("SubnAdm%s(%s): records of %d bytes, want at least %d", m, name, res.RecordLen, want)
	}
	return res.Records, nil
}

// askClassPortInfo gets the SA's ClassPortInfo.
func (q *saQuerier) askClassPortInfo() error {
	res, err := q.x.QuerySA(q.ctx, &madrpc.SAQuery{Method: mad.MethodGet, AttrID: cpiLayout.ID,
		Name: "ClassPortInfo", SMKey: q.o.SMKey})
	if err != nil {
		return err
	}
	if len(res.Records) == 0 || len(res.Records[0]) < cpiLayout.Size {
		return errors.New("short ClassPortInfo")
	}
	q.text.cpi = newClassPortInfo(res.Records[0])
	return nil
}

// allNodes returns every NodeRecord, asked once.
func (q *saQuerier) allNodes() ([]*nodeRecord, error) {
	if q.nodes != nil {
		return q.nodes, nil
	}
	recs, err := q.getTable(nodeRecordLayout, 0, 0, nil)
	if err != nil {
		return nil, err
	}
	q.nodes = make([]*nodeRecord, 0, len(recs))
	for _, r := range recs {
		q.nodes = append(q.nodes, newNodeRecord(r))
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
		return 0, cmdutil.UsageErrorf("Invalid lid specified: %q", name)
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
			if n.NodeInfo.NodeType == mad.NodeTypeCA {
				if o.Common.JSON {
					q.json = append(q.json, n)
					continue
				}
				fmt.Fprintf(q.w, "%6d  \"%s\"\n", n.LID, q.text.name(n.NodeInfo.NodeGUID, n.NodeDescription))
			}
		case saPrintNameOfLID:
			if n.LID == o.RequestedLID {
				q.printNodeRecord(n)
			}
		case saPrintNameOfGUID:
			if uint64(n.NodeInfo.PortGUID) == o.RequestedGUID {
				q.printNodeRecord(n)
			}
		default:
			name := q.text.name(n.NodeInfo.NodeGUID, n.NodeDescription)
			if o.Name == "" || n.descMatches(o.Name) || strncmp64(o.Name, []byte(name)) {
				q.printNodeRecord(n)
				if o.Print == saPrintUniqueLID {
					return nil
				}
			}
		}
	}
	return nil
}

// printNodeRecord prints one NodeRecord the way the node print mode asks.
func (q *saQuerier) printNodeRecord(n *nodeRecord) {
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
		fmt.Fprintf(q.w, "%s\n", q.text.name(n.NodeInfo.NodeGUID, n.NodeDescription))
	default:
		n.writeText(q.w, &q.text)
	}
}

// isSMRecords is -s: the PortInfoRecords with IsSM, then IsSMdisabled.
func (q *saQuerier) isSMRecords() error {
	for _, c := range []struct {
		head string
		mask uint32
	}{{"IsSM ports\n", mad.PortCapIsSM}, {"\nIsSMdisabled ports\n", mad.PortCapIsSMDisabled}} {
		s := newSelector(pirLayout)
		s.store("PortInfo.CapabilityMask", uint64(c.mask))
		if s.err != nil {
			return s.err
		}
		// Attribute modifier bit 31: match any of the mask's bits.
		recs, err := q.getTable(pirLayout, 1<<31, s.mask, s.rec)
		if err != nil {
			return err
		}
		if !q.o.Common.JSON {
			fmt.Fprint(q.w, c.head)
		}
		for _, r := range recs {
			pir := newPortInfoRecord(r)
			pir.brief = true
			q.emit(pir)
		}
	}
	return nil
}

// mcMembers is -m: every MCMemberRecord with the name of its port's
// node; with an MLID argument, only that group's member GIDs.
func (q *saQuerier) mcMembers() error {
	recs, err := q.getTable(mcmrLayout, 0, 0, nil)
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
		m := newMCMemberRecord(r)
		name := "<unknown>"
		for _, n := range nodes {
			if n.NodeInfo.PortGUID == m.PortGID.GUID() {
				name = q.text.name(n.NodeInfo.NodeGUID, n.NodeDescription)
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
			m.MGID, m.MLID, m.PortGID, m.scopeState(), m.ProxyJoin, name)
	}
	return nil
}

// saTextRecord is a decoded record saquery prints.
type saTextRecord interface {
	writeText(io.Writer, *saText)
}

// dumpAll asks for the records the selector selects and prints them all,
// each decoded by decode.
func dumpAll[R saTextRecord](q *saQuerier, s *selector, decode func([]byte) R) error {
	if s.err != nil {
		return s.err
	}
	q.o.applyAssigns(s.rec, &s.mask)
	method := mad.MethodGetTable
	if q.o.Get {
		method = mad.MethodGet
	}
	recs, err := q.query(method, s.l, 0, s.mask, s.rec)
	if err != nil {
		return err
	}
	for _, r := range recs {
		q.emit(decode(r))
	}
	return nil
}

// applyAssigns lays the MEMBER=VALUE selections parse made over the
// template rec, of the query's record type, and adds their mask bits.
func (o *saqueryOptions) applyAssigns(rec []byte, mask *uint64) {
	for _, a := range o.Assigns {
		name, _, _ := strings.Cut(a, "=")
		c, _ := o.Query.layout.Component(name)
		c.CopyValue(rec, o.assigned)
	}
	*mask |= o.assignedMask
}
