package madrpc

import (
	"context"
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// SMP Gets answered by the SA (python-rdma's --sa): instead of asking the
// node, the transactor asks the subnet administrator for the record that
// holds the attribute (NodeInfo from the NodeRecord, PortInfo from the
// PortInfoRecord, ...) and hands back a response shaped as the SMP's.

// viaSARecord names the SA record that carries an SMP attribute: the
// record's layout, the field of it that embeds the attribute, and the
// components the SMP's attribute modifier selects. Everything else (the
// record's ID, template length, component mask bits and the attribute's
// place in the record) comes from the generated layouts.
type viaSARecord struct {
	record *mad.Layout
	// embed is the record's field that holds the attribute ("NodeInfo"
	// for NodeInfo.BaseVersion, ...).
	embed string
	// name, when set, names the record in messages instead of the
	// layout (infiniband-diags' "LFTRecord").
	name string
	// sel returns the components the attribute modifier selects by,
	// besides the LID, and their values.
	sel func(mod uint32) []componentValue
	// pick, when set, prefers one of several records (otherwise the
	// first is taken): PortInfo's port 0 of a switch.
	pick componentValue
}

// componentValue is a value for the component of a record named.
type componentValue struct {
	name  string
	value uint64
}

// viaSA lists each SMP attribute the SA's records carry and its record.
// The attribute modifiers are the SMPs' (IBA 14.2.5). A slice the compiler
// lays out as data: a map would be built at every start of every tool.
var viaSA = []struct {
	attr mad.AttrID
	viaSARecord
}{
	{mad.AttrNodeInfo, viaSARecord{record: (*mad.NodeRecord)(nil).Layout(), embed: "NodeInfo"}},
	{mad.AttrNodeDescription, viaSARecord{record: (*mad.NodeRecord)(nil).Layout(), embed: "NodeDescription"}},
	{mad.AttrPortInfo, viaSARecord{record: (*mad.PortInfoRecord)(nil).Layout(), embed: "PortInfo", sel: func(mod uint32) []componentValue {
		if mod == 0 {
			// The port the SMP would enter: a CA's one record, or a
			// switch's port 0 (pick).
			return nil
		}
		return []componentValue{{"PortNum", uint64(mod & 0xff)}}
	}, pick: componentValue{"PortNum", 0}}},
	{mad.AttrSwitchInfo, viaSARecord{record: (*mad.SwitchInfoRecord)(nil).Layout(), embed: "SwitchInfo"}},
	{mad.AttrGUIDInfo, viaSARecord{record: (*mad.GUIDInfoRecord)(nil).Layout(), embed: "GUIDInfo", sel: func(mod uint32) []componentValue {
		return []componentValue{{"BlockNum", uint64(mod & 0xff)}}
	}}},
	{mad.AttrPKeyTable, viaSARecord{record: (*mad.PKeyTableRecord)(nil).Layout(), embed: "PKeyTable", sel: func(mod uint32) []componentValue {
		sel := []componentValue{{"BlockNum", uint64(mod & 0xffff)}}
		if port := mod >> 16 & 0xff; port != 0 {
			sel = append(sel, componentValue{"PortNum", uint64(port)})
		}
		return sel
	}}},
	{mad.AttrSLtoVLMappingTable, viaSARecord{record: (*mad.SLtoVLMappingTableRecord)(nil).Layout(), embed: "SLToVLMappingTable", sel: func(mod uint32) []componentValue {
		return []componentValue{{"InputPortNum", uint64(mod >> 8 & 0xff)}, {"OutputPortNum", uint64(mod & 0xff)}}
	}}},
	{mad.AttrVLArbitrationTable, viaSARecord{record: (*mad.VLArbitrationTableRecord)(nil).Layout(), embed: "VLArbitrationTable", sel: func(mod uint32) []componentValue {
		return []componentValue{{"OutputPortNum", uint64(mod & 0xff)}, {"BlockNum", uint64(mod >> 16 & 0xff)}}
	}}},
	{mad.AttrLinearForwardingTable, viaSARecord{record: (*mad.LinearForwardingTableRecord)(nil).Layout(), embed: "LinearForwardingTable", name: "LFTRecord",
		sel: func(mod uint32) []componentValue { return []componentValue{{"BlockNum", uint64(mod & 0xffff)}} }}},
	{mad.AttrMulticastForwardingTable, viaSARecord{record: (*mad.MulticastForwardingTableRecord)(nil).Layout(), embed: "MulticastForwardingTable", name: "MFTRecord",
		sel: func(mod uint32) []componentValue {
			return []componentValue{{"Position", uint64(mod >> 28)}, {"BlockNum", uint64(mod & 0x1ff)}}
		}}},
	{mad.AttrSMInfo, viaSARecord{record: (*mad.SMInfoRecord)(nil).Layout(), embed: "SMInfo"}},
}

// viaSAFor returns the record that carries an SMP attribute.
func viaSAFor(id mad.AttrID) (*viaSARecord, bool) {
	for i := range viaSA {
		if viaSA[i].attr == id {
			return &viaSA[i].viaSARecord, true
		}
	}
	return nil, false
}

// recordName names the record in messages.
func (m *viaSARecord) recordName() string {
	if m.name != "" {
		return m.name
	}
	return m.record.Name
}

// template returns the record that selects the LID and what the
// attribute modifier selects, and its component mask.
func (m *viaSARecord) template(lid rdma.LID, mod uint32) ([]byte, uint64, error) {
	rec, err := m.record.New().AppendBinary(nil)
	if err != nil {
		return nil, 0, err
	}
	sel := []componentValue{{m.record.Fields[0].Name, uint64(lid)}} // every record here starts with its LID
	if m.sel != nil {
		sel = append(sel, m.sel(mod)...)
	}
	var mask uint64
	for _, s := range sel {
		c, ok := m.record.Component(s.name)
		if !ok {
			return nil, 0, fmt.Errorf("%s has no component %s", m.record.Name, s.name)
		}
		c.SetValue(rec, s.value)
		mask |= c.Mask
	}
	return rec, mask, nil
}

// embedded returns the attribute's place in the record, in bytes: where
// the embed field's first field lies in the record, less where it lies
// in the attribute, and the attribute's size.
func (m *viaSARecord) embedded(attr *mad.Layout) (off, n int, err error) {
	prefix := m.embed + "."
	for _, f := range m.record.Fields {
		sub, ok := strings.CutPrefix(f.Name, prefix)
		if !ok {
			continue
		}
		af, ok := attr.Field(sub)
		if !ok {
			break
		}
		return (f.Offset - af.Offset) / 8, attr.Size, nil
	}
	return 0, 0, fmt.Errorf("%s embeds no %s", m.record.Name, attr.Name)
}

// smpLayout returns the layout of the SMP attribute with the ID, or nil.
func smpLayout(id mad.AttrID) *mad.Layout {
	for _, l := range mad.Layouts {
		if l.Class == mad.ClassSMI && l.ID == id {
			return l
		}
	}
	return nil
}

// NoRecordError reports that the SA has no record for an SMP asked through
// it.
type NoRecordError struct {
	Request string // the SMP: "SubnGet(NodeInfo)"
	To      string // its target: "Lid 12"
	Record  string // the record asked for: "NodeRecord"
}

func (e *NoRecordError) Error() string {
	return fmt.Sprintf("%s to %s through the SA: no %s matches", e.Request, e.To, e.Record)
}

// doViaSA answers the SMP r from the SA's record for it. A Set, or a Get
// of an attribute no record carries, is sent as the SMP it is, as
// python-rdma's SATransactor does (it wraps SubnGet only, and falls back
// to the SMP for the attributes it has no record for).
func (t *Transactor) doViaSA(ctx context.Context, r *Request) (*Response, error) {
	m, ok := viaSAFor(r.AttrID)
	if !ok || r.Method != mad.MethodGet {
		return t.transact(ctx, r)
	}
	end, err := t.viaSALID(ctx, r.Path)
	if err != nil {
		return nil, fmt.Errorf("%v to %v through the SA: %w", r, r.Path, err)
	}
	lid := end.lid
	if lid == 0 {
		return nil, fmt.Errorf("%v to %v: the SA's records are by LID, and the target has none", r, r.Path)
	}
	attr := smpLayout(r.AttrID)
	if attr == nil {
		return nil, fmt.Errorf("%v to %v: no layout of the attribute", r, r.Path)
	}
	off, n, err := m.embedded(attr)
	if err != nil {
		return nil, err
	}
	var smKey uint64
	if t.opts.SA != nil {
		smKey = t.opts.SA.SMKey
	}
	tmpl, mask, err := m.template(lid, r.AttrMod)
	if err != nil {
		return nil, err
	}
	res, err := t.QuerySA(ctx, &SAQuery{Method: mad.MethodGetTable, AttrID: m.record.ID, Name: m.recordName(),
		ComponentMask: mask, Record: tmpl, SMKey: smKey})
	if err != nil {
		return nil, fmt.Errorf("%v to %v through the SA: %w", r, r.Path, err)
	}
	pick, hasPick := m.record.Component(m.pick.name)
	var rec []byte
	for _, c := range res.Records {
		if len(c) < off+n {
			continue
		}
		if rec == nil {
			rec = c
		}
		if hasPick && pick.Value(c) == m.pick.value {
			rec = c
			break
		}
	}
	if rec == nil {
		return nil, &NoRecordError{Request: r.String(), To: r.Path.String(), Record: m.recordName()}
	}
	// The response an SMP would have brought: a SubnGetResp with the
	// attribute in the SMP data area, directed with the D bit in its
	// status when the request was (smpdump prints that status).
	out := make([]byte, mad.Size)
	h := mad.Header{BaseVersion: mad.BaseVersion, MgmtClass: mad.ClassSMI, ClassVersion: 1, Method: mad.MethodGetResp,
		TID: res.Response.Header.TID, AttrID: r.AttrID, AttrMod: r.AttrMod}
	if r.Path.IsDR() {
		h.MgmtClass, h.Status = mad.ClassSMIDirect, mad.DirectionBit
	}
	h.MarshalTo(out)
	copy(out[mad.SMPDataOffset:], rec[off:off+n])
	if (r.AttrID == mad.AttrNodeInfo || r.AttrID == mad.AttrPortInfo) && end.port != 0 {
		// A directed SMP's NodeInfo and PortInfo name the port it
		// entered by (LocalPortNum, whatever port PortInfo is of); the
		// SA's record names the port the SM's did, which on parallel
		// links may be another.
		if f, ok := attr.Field("LocalPortNum"); ok {
			out[mad.SMPDataOffset+f.Offset/8] = end.port
		}
	}
	return &Response{Header: h, MAD: out, Tries: res.Response.Tries, data: mad.SMPDataOffset, end: mad.SMPDataOffset + mad.SMPDataLen}, nil
}
