package mad

import (
	"bytes"
	"fmt"
	"math/bits"
	"slices"
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
	// index is sorted by name (TestComponentIndexSorted): a generated
	// map literal would be built by the package's init at every start
	// of every tool.
	index []componentName
}

// componentName is one lower-case name of a component and the index of
// its field.
type componentName struct {
	name  string
	field int
}

// find returns the field index of the component a lower-case name gives.
func (t *componentTable) find(name string) (int, bool) {
	i, ok := slices.BinarySearchFunc(t.index, name, func(n componentName, name string) int {
		return strings.Compare(n.name, name)
	})
	if !ok {
		return 0, false
	}
	return t.index[i].field, true
}

// Component returns the SA record's field a name gives, and the component
// mask bits that select it. The name is compared without regard to case
// and may be the Go name ("NodeInfo.PortGUID"), the JSON name or
// python-rdma's member name ("nodeInfo.portGUID", "portInfo.masterSMLID");
// an embedded attribute of one field is also found by its own name
// ("nodeDescription", "SLToVLMappingTable"). It reports false for an unknown name and for layouts that are not SA
// attributes.
func (l *Layout) Component(name string) (Component, bool) {
	t := l.components
	if t == nil {
		return Component{}, false
	}
	i, ok := t.find(strings.ToLower(strings.TrimSpace(name)))
	if !ok {
		return Component{}, false
	}
	return t.component(l, i), true
}

// Components returns every component of an SA record, in component bit
// order, or nil for layouts that are not SA attributes.
func (l *Layout) Components() []Component {
	t := l.components
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

// saRecordAlias returns the record an other name in lower case gives: the
// short names of infiniband-diags' saquery (and python-rdma's, which adds
// MPR), and their long names where they are not the spec's.
func saRecordAlias(name string) (string, bool) {
	switch name {
	case "nr":
		return "NodeRecord", true
	case "pir":
		return "PortInfoRecord", true
	case "sl2vl":
		return "SLtoVLMappingTableRecord", true
	case "sl2vltablerecord":
		return "SLtoVLMappingTableRecord", true
	case "swir":
		return "SwitchInfoRecord", true
	case "swi":
		return "SwitchInfoRecord", true
	case "lftr":
		return "LinearForwardingTableRecord", true
	case "lftrecord":
		return "LinearForwardingTableRecord", true
	case "mftr":
		return "MulticastForwardingTableRecord", true
	case "mftrecord":
		return "MulticastForwardingTableRecord", true
	case "smir":
		return "SMInfoRecord", true
	case "lr":
		return "LinkRecord", true
	case "gir":
		return "GUIDInfoRecord", true
	case "sr":
		return "ServiceRecord", true
	case "pktr":
		return "PKeyTableRecord", true
	case "p_keytablerecord":
		return "PKeyTableRecord", true
	case "pr":
		return "PathRecord", true
	case "vlar":
		return "VLArbitrationTableRecord", true
	case "mcmr":
		return "MCMemberRecord", true
	case "iir":
		return "InformInfoRecord", true
	case "mpr":
		return "MultiPathRecord", true
	}
	return "", false
}

// SARecordLayout returns the layout of the SA attribute a name gives,
// compared without regard to case: the spec's name ("NodeRecord",
// "P_KeyTableRecord"), saquery's short or long name ("NR", "PIR", "SL2VL",
// "LFTRecord", ... and "MPR" for MultiPathRecord) or python-rdma's class
// name ("SANodeRecord"). It returns nil for any other name.
func SARecordLayout(name string) *Layout {
	n := strings.ToLower(strings.TrimSpace(name))
	if long, ok := saRecordAlias(n); ok {
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
