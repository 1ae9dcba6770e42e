package mad

import (
	"bytes"
	"strconv"
)

// Format says how the dumper prints a field, after libibmad's dump
// functions (mad_dump_<name> in libibmad/dump.c).
type Format uint8

// Field formats.
const (
	FormatUint                  Format = iota // decimal (uint)
	FormatHex                                 // 0x and two hex digits a byte (hex)
	FormatRHex                                // two hex digits a byte, no 0x (rhex)
	FormatNodeType                            // Channel Adapter, Switch, Router (node_type)
	FormatString                              // the bytes up to the first NUL, quoted (string)
	FormatArray                               // every byte as two hex digits (array)
	FormatLinkWidth                           // 4X (linkwidth)
	FormatLinkWidthEnabled                    // 1X or 4X (linkwidthen)
	FormatLinkWidthSupported                  // 1X or 4X, "(IBA extension)" for odd sets (linkwidthsup)
	FormatLinkSpeed                           // 10.0 Gbps (linkspeed)
	FormatLinkSpeedEnabled                    // 2.5 Gbps or 10.0 Gbps (linkspeeden)
	FormatLinkSpeedSupported                  // as enabled (linkspeedsup)
	FormatLinkSpeedExt                        // 14.0625 Gbps (linkspeedext)
	FormatLinkSpeedExtSupported               // 14.0625 Gbps or 25.78125 Gbps (linkspeedextsup)
	FormatLinkSpeedExtEnabled                 // as supported, 30 is "disabled" (linkspeedexten)
	FormatPortState                           // Down, Initialize, Armed, Active (portstate)
	FormatPhysPortState                       // Polling, LinkUp, ... (physportstate)
	FormatLinkDownDefState                    // Sleep, Polling (linkdowndefstate)
	FormatMTU                                 // 256 to 4096 (mtu)
	FormatVLCap                               // VL0-7 (vlcap)
	FormatOperVLs                             // VL0-7, "No change" (opervls)
	FormatPortCapMask                         // hex, then one tabbed line per capability (portcapmask)
	FormatPortCapMask2                        // the same for CapabilityMask2 (portcapmask2)
)

// Field is one field of an attribute: its names, its place in the
// attribute data in IBA bit order (bit 0 is the most significant bit of
// byte 0), and how libibmad prints it.
type Field struct {
	Name  string // Go struct field
	JSON  string // JSON name, lowerCamelCase
	Label string // libibmad's label; empty for fields it does not dump
	// Offset and Width place the field, in bits.
	Offset, Width int
	// DumpOffset is where libibmad reads the field for its dump: Offset,
	// except for a few fields its table places in the wrong convention.
	DumpOffset int
	Format     Format
}

// Uint returns the field's value from attribute data, read where libibmad
// reads it (DumpOffset); fields wider than 64 bits, and fields past the end
// of data, give 0.
func (f Field) Uint(data []byte) uint64 {
	first := f.DumpOffset / 8
	last := (f.DumpOffset + f.Width - 1) / 8
	if f.Width > 64 || last >= len(data) {
		return 0
	}
	n := last - first + 1
	if n > 8 {
		return 0
	}
	return getBits(data[first:last+1], n*8-f.DumpOffset%8-f.Width, 1<<f.Width-1)
}

// AppendValue appends the field's value from data as libibmad prints it.
func (f Field) AppendValue(b, data []byte) []byte {
	switch f.Format {
	case FormatString:
		return f.appendString(b, data)
	case FormatArray:
		return f.appendArray(b, data)
	}
	if f.Width > 64 {
		return f.appendArray(b, data)
	}
	v := f.Uint(data)
	bytesWide := (f.Width + 7) / 8
	switch f.Format {
	case FormatHex:
		b = append(b, "0x"...)
		return appendHex(b, v, bytesWide*2)
	case FormatRHex:
		return appendHex(b, v, bytesWide*2)
	case FormatUint:
		return strconv.AppendUint(b, v, 10)
	}
	return appendNamed(b, f.Format, uint32(v))
}

// appendString is mad_dump_string: the text up to its NUL in quotes, cut
// to the field's size less one (the C buffer's NUL), so a full 64-byte
// description loses its last characters and its closing quote.
func (f Field) appendString(b, data []byte) []byte {
	start := min(f.DumpOffset/8, len(data))
	s := data[start:min(len(data), (f.DumpOffset+f.Width)/8)]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	room := f.Width/8 - 1 // snprintf's size, less the NUL
	out := make([]byte, 0, len(s)+2)
	out = append(out, '\'')
	out = append(out, s...)
	out = append(out, '\'')
	if len(out) > room {
		out = out[:room]
	}
	return append(b, out...)
}

// appendArray is mad_dump_array: each byte as two hex digits.
func (f Field) appendArray(b, data []byte) []byte {
	start := min(f.DumpOffset/8, len(data))
	for _, c := range data[start:min(len(data), (f.DumpOffset+f.Width)/8)] {
		b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendHex appends v in lower-case hex, zero-padded to digits.
func appendHex(b []byte, v uint64, digits int) []byte {
	for i := digits - 1; i >= 0; i-- {
		shift := uint(i * 4)
		if shift >= 64 {
			b = append(b, '0')
			continue
		}
		b = append(b, hexDigits[v>>shift&0xf])
	}
	return b
}

// Value returns the field's value from attribute data at its spec offset
// (Offset, not DumpOffset); fields wider than 64 bits, and fields past the
// end of data, give 0.
func (f Field) Value(data []byte) uint64 {
	g := f
	g.DumpOffset = f.Offset
	return g.Uint(data)
}

// SetValue stores v, cut to the field's width, at the field's spec offset
// in data. Fields wider than 64 bits, and fields past the end of data, are
// left alone.
func (f Field) SetValue(data []byte, v uint64) {
	first := f.Offset / 8
	last := (f.Offset + f.Width - 1) / 8
	if f.Width > 64 || last >= len(data) || last-first+1 > 8 {
		return
	}
	putBits(data[first:last+1], (last-first+1)*8-f.Offset%8-f.Width, 1<<f.Width-1, v)
}
