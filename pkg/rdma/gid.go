package rdma

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
)

// GID is a 128-bit global identifier: a 64-bit subnet prefix and a 64-bit
// interface ID (for InfiniBand ports, the port GUID).
type GID [16]byte

// NewGID builds a GID from a subnet prefix and an interface ID.
func NewGID(prefix uint64, guid GUID) GID {
	var g GID
	binary.BigEndian.PutUint64(g[:8], prefix)
	binary.BigEndian.PutUint64(g[8:], uint64(guid))
	return g
}

// Prefix returns the subnet prefix, the upper 64 bits.
func (g GID) Prefix() uint64 { return binary.BigEndian.Uint64(g[:8]) }

// GUID returns the interface ID, the lower 64 bits.
func (g GID) GUID() GUID { return GUID(binary.BigEndian.Uint64(g[8:])) }

// IsZero reports whether every byte of the GID is zero.
func (g GID) IsZero() bool { return g == GID{} }

// String formats the GID as infiniband-diags prints it: glibc inet_ntop's
// IPv6 form, e.g. fe80::2:c903:0:1492. Like inet_ntop, a GID whose first 96
// bits are zero and whose next 16 are not (an "IPv4-compatible" address,
// a port without a subnet prefix) ends in dotted quad: ::0.32.0.1.
func (g GID) String() string {
	if isZero(g[:12]) && (g[12] != 0 || g[13] != 0) {
		return fmt.Sprintf("::%d.%d.%d.%d", g[12], g[13], g[14], g[15])
	}
	return netip.AddrFrom16(g).String()
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Long formats the GID as sysfs writes it: eight groups of four hex digits.
func (g GID) Long() string {
	var b strings.Builder
	const hexd = "0123456789abcdef"
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		for _, c := range g[i : i+2] {
			b.WriteByte(hexd[c>>4])
			b.WriteByte(hexd[c&0xf])
		}
	}
	return b.String()
}

// MarshalText renders the GID in its short IPv6 form, so JSON carries a string.
func (g GID) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText parses any form ParseGID accepts.
func (g *GID) UnmarshalText(b []byte) error {
	v, err := ParseGID(string(b))
	if err != nil {
		return err
	}
	*g = v
	return nil
}

// ParseGID parses a GID in IPv6 notation (full or compressed, as sysfs and
// infiniband-diags write it). A zone (%...) is not part of a GID; scoped GIDs
// are parsed by pkg/endport.
func ParseGID(s string) (GID, error) {
	if strings.ContainsAny(s, "%") {
		return GID{}, &ParseError{Kind: "GID", Input: s, Reason: "a GID has no %scope here"}
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return GID{}, &ParseError{Kind: "GID", Input: s, Reason: "want an IPv6-style address such as fe80::2:c903:0:1492"}
	}
	return GID(a.As16()), nil
}
