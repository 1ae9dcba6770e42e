package madrpc

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// Plan is a request a dry run kept from the transport because its method
// changes state (TransactorOptions.DryRun): what it is, the local port it
// would leave from, its route, and the attribute fields it would write.
type Plan struct {
	// Request names the request as errors do: "SubnSet(PortInfo)".
	Request string `json:"request"`
	// Device and Port are the local end port the MAD would leave from.
	Device string `json:"device"`
	Port   uint8  `json:"port"`
	// Class is the class the MAD would go as: SMI-DR on a directed route.
	Class string `json:"class"`
	// LID is the destination LID, or in a combined route the LID of the
	// LID-routed part; 0 for a directed route from this port.
	LID rdma.LID `json:"lid,omitempty"`
	// DR is the directed route's ports, 0 (the local port) first.
	DR []int `json:"directedRoute,omitempty"`
	// GID is the destination of a global route.
	GID *rdma.GID `json:"gid,omitempty"`
	// Attribute, AttrID and AttrMod are the attribute and its modifier.
	Attribute string     `json:"attribute"`
	AttrID    mad.AttrID `json:"attributeId"`
	AttrMod   uint32     `json:"attributeModifier"`
	// Fields are the attribute fields the MAD would write (see
	// PlannedFields), in the attribute's order.
	Fields []PlannedField `json:"fields"`
	// Data is the attribute data the MAD would carry.
	Data []byte `json:"-"`
}

// PlannedField is one attribute field a planned MAD writes.
type PlannedField struct {
	// Name is the field's name: the Go name of the generated attribute's
	// field ("LinkState"), "Entry[3].Valid" for a field of the fourth
	// element of a block, or "Data" for an attribute ibtool has no layout
	// of.
	Name string `json:"name"`
	// Value is the field's value; nil for fields wider than 64 bits.
	Value *uint64 `json:"value,omitempty"`
	// Text is the value as libibmad prints it ("Down", "0x0003"), on one
	// line; the bytes in hex for a wide field.
	Text string `json:"text"`
	// Was is the text of the value the sender read before, when it gave
	// what it read (Request.Before).
	Was string `json:"was,omitempty"`
}

// plan reports r to the DryRun hook instead of sending it, and returns the
// reply a caller sees: the request itself as a GetResp, marked DryRun, so
// code that reads a reply finds data and no port is said to have answered.
func (t *Transactor) plan(ctx context.Context, r *Request) (*Response, error) {
	r = t.withMKey(r)
	m := make([]byte, mad.Size)
	class, err := r.encode(m, 0)
	if err != nil {
		return nil, err
	}
	off, err := r.dataStart(class)
	if err != nil {
		return nil, err
	}
	end := mad.Size
	if class.IsSMP() {
		end = off + mad.SMPDataLen
	}
	if err := t.opts.DryRun(ctx, newPlan(t.tr.LocalPort(), r, class, m[off:end])); err != nil {
		return nil, fmt.Errorf("%v to %v: %w", r, r.Path, err)
	}
	m[3] = byte(mad.MethodGetResp)
	var h mad.Header
	h.UnmarshalBinary(m)
	return &Response{Header: h, MAD: m, DryRun: true, data: off, end: end}, nil
}

// newPlan describes r, going as class from local with data.
func newPlan(local mad.LocalPort, r *Request, class mad.Class, data []byte) *Plan {
	p := &Plan{
		Request:   r.String(),
		Device:    local.Device,
		Port:      local.Port,
		Class:     class.String(),
		LID:       r.Path.LID,
		GID:       r.Path.DGID,
		Attribute: r.Name,
		AttrID:    r.AttrID,
		AttrMod:   r.AttrMod,
		Data:      append([]byte(nil), data...),
	}
	if p.Attribute == "" {
		p.Attribute = fmt.Sprintf("%#04x", uint16(r.AttrID))
	}
	for _, port := range r.Path.DR {
		p.DR = append(p.DR, int(port))
	}
	p.Fields = PlannedFields(class, r.AttrID, p.Data, r.Before)
	return p
}

// PlannedFields returns the fields of data, the attribute data of a
// state-changing MAD of class c and attribute id, that a dry run shows,
// decoded through the generated layouts. With before (the attribute as
// read), those whose value differs from it, leaving out PortInfo's fields
// whose 0 asks for no change; without, those that are not zero (a
// counter reset's PortSelect and CounterSelect, a Set built from
// nothing). The elements of a block attribute (congestion control's
// tables) are named Entry[i].Field. Data of an attribute without a layout
// is one field, Data, in hex without its trailing zero bytes.
func PlannedFields(c mad.Class, id mad.AttrID, data, before []byte) []PlannedField {
	if c == mad.ClassSMIDirect {
		c = mad.ClassSMI
	}
	l := layoutOf(c, id)
	if l == nil {
		d := bytes.TrimRight(data, "\x00")
		if before != nil && bytes.Equal(d, bytes.TrimRight(before, "\x00")) {
			return nil
		}
		return []PlannedField{{Name: "Data", Text: hex.EncodeToString(d)}}
	}
	noChange := l.Class == mad.ClassSMI && l.ID == mad.AttrPortInfo
	out := appendPlanned(nil, "", l.Fields, data, before, noChange)
	if b := l.Block; b != nil {
		for i := 0; i < b.Count; i++ {
			el := b.ElementData(data, i)
			if el == nil {
				break
			}
			out = appendPlanned(out, "Entry["+strconv.Itoa(i)+"].", b.Element.Fields, el, b.ElementData(before, i), false)
		}
	}
	return out
}

// appendPlanned appends the fields a plan shows (PlannedFields), named
// with prefix.
func appendPlanned(out []PlannedField, prefix string, fields []mad.Field, data, before []byte, noChange bool) []PlannedField {
	for _, f := range fields {
		if (f.Offset+f.Width+7)/8 > len(data) {
			continue
		}
		v := planText(f, data)
		if before != nil {
			if (f.Offset+f.Width+7)/8 > len(before) || planText(f, before) == v {
				continue
			}
			if noChange && portInfoNoChange(f.Name) && f.Value(data) == 0 {
				continue
			}
		} else if isZero(f, data) {
			continue
		}
		pf := PlannedField{Name: prefix + f.Name, Text: v}
		if f.Width <= 64 {
			n := f.Value(data)
			pf.Value = &n
		}
		if before != nil {
			pf.Was = planText(f, before)
		}
		out = append(out, pf)
	}
	return out
}

// portInfoNoChange reports the PortInfo fields in which a Set's 0 asks for no
// change (IBA 14.2.5.6): the states and the enabled widths and speeds, as
// ibportstate and the port state tools write them.
func portInfoNoChange(name string) bool {
	switch name {
	case "LinkState", "PhysLinkState", "LinkDownDefState", "LinkWidthEnabled", "LinkSpeedEnabled", "LinkSpeedExtEnabled", "OperationalVLs":
		return true
	}
	return false
}

// planText is the field's value in data on one line: as libibmad prints
// it, read where the spec places the field; text without quotes; a
// capability mask in hex without its names; wide fields in hex.
func planText(f mad.Field, data []byte) string {
	f.DumpOffset = f.Offset
	switch {
	case f.Format == mad.FormatString:
		s := data[f.Offset/8 : (f.Offset+f.Width)/8]
		if i := bytes.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		return string(s)
	case f.Format == mad.FormatArray, f.Width > 64:
		return hex.EncodeToString(data[f.Offset/8 : (f.Offset+f.Width+7)/8])
	case f.Format == mad.FormatPortCapMask, f.Format == mad.FormatPortCapMask2:
		return "0x" + strconv.FormatUint(f.Value(data), 16)
	}
	return string(f.AppendValue(nil, data))
}

// isZero reports whether all the field's bits in data are 0.
func isZero(f mad.Field, data []byte) bool {
	if f.Width <= 64 {
		return f.Value(data) == 0
	}
	return len(bytes.TrimLeft(data[f.Offset/8:(f.Offset+f.Width+7)/8], "\x00")) == 0
}

// layoutOf returns the layout of attribute id of class c, or nil.
func layoutOf(c mad.Class, id mad.AttrID) *mad.Layout {
	for _, l := range mad.Layouts {
		if l.Class == c && l.ID == id && l.ID != 0 {
			return l
		}
	}
	return nil
}
