package mad

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
)

// Format says how the dumper prints a field, after libibmad's dump
// functions.
type Format uint8

// Field formats.
const (
	FormatUint     Format = iota // decimal (mad_dump_uint)
	FormatHex                    // 0x and two hex digits a byte (mad_dump_hex)
	FormatNodeType               // Channel Adapter, Switch, Router (mad_dump_node_type)
	FormatString                 // the bytes up to the first NUL, quoted (mad_dump_string)
)

// Field is one field of an attribute: its label as libibmad prints it, its
// place in the attribute data in IBA bit order (bit 0 is the most
// significant bit of byte 0), and its format.
type Field struct {
	Label  string
	Offset int // bits from the start of the attribute data
	Width  int // bits
	Format Format
}

// Uint returns the field's value from attribute data; fields wider than 64
// bits have no integer value and return 0.
func (f Field) Uint(data []byte) uint64 {
	if f.Width > 64 || (f.Offset+f.Width+7)/8 > len(data) {
		return 0
	}
	if f.Offset%8 == 0 && f.Width%8 == 0 {
		var v uint64
		for _, b := range data[f.Offset/8 : (f.Offset+f.Width)/8] {
			v = v<<8 | uint64(b)
		}
		return v
	}
	// Narrow fields sit inside one 32-bit word.
	if f.Offset/32*4+4 > len(data) {
		return 0
	}
	word := binary.BigEndian.Uint32(data[f.Offset/32*4:])
	shift := 32 - f.Offset%32 - f.Width
	return uint64(word>>shift) & (1<<f.Width - 1)
}

// AppendValue appends the field's value from data in its format.
func (f Field) AppendValue(b, data []byte) []byte {
	if f.Format == FormatString {
		s := data[f.Offset/8 : min(len(data), (f.Offset+f.Width)/8)]
		if i := bytes.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		// mad_dump_string prints into a buffer of the field's size, so
		// a 64-byte description loses its last characters to the quotes.
		b = append(b, '\'')
		if max := f.Width/8 - 2; len(s) > max {
			s = s[:max]
		}
		b = append(b, s...)
		if len(s) < f.Width/8-2 {
			b = append(b, '\'')
		}
		return b
	}
	v := f.Uint(data)
	bytesWide := (f.Width + 7) / 8
	switch f.Format {
	case FormatHex:
		return fmt.Appendf(b, "0x%0*x", bytesWide*2, v)
	case FormatNodeType:
		switch v {
		case 1:
			return append(b, "Channel Adapter"...)
		case 2:
			return append(b, "Switch"...)
		case 3:
			return append(b, "Router"...)
		}
		return fmt.Appendf(b, "?(%d)?", v)
	}
	return strconv.AppendUint(b, v, 10)
}

// labelWidth is the column libibmad pads labels to with dots.
const labelWidth = 32

// AppendDotted appends "Label:" and dots up to libibmad's column, the
// layout of mad_dump_field and of smpquery's own lines.
func AppendDotted(b []byte, label string) []byte {
	b = append(b, label...)
	b = append(b, ':')
	if n := labelWidth - len(label); n > 0 {
		b = append(b, bytes.Repeat([]byte{'.'}, n)...)
	}
	return b
}

// AppendFields appends one "Label:.....value" line per field, as
// libibmad's _dump_fields does.
func AppendFields(b []byte, fields []Field, data []byte) []byte {
	for _, f := range fields {
		b = AppendDotted(b, f.Label)
		b = f.AppendValue(b, data)
		b = append(b, '\n')
	}
	return b
}

// SMP attribute IDs (IBA table 145).
const (
	AttrNodeDesc AttrID = 0x0010
	AttrNodeInfo AttrID = 0x0011
	AttrPortInfo AttrID = 0x0015
	AttrSMInfo   AttrID = 0x0020
)

// NodeInfoFields is the layout of NodeInfo (IBA 14.2.5.3), with
// libibmad's labels and formats (fields.c, IB_NODE_*_F).
var NodeInfoFields = []Field{
	{"BaseVers", 0, 8, FormatUint},
	{"ClassVers", 8, 8, FormatUint},
	{"NodeType", 16, 8, FormatNodeType},
	{"NumPorts", 24, 8, FormatUint},
	{"SystemGuid", 32, 64, FormatHex},
	{"Guid", 96, 64, FormatHex},
	{"PortGuid", 160, 64, FormatHex},
	{"PartCap", 224, 16, FormatUint},
	{"DevId", 240, 16, FormatHex},
	{"Revision", 256, 32, FormatHex},
	{"LocalPort", 288, 8, FormatUint},
	{"VendorId", 296, 24, FormatHex},
}

// NodeDescField is NodeDescription (IBA 14.2.5.2): 64 bytes of text.
var NodeDescField = Field{"NodeDesc", 0, 64 * 8, FormatString}
