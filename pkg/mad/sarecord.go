package mad

import (
	"bytes"
	"fmt"
	"math/bits"
	"sort"
	"strings"
)

// Component is a field of an SA record and the component mask bits that
// select it (IBA 15.2.5): the n-th component of a record is its n-th field
// in the spec's table, reserved fields counted, and a field of an embedded
// attribute (NodeRecord's NodeInfo) counts on from the attribute's first
// bit. A query's template record holds the values of the components its
// mask selects.
type Component struct {
	// Field places the component in the record: Offset and Width in
	// bits from the record's start. Fields of an embedded attribute are
	// named "NodeInfo.PortGUID".
	Field
	// Member is python-rdma's name of the field ("nodeInfo.portGUID",
	// "portInfo.masterSMLID"), the name saquery's MEMBER=VALUE takes.
	Member string
	// Bit is the component mask bit, the lowest when Mask has more than
	// one (PathRecord's ServiceID is bits 0 and 1).
	Bit int
	// Mask has the component mask bits that select the field.
	Mask uint64

	kind valueKind
}

// valueKind says how SATemplate reads a component's value.
type valueKind uint8

const (
	kindUint   valueKind = iota // decimal or 0x hex, up to 64 bits
	kindGUID                    // 0x hex, decimal, or the colon form 0002:c903:0001:2345
	kindGID                     // IPv6 form, or 0x and up to 32 hex digits
	kindString                  // text, NUL-padded
	kindBytes                   // 0x and hex digits, right-aligned
)

// componentInfo is the generated part of a Component: the rest is the
// Layout field it describes.
type componentInfo struct {
	member string
	mask   uint64
	kind   valueKind
}

// componentTable is an SA attribute's components, one for each field of
// its Layout, and the lower-case names that find them.
type componentTable struct {
	infos []componentInfo
	index map[string]int
}

// Component returns the SA record's field a name gives, and the component
// mask bits that select it. The name is compared without regard to case
// and may be the Go name ("NodeInfo.PortGUID"), the JSON name or
// python-rdma's member name ("nodeInfo.portGUID", "portInfo.masterSMLID");
// an embedded attribute of one field is also found by its own name
// ("nodeDescription", "SLToVLMappingTable"). It reports false for an unknown name and for layouts that are not SA
// attributes.
func (l *Layout) Component(name string) (Component, bool) {
	t := saComponents[l]
	if t == nil {
		return Component{}, false
	}
	i, ok := t.index[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return Component{}, false
	}
	return t.component(l, i), true
}

// Components returns every component of an SA record, in component bit
// order, or nil for layouts that are not SA attributes.
func (l *Layout) Components() []Component {
	t := saComponents[l]
	if t == nil {
		return nil
	}
	cs := make([]Component, len(t.infos))
	for i := range t.infos {
		cs[i] = t.component(l, i)
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Bit < cs[j].Bit })
	return cs
}

func (t *componentTable) component(l *Layout, i int) Component {
	info := t.infos[i]
	return Component{Field: l.Fields[i], Member: info.member, Bit: bits.TrailingZeros64(info.mask), Mask: info.mask, kind: info.kind}
}

// saRecordAliases are the other names of the SA records: the short names
// of infiniband-diags' saquery (and python-rdma's, which adds MPR), and
// their long names where they are not the spec's.
var saRecordAliases = map[string]string{
	"nr":               "NodeRecord",
	"pir":              "PortInfoRecord",
	"sl2vl":            "SLtoVLMappingTableRecord",
	"sl2vltablerecord": "SLtoVLMappingTableRecord",
	"swir":             "SwitchInfoRecord",
	"swi":              "SwitchInfoRecord",
	"lftr":             "LinearForwardingTableRecord",
	"lftrecord":        "LinearForwardingTableRecord",
	"mftr":             "MulticastForwardingTableRecord",
	"mftrecord":        "MulticastForwardingTableRecord",
	"smir":             "SMInfoRecord",
	"lr":               "LinkRecord",
	"gir":              "GUIDInfoRecord",
	"sr":               "ServiceRecord",
	"pktr":             "PKeyTableRecord",
	"p_keytablerecord": "PKeyTableRecord",
	"pr":               "PathRecord",
	"vlar":             "VLArbitrationTableRecord",
	"mcmr":             "MCMemberRecord",
	"iir":              "InformInfoRecord",
	"mpr":              "MultiPathRecord",
}

// SARecordLayout returns the layout of the SA attribute a name gives,
// compared without regard to case: the spec's name ("NodeRecord",
// "P_KeyTableRecord"), saquery's short or long name ("NR", "PIR", "SL2VL",
// "LFTRecord", ... and "MPR" for MultiPathRecord) or python-rdma's class
// name ("SANodeRecord"). It returns nil for any other name.
func SARecordLayout(name string) *Layout {
	n := strings.ToLower(strings.TrimSpace(name))
	if long, ok := saRecordAliases[n]; ok {
		n = long
	}
	for _, l := range SALayouts {
		if strings.EqualFold(l.Name, n) || "sa"+strings.ToLower(l.Name) == n {
			return l
		}
	}
	return nil
}

// ServiceNameString is a ServiceRecord's 64 bytes of service name,
// NUL-padded.
type ServiceNameString [64]byte

// String returns the name up to the first NUL.
func (s ServiceNameString) String() string {
	b := s[:]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// MarshalText returns the name up to the first NUL.
func (s ServiceNameString) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText stores text, which must fit in 64 bytes, NUL-padded.
func (s *ServiceNameString) UnmarshalText(text []byte) error {
	if len(text) > len(s) {
		return fmt.Errorf("service name %q: longer than %d bytes", text, len(s))
	}
	*s = ServiceNameString{}
	copy(s[:], text)
	return nil
}
