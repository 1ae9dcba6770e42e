package mad

import (
	"bytes"
	"fmt"
	"strings"
)

// Attribute is a decoded MAD attribute: a generated struct from
// attributes.tbl (NodeInfo, PortInfo, PortCounters, ...).
type Attribute interface {
	// Layout describes the attribute's fields.
	Layout() *Layout
	// UnmarshalBinary decodes the attribute from the MAD's data.
	UnmarshalBinary(data []byte) error
	// AppendBinary appends the attribute's encoding.
	AppendBinary(b []byte) ([]byte, error)
}

// Layout is an attribute's identity and fields, generated from
// attributes.tbl. Elements of a block (a congestion log event, a table
// entry) have no attribute ID of their own and ID 0.
type Layout struct {
	Name   string
	Class  Class
	ID     AttrID
	Size   int // bytes up to the end of the last field
	Fields []Field
	// New returns a new, zero attribute of this layout.
	New func() Attribute
	// Block places the elements of a block attribute (a congestion
	// control table, a config space access); nil for other attributes.
	// Fields leaves them out.
	Block *Block
	// components are an SA attribute's components; nil for other
	// attributes.
	components *componentTable
}

// Field returns the field with the Go name, or false.
func (l *Layout) Field(name string) (Field, bool) {
	for _, f := range l.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Decode returns a new attribute of the layout decoded from data, or a zero
// one where data is shorter than the layout: callers that show a decode
// beside a dump of the same bytes keep the dump either way.
func (l *Layout) Decode(data []byte) Attribute {
	a := l.New()
	_ = a.UnmarshalBinary(data)
	return a
}

// LayoutByName returns the layout of the attribute with the name, compared
// without regard to case, or nil.
func LayoutByName(name string) *Layout {
	for _, l := range Layouts {
		if strings.EqualFold(l.Name, name) {
			return l
		}
	}
	return nil
}

// ShortDataError is returned when a MAD's data is too short for the
// attribute decoded from it.
type ShortDataError struct {
	Attr      string
	Want, Got int // bytes
}

func (e *ShortDataError) Error() string {
	return fmt.Sprintf("%s: %d bytes of data, want %d", e.Attr, e.Got, e.Want)
}

// getBits reads b, at most 8 bytes, as a big-endian number and returns the
// bits shift places up from its least significant bit, masked.
func getBits(b []byte, shift int, mask uint64) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v >> uint(shift) & mask
}

// putBits stores x&mask shift places up in b, a big-endian number of at
// most 8 bytes, leaving b's other bits alone.
func putBits(b []byte, shift int, mask, x uint64) {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	v = v&^(mask<<uint(shift)) | (x&mask)<<uint(shift)
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
}

// NodeDescString is NodeDescription's 64 bytes of text, NUL-padded.
type NodeDescString [64]byte

// String returns the text up to the first NUL.
func (s NodeDescString) String() string {
	b := s[:]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// MarshalText returns the text up to the first NUL.
func (s NodeDescString) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText stores text, which must fit in 64 bytes, NUL-padded.
func (s *NodeDescString) UnmarshalText(text []byte) error {
	if len(text) > len(s) {
		return fmt.Errorf("node description %q: longer than %d bytes", text, len(s))
	}
	*s = NodeDescString{}
	copy(s[:], text)
	return nil
}
