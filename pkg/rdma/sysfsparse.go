package rdma

import (
	"bytes"
	"math"
	"strings"
)

// Buffer sizes libibumad (rdma-core v44, libibumad/sysfs.c) reads sysfs
// files into. A value keeps at most size-1 bytes of the file.
const (
	umadNumBuf  = 32 // sys_read_uint, sys_read_guid
	umadGIDBuf  = 64 // sys_read_gid
	umadNameBuf = 20 // UMAD_CA_NAME_LEN: link_layer, umadN/ibdev
)

// CString turns the bytes of a sysfs file into the string libibumad's
// sys_read_string leaves in a buffer of bufSize bytes: at most bufSize-1
// bytes (bufSize <= 0: all of them), up to the first NUL, and cut at the
// last newline. For the one-line values the kernel writes this drops the
// trailing newline.
func CString(b []byte, bufSize int) string {
	if bufSize > 0 && len(b) > bufSize-1 {
		b = b[:bufSize-1]
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// ParseSysfsUint parses the leading number of a sysfs value the way C's
// strtoul(s, NULL, 0) does, as libibumad reads every numeric file:
// leading white space, an optional sign, then 0x and hex digits, 0 and
// octal digits, or decimal digits; the rest ("4: ACTIVE", " Gb/sec") is
// ignored, so "2.5 Gb/sec (1X SDR)" is 2 and "0x1a" is 26. A negative
// number wraps as in C and a number too large saturates at the maximum.
// Unlike strtoul, text with no number at all is an error, not 0.
func ParseSysfsUint(s string) (uint64, error) {
	v, _, ok := cStrtoul(s, 0)
	if !ok {
		return 0, &ParseError{Kind: "sysfs number", Input: s, Reason: "want a number such as 4, 0x1a or \"4: ACTIVE\""}
	}
	return v, nil
}

// ParseSysfsGUID parses a GUID as the kernel writes it (0002:c903:00a1:b2c4)
// the way libibumad's sys_read_guid does: the first four fields separated by
// ':', space, tab or newline, each read as hex by strtoul and cut to 16
// bits. Fewer than four fields, or a field with no hex digit, is an error.
func ParseSysfsGUID(s string) (GUID, error) {
	f, ok := sysfsHexFields(s, 4)
	if !ok {
		return 0, &ParseError{Kind: "sysfs GUID", Input: s, Reason: "want four colon-separated groups of hex digits"}
	}
	var v uint64
	for _, x := range f {
		v = v<<16 | uint64(x)
	}
	return GUID(v), nil
}

// ParseSysfsGID parses a GID as the kernel writes it (eight groups of four
// hex digits) the way libibumad's sys_read_gid does, with the same field
// rules as ParseSysfsGUID.
func ParseSysfsGID(s string) (GID, error) {
	f, ok := sysfsHexFields(s, 8)
	if !ok {
		return GID{}, &ParseError{Kind: "sysfs GID", Input: s, Reason: "want eight colon-separated groups of hex digits"}
	}
	var g GID
	for i, x := range f {
		g[2*i] = byte(x >> 8)
		g[2*i+1] = byte(x)
	}
	return g, nil
}

// sysfsHexFields splits s with strsep(": \t\n") semantics and parses the
// first n fields as hex, each cut to 16 bits.
func sysfsHexFields(s string, n int) ([]uint16, bool) {
	out := make([]uint16, 0, n)
	rest, more := s, true
	for len(out) < n {
		if !more {
			return nil, false // strsep returned NULL
		}
		var tok string
		if i := strings.IndexAny(rest, ": \t\n"); i >= 0 {
			tok, rest = rest[:i], rest[i+1:]
		} else {
			tok, more = rest, false
		}
		v, _, ok := cStrtoul(tok, 16)
		if !ok {
			return nil, false
		}
		out = append(out, uint16(v))
	}
	return out, true
}

// cStrtoul is C's strtoul for base 0 or 16. It returns the value, the
// number of bytes consumed, and whether any digit was found.
func cStrtoul(s string, base int) (uint64, int, bool) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if (base == 0 || base == 16) && i+2 < len(s) &&
		s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && hexVal(s[i+2]) < 16 {
		base = 16
		i += 2
	} else if base == 0 {
		base = 10
		if i < len(s) && s[i] == '0' {
			base = 8
		}
	}
	start := i
	var v uint64
	overflow := false
	for i < len(s) {
		d := hexVal(s[i])
		if d >= base {
			break
		}
		if v > (math.MaxUint64-uint64(d))/uint64(base) {
			overflow = true
		}
		v = v*uint64(base) + uint64(d)
		i++
	}
	if i == start {
		return 0, 0, false
	}
	switch {
	case overflow:
		v = math.MaxUint64
	case neg:
		v = -v
	}
	return v, i, true
}

func hexVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}

// isCSpace is C's isspace in the C locale.
func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}
