package mad

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// SATemplate builds an SA query's template record and component mask from
// MEMBER=VALUE settings, as python-rdma's saquery takes them
// ("nodeInfo.portGUID=0x0002c90300012345", "LID=12"): the record, l.Size
// bytes, is zero but for the values set, and the mask has the bits of the
// components set. Members are named as Layout.Component finds them. A
// value is decimal or 0x hex; a GUID may also be written 0002:c903:0001:2345;
// a GID (MGID, PortGID, DGID, ...) in IPv6 form; NodeDescription and
// ServiceName take text; other fields wider than 64 bits take 0x and hex
// digits. A member set twice keeps its last value.
func SATemplate(l *Layout, assigns []string) (rec []byte, mask uint64, err error) {
	if l == nil || l.components == nil {
		name := "a nil layout"
		if l != nil {
			name = l.Name
		}
		return nil, 0, fmt.Errorf("%s is not an SA record", name)
	}
	rec = make([]byte, l.Size)
	for _, a := range assigns {
		name, value, ok := strings.Cut(a, "=")
		if !ok {
			return nil, 0, fmt.Errorf("%s: %q: want MEMBER=VALUE", l.Name, a)
		}
		c, ok := l.Component(name)
		if !ok {
			return nil, 0, unknownMember(l, strings.TrimSpace(name))
		}
		if err := c.set(rec, value); err != nil {
			return nil, 0, fmt.Errorf("%s: %s=%s: %w", l.Name, c.Member, value, err)
		}
		mask |= c.Mask
	}
	return rec, mask, nil
}

// unknownMember says the record has no such member, suggests the one
// member that ends in the name ("portGUID" for "nodeInfo.portGUID"), and
// lists them all.
func unknownMember(l *Layout, name string) error {
	cs := l.Components()
	members := make([]string, len(cs))
	var near []string
	for i, c := range cs {
		members[i] = c.Member
		if name != "" && strings.HasSuffix(strings.ToLower(c.Member), "."+strings.ToLower(name)) {
			near = append(near, c.Member)
		}
	}
	hint := ""
	if len(near) == 1 {
		hint = fmt.Sprintf(" (did you mean %s?)", near[0])
	}
	return fmt.Errorf("%s has no member %q%s; its members: %s", l.Name, name, hint, strings.Join(members, ", "))
}

// set stores the value, read as the component's kind, in the record.
func (c Component) set(rec []byte, value string) error {
	if c.kind != kindString {
		value = strings.TrimSpace(value)
	}
	switch c.kind {
	case kindString:
		return c.setBytes(rec, []byte(value), "text")
	case kindBytes:
		b, err := parseHexBytes(value, c.Width/8)
		if err != nil {
			return err
		}
		return c.setBytes(rec, b, "bytes")
	case kindGID:
		if _, ok := cutHex(value); ok {
			b, err := parseHexBytes(value, c.Width/8)
			if err != nil {
				return err
			}
			return c.setBytes(rec, b, "bytes")
		}
		gid, err := rdma.ParseGID(value)
		if err != nil {
			return err
		}
		return c.setBytes(rec, gid[:], "bytes")
	case kindGUID:
		if strings.Contains(value, ":") {
			guid, err := rdma.ParseGUID(value)
			if err != nil {
				return err
			}
			c.SetValue(rec, uint64(guid))
			return nil
		}
	}
	v, err := parseUint(value)
	if err != nil {
		return err
	}
	if c.Width < 64 && v>>c.Width != 0 {
		return fmt.Errorf("%d does not fit in %d bits", v, c.Width)
	}
	c.SetValue(rec, v)
	return nil
}

// setBytes stores b at the start of the component, zero-padded.
func (c Component) setBytes(rec, b []byte, what string) error {
	n := c.Width / 8
	if len(b) > n {
		return fmt.Errorf("%d bytes of %s, room for %d", len(b), what, n)
	}
	dst := rec[c.Offset/8 : c.Offset/8+n]
	clear(dst)
	copy(dst, b)
	return nil
}

var errNoValue = errors.New("no value")

// parseUint reads a decimal number, or 0x and hex digits. A leading zero
// is decimal, never octal.
func parseUint(s string) (uint64, error) {
	if s == "" {
		return 0, errNoValue
	}
	if h, ok := cutHex(s); ok {
		v, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			return 0, fmt.Errorf("want 0x and 1 to 16 hex digits")
		}
		return v, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want a decimal number or 0x and hex digits")
	}
	return v, nil
}

// parseHexBytes reads 0x and up to 2n hex digits as an n-byte big-endian
// number.
func parseHexBytes(s string, n int) ([]byte, error) {
	h, ok := cutHex(s)
	switch {
	case s == "":
		return nil, errNoValue
	case !ok || h == "":
		return nil, fmt.Errorf("want 0x and up to %d hex digits", 2*n)
	case len(h) > 2*n:
		return nil, fmt.Errorf("%d hex digits, room for %d", len(h), 2*n)
	}
	if len(h)%2 == 1 {
		h = "0" + h
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("want 0x and up to %d hex digits", 2*n)
	}
	out := make([]byte, n)
	copy(out[n-len(b):], b)
	return out, nil
}

func cutHex(s string) (string, bool) {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return s[2:], true
	}
	return s, false
}

// CopyValue copies the component's value, any width, from the record src
// to the record dst; both must hold the component.
func (c Component) CopyValue(dst, src []byte) {
	if c.Width <= 64 {
		c.SetValue(dst, c.Value(src))
		return
	}
	start, end := c.Offset/8, (c.Offset+c.Width)/8
	copy(dst[start:end], src[start:end])
}

// SetBytes stores b, no longer than the component, at the component's
// start in the record, zero-padded: a GID, a key, a description.
func (c Component) SetBytes(rec, b []byte) error { return c.setBytes(rec, b, "bytes") }

// ComponentMask returns the component mask bits of the named members of
// an SA record (generated from attributes.tbl).
func (l *Layout) ComponentMask(members ...string) uint64 {
	var m uint64
	for _, name := range members {
		c, ok := l.Component(name)
		if !ok {
			panic("mad: " + l.Name + " has no member " + name)
		}
		m |= c.Mask
	}
	return m
}
