package rdma

import (
	"fmt"
	"strconv"
	"strings"
)

// GUID is a 64-bit globally unique identifier of a node, port or system image.
type GUID uint64

// String formats the GUID as infiniband-diags prints it: 0x and 16 hex digits.
func (g GUID) String() string { return fmt.Sprintf("0x%016x", uint64(g)) }

// Colon formats the GUID as sysfs writes it: four groups of four hex digits.
func (g GUID) Colon() string {
	v := uint64(g)
	return fmt.Sprintf("%04x:%04x:%04x:%04x", v>>48, (v>>32)&0xffff, (v>>16)&0xffff, v&0xffff)
}

// MarshalText renders the GUID in its 0x form, so JSON carries it as a string.
func (g GUID) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText parses any form ParseGUID accepts.
func (g *GUID) UnmarshalText(b []byte) error {
	v, err := ParseGUID(string(b))
	if err != nil {
		return err
	}
	*g = v
	return nil
}

// ParseGUID parses a GUID written as 0x followed by 1 to 16 hex digits, or as
// four colon-separated groups of 1 to 4 hex digits (the sysfs form).
func ParseGUID(s string) (GUID, error) {
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		if len(parts) != 4 {
			return 0, &ParseError{Kind: "GUID", Input: s, Reason: "want four colon-separated groups of hex digits"}
		}
		var v uint64
		for _, p := range parts {
			if len(p) == 0 || len(p) > 4 || !isHex(p) {
				return 0, &ParseError{Kind: "GUID", Input: s, Reason: "each group must be 1 to 4 hex digits"}
			}
			n, _ := strconv.ParseUint(p, 16, 16)
			v = v<<16 | n
		}
		return GUID(v), nil
	}
	h, ok := cutHexPrefix(s)
	if !ok {
		return 0, &ParseError{Kind: "GUID", Input: s, Reason: "want 0x followed by hex digits, or the colon form 0002:c903:00a1:b2c4"}
	}
	if len(h) == 0 || len(h) > 16 || !isHex(h) {
		return 0, &ParseError{Kind: "GUID", Input: s, Reason: "want 1 to 16 hex digits after 0x"}
	}
	n, _ := strconv.ParseUint(h, 16, 64)
	return GUID(n), nil
}

func cutHexPrefix(s string) (string, bool) {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return s[2:], true
	}
	return s, false
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
