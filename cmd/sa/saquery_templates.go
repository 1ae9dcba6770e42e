package sa

import (
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// selector builds a query's template record and component mask, as
// saquery's CHECK_AND_SET_VAL macros build them: components are named as
// Layout.Component finds them, and the first unknown name is kept in err.
type selector struct {
	l    *mad.Layout
	rec  []byte
	mask uint64
	err  error
}

func newSelector(l *mad.Layout) *selector {
	rec, err := l.New().AppendBinary(nil)
	return &selector{l: l, rec: rec, err: err}
}

func (s *selector) component(name string) (mad.Component, bool) {
	c, ok := s.l.Component(name)
	if !ok && s.err == nil {
		s.err = fmt.Errorf("%s has no component %s", s.l.Name, name)
	}
	return c, ok
}

// put sets the component to v, cut to its width, without selecting it.
func (s *selector) put(name string, v uint64) {
	if c, ok := s.component(name); ok {
		c.SetValue(s.rec, v)
	}
}

// sel selects the components.
func (s *selector) sel(names ...string) {
	for _, n := range names {
		if c, ok := s.component(n); ok {
			s.mask |= c.Mask
		}
	}
}

// store sets the component to v, cut to its width, and selects it.
func (s *selector) store(name string, v uint64) {
	s.put(name, v)
	s.sel(name)
}

// set stores v and selects the component when v differs from unset,
// compared at bits, the width of saquery's C field (which may differ from
// the component's: saquery sets the SL through the 16 bits it shares with
// the QoS class).
func (s *selector) set(name string, v, unset int64, bits int) {
	m := uint64(1)<<bits - 1
	if uint64(v)&m != uint64(unset)&m {
		s.store(name, uint64(v)&m)
	}
}

// setGID stores a GID that is not zero and selects its component.
func (s *selector) setGID(name string, g rdma.GID) {
	if g.IsZero() {
		return
	}
	if c, ok := s.component(name); ok {
		if err := c.SetBytes(s.rec, g[:]); err != nil && s.err == nil {
			s.err = err
		}
		s.mask |= c.Mask
	}
}

// setSelected stores a value byte, a 2-bit selector over 6 bits of value
// as saquery takes -M, -R and --pkt_lifetime, when not 0, and selects both
// components.
func (s *selector) setSelected(selName, name string, v uint64) {
	if uint8(v) != 0 {
		s.store(selName, uint64(uint8(v)>>6))
		s.store(name, v&0x3f)
	}
}

func (q *saQuerier) classPortInfo(_ []string) error {
	q.emit(q.text.cpi)
	return nil
}

// genericRecords asks for the records of a type saquery has no view of,
// selected by MEMBER=VALUE only.
func (q *saQuerier) genericRecords(_ []string) error {
	l := q.o.Query.layout
	return dumpAll(q, newSelector(l), func(b []byte) genericRecord {
		a := l.New()
		a.UnmarshalBinary(b)
		return genericRecord{attr: a, raw: b}
	})
}

func (q *saQuerier) nodeRecords(args []string) error {
	s, err := q.lidSelector(args, nodeRecordLayout, "LID")
	if err != nil {
		return err
	}
	return dumpAll(q, s, newNodeRecord)
}

// lidPart is a number of a "lid/a/b" argument: the component it sets and
// saquery's width of it.
type lidPart struct {
	name string
	bits int
}

// lidSelector is the selector of the record types whose template starts
// with a LID and up to two more numbers from a "lid/a/b" argument.
func (q *saQuerier) lidSelector(args []string, l *mad.Layout, lidName string, parts ...lidPart) (*selector, error) {
	s := newSelector(l)
	var lid uint16
	vals := []int64{-1, -1}
	if len(args) > 0 {
		var err error
		if lid, vals[0], vals[1], err = q.lidAndPorts(args[0]); err != nil {
			return nil, err
		}
	}
	s.set(lidName, int64(lid), 0, 16)
	for i, p := range parts {
		s.set(p.name, vals[i], -1, p.bits)
	}
	return s, nil
}

func (q *saQuerier) portInfoRecords(args []string) error {
	s, err := q.lidSelector(args, pirLayout, "EndportLID", lidPart{"PortNum", 8}, lidPart{"Options", 8})
	if err != nil {
		return err
	}
	return dumpAll(q, s, newPortInfoRecord)
}

func (q *saQuerier) sl2vlRecords(args []string) error {
	s, err := q.lidSelector(args, q.o.Query.layout, "LID", lidPart{"InputPortNum", 8}, lidPart{"OutputPortNum", 8})
	if err != nil {
		return err
	}
	return dumpAll(q, s, newSL2VLRecord)
}

func (q *saQuerier) pkeyRecords(args []string) error {
	s, err := q.lidSelector(args, q.o.Query.layout, "LID", lidPart{"PortNum", 8}, lidPart{"BlockNum", 16})
	if err != nil {
		return err
	}
	return dumpAll(q, s, newPKeyTableRecord)
}

func (q *saQuerier) vlArbRecords(args []string) error {
	s, err := q.lidSelector(args, q.o.Query.layout, "LID", lidPart{"OutputPortNum", 8}, lidPart{"BlockNum", 8})
	if err != nil {
		return err
	}
	return dumpAll(q, s, newVLArbRecord)
}

func (q *saQuerier) lftRecords(args []string) error {
	s, err := q.lidSelector(args, q.o.Query.layout, "LID", lidPart{"BlockNum", 16})
	if err != nil {
		return err
	}
	return dumpAll(q, s, newLFTRecord)
}

func (q *saQuerier) guidInfoRecords(args []string) error {
	s, err := q.lidSelector(args, q.o.Query.layout, "LID", lidPart{"BlockNum", 8})
	if err != nil {
		return err
	}
	return dumpAll(q, s, newGUIDInfoRecord)
}

// mftRecords takes "mlid/position/block": saquery keeps the block's low 9
// bits and the position's low 4, the two sharing 16 bits.
func (q *saQuerier) mftRecords(args []string) error {
	s, err := q.lidSelector(args, q.o.Query.layout, "LID", lidPart{"Position", 8}, lidPart{"BlockNum", 16})
	if err != nil {
		return err
	}
	return dumpAll(q, s, newMFTRecord)
}

func (q *saQuerier) switchInfoRecords(args []string) error {
	s, err := q.lidSelector(args, swirLayout, "LID")
	if err != nil {
		return err
	}
	return dumpAll(q, s, newSwitchInfoRecord)
}

func (q *saQuerier) smInfoRecords(args []string) error {
	s, err := q.lidSelector(args, q.o.Query.layout, "LID")
	if err != nil {
		return err
	}
	return dumpAll(q, s, newSMInfoRecord)
}

func (q *saQuerier) linkRecords(args []string) error {
	s := newSelector(linkRecordLayout)
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
	s.set("FromLID", int64(from), 0, 16)
	s.set("FromPort", fromPort, -1, 8)
	s.set("ToLID", int64(to), 0, 16)
	s.set("ToPort", toPort, -1, 8)
	return dumpAll(q, s, newLinkRecord)
}

func (q *saQuerier) serviceRecords(_ []string) error {
	return dumpAll(q, newSelector(q.o.Query.layout), newServiceRecord)
}

func (q *saQuerier) informInfoRecords(args []string) error {
	s := newSelector(q.o.Query.layout)
	if len(args) > 0 {
		g, err := parseIPv6GID(args[0])
		if err != nil {
			return cmdutil.UsageErrorf("Invalid SubscriberGID specified: %q", args[0])
		}
		s.setGID("SubscriberGID", g)
	}
	return dumpAll(q, s, newInformInfoRecord)
}

// pathRecords builds the PathRecord template from the path options as
// saquery's query_path_records does, quirks kept: the hop limit sets the
// 32 bits it shares with RawTraffic and the flow label, of which -F gives
// 8 bits; --sl sets the 16 bits it shares with the QoS class, which -Q
// then sets or clears; -n sets the byte it shares with -r.
func (q *saQuerier) pathRecords(_ []string) error {
	p := &q.o.p
	s := newSelector(pathRecordLayout)
	s.set("ServiceID", int64(p.serviceID), 0, 64)
	s.setGID("SGID", p.sgid)
	s.setGID("DGID", p.dgid)
	s.set("SLID", int64(p.slid), 0, 16)
	s.set("DLID", int64(p.dlid), 0, 16)
	var hopFlow uint32
	if uint32(p.hopLimit) != 0xffffffff {
		hopFlow = uint32(p.hopLimit)
		s.sel("HopLimit")
	}
	if uint8(p.flowLabel) != 0 {
		hopFlow |= uint32(uint8(p.flowLabel)) << 8
		s.sel("FlowLabel")
	}
	s.put("RawTraffic", uint64(hopFlow>>31))
	s.put("FlowLabel", uint64(hopFlow>>8))
	s.put("HopLimit", uint64(hopFlow))
	s.set("TClass", int64(p.tclass), 0, 8)
	var numb uint8
	if uint8(p.numbPath) != 0xff {
		numb = uint8(p.numbPath)
		s.sel("NumbPath")
	}
	if uint8(p.reversible) != 0xff {
		numb |= uint8(p.reversible) << 7
		s.sel("Reversible")
	}
	s.put("Reversible", uint64(numb>>7))
	s.put("NumbPath", uint64(numb))
	s.set("PKey", int64(p.pkey), 0, 16)
	s.set("SL", p.sl, -1, 16)
	var qos uint64
	if p.qosClass != -1 {
		qos = uint64(p.qosClass)
		s.sel("QOSClass")
	}
	s.put("QOSClass", qos)
	s.setSelected("MTUSelector", "MTU", p.mtu)
	s.setSelected("RateSelector", "Rate", p.rate)
	s.setSelected("PacketLifeTimeSelector", "PacketLifeTime", p.pktLife)
	return dumpAll(q, s, newPathRecord)
}

// mcMemberRecords builds the MCMemberRecord template from the options as
// saquery's query_mcmember_records does: -J sets the byte it shares with
// --scope.
func (q *saQuerier) mcMemberRecords(_ []string) error {
	p := &q.o.p
	s := newSelector(mcmrLayout)
	s.setGID("MGID", p.mgid)
	s.setGID("PortGID", p.gid)
	s.set("MLID", int64(p.mlid), 0, 16)
	s.set("QKey", int64(p.qkey), 0, 32)
	s.setSelected("MTUSelector", "MTU", p.mtu)
	s.setSelected("RateSelector", "Rate", p.rate)
	s.setSelected("PacketLifeTimeSelector", "PacketLifeTime", p.pktLife)
	s.set("TClass", int64(p.tclass), 0, 8)
	s.set("PKey", int64(p.pkey), 0, 16)
	s.set("SL", p.sl, -1, 8)
	s.set("FlowLabel", int64(p.flowLabel), 0, 8)
	s.set("HopLimit", p.hopLimit, -1, 8)
	var scopeState uint8
	if uint8(p.joinState) != 0 {
		scopeState = uint8(p.joinState)
		s.sel("JoinState")
	}
	if uint8(p.scope) != 0 {
		scopeState |= uint8(p.scope) << 4
		s.sel("Scope")
	}
	s.put("Scope", uint64(scopeState>>4))
	s.put("JoinState", uint64(scopeState))
	if uint8(p.proxyJoin) != 0xff {
		s.store("ProxyJoin", uint64(uint8(p.proxyJoin)))
	}
	return dumpAll(q, s, newMCMemberRecord)
}

// multiPathRecords asks the SA for the paths between source and
// destination GIDs in one SubnAdmGetMulti(MultiPathRecord), itself sent
// with RMPP, and prints the PathRecords of the answer as -p prints them.
// --numb_path and --reversible select as for PathRecords; any member of
// the record as MEMBER=VALUE. An ibtool addition: infiniband-diags'
// saquery has no MultiPathRecord.
func (q *saQuerier) multiPathRecords(args []string) error {
	if len(args) != 2 {
		return cmdutil.UsageErrorf("MultiPathRecord: want <sgid>[,<sgid>...] <dgid>[,<dgid>...], got %d argument(s)", len(args))
	}
	var gids []rdma.GID
	var counts [2]int
	for i, list := range args {
		for _, g := range strings.Split(list, ",") {
			gid, err := parseIPv6GID(g)
			if err != nil {
				return cmdutil.UsageErrorf("MultiPathRecord: invalid GID %q: %v", g, err)
			}
			gids = append(gids, gid)
			counts[i]++
		}
	}
	s := newSelector(q.o.Query.layout)
	first, _ := s.component("SDGID")
	// The SDGIDs run from the first on to the end of the record; the SA
	// header takes 56 bytes of the MAD. opensm takes at most 16.
	maxGIDs := (mad.Size - 56 - first.Offset/8) / (first.Width / 8)
	if len(gids) > maxGIDs {
		return cmdutil.UsageErrorf("MultiPathRecord: %d GIDs; at most %d", len(gids), maxGIDs)
	}
	s.store("SGIDCount", uint64(counts[0]))
	s.store("DGIDCount", uint64(counts[1]))
	s.setGID("SDGID", gids[0])
	p := &q.o.p
	if p.numbPath != -1 {
		s.store("NumbPath", uint64(p.numbPath))
	}
	if p.reversible != -1 {
		s.store("Reversible", uint64(p.reversible&1))
	}
	q.o.applyAssigns(s.rec, &s.mask)
	if s.err != nil {
		return s.err
	}
	rec := s.rec
	for _, g := range gids[1:] {
		rec = append(rec, g[:]...)
	}
	res, err := q.x.QuerySA(q.ctx, &madrpc.SAQuery{Method: mad.MethodGetMulti, AttrID: s.l.ID,
		Name: s.l.Name, ComponentMask: s.mask, SMKey: q.o.SMKey, Record: rec})
	if err != nil {
		return err
	}
	if len(res.Records) > 0 && res.RecordLen < pathRecordLayout.Size {
		return fmt.Errorf("SubnAdmGetMulti(MultiPathRecord): records of %d bytes, want PathRecords of %d", res.RecordLen, pathRecordLayout.Size)
	}
	for _, r := range res.Records {
		q.emit(newPathRecord(r))
	}
	return nil
}
