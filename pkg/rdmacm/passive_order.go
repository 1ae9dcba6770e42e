package rdmacm

import (
	"net"
	"net/netip"
	"slices"
)

// WildcardSources are the source addresses a UDP socket connected to
// each wildcard gets (glibc's getaddrinfo connects one to every address
// it sorts); an invalid Addr is a connect that failed. Linux connects a
// socket aimed at a wildcard to the loopback address, so the sources are
// ::1 and 127.0.0.1 while the loopback interface is up, neither while
// it is down without addresses (ENETUNREACH), and 127.0.0.1 alone when
// it was taken down after being up (it keeps its IPv4 address).
type WildcardSources struct {
	IPv6, IPv4 netip.Addr
}

// LocalSources connects a UDP socket to [::] and one to 0.0.0.0 and
// gives the source address each got.
func LocalSources() WildcardSources {
	return WildcardSources{IPv6: udpSource("udp6", netip.IPv6Unspecified()), IPv4: udpSource("udp4", netip.IPv4Unspecified())}
}

func udpSource(network string, a netip.Addr) netip.Addr {
	c, err := net.DialUDP(network, nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(a, 9)))
	if err != nil {
		return netip.Addr{}
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap()
}

// PassiveOrder sorts the wildcards [::] and 0.0.0.0 as glibc's
// getaddrinfo sorts a passive lookup's answer (rfc3484_sort, starting
// from [::], 0.0.0.0) with the sources src and the tables t. Of RFC
// 3484's rules, 1 (a destination with a source first), 2 (matching
// scope), 5 (matching label), 6 (higher precedence) and 8 (smaller
// scope) can tell the two apart; 3, 4 and 7 look at the flags and
// interface of an IPv6 source, which are the loopback's for both, and
// 9 compares addresses of one family only.
func PassiveOrder(src WildcardSources, t GaiTables) []netip.Addr {
	c := []gaiCandidate{
		{dst: netip.IPv6Unspecified(), src: src.IPv6, index: 0},
		{dst: netip.IPv4Unspecified(), src: src.IPv4, index: 1},
	}
	slices.SortFunc(c, func(a, b gaiCandidate) int { return t.compare(a, b) })
	return []netip.Addr{c[0].dst, c[1].dst}
}

// gaiCandidate is one address being sorted: where it goes, the source a
// connect got (invalid if none), and its place in getaddrinfo's answer.
type gaiCandidate struct {
	dst, src netip.Addr
	index    int
}

// compare is rfc3484_sort's comparison for the rules PassiveOrder names.
func (t GaiTables) compare(a, b gaiCandidate) int {
	// Rule 1: avoid unusable destinations.
	if r := prefer(a.src.IsValid(), b.src.IsValid()); r != 0 {
		return r
	}
	as, bs := t.scope(a.dst), t.scope(b.dst)
	if a.src.IsValid() {
		// Rule 2: prefer matching scope.
		if r := prefer(as == t.scope(a.src), bs == t.scope(b.src)); r != 0 {
			return r
		}
		// Rule 5: prefer matching label.
		if r := prefer(t.label(a.dst) == t.label(a.src), t.label(b.dst) == t.label(b.src)); r != 0 {
			return r
		}
	}
	// Rule 6: prefer higher precedence.
	if ap, bp := t.precedence(a.dst), t.precedence(b.dst); ap != bp {
		return bp - ap
	}
	// Rule 8: prefer smaller scope.
	if as != bs {
		return as - bs
	}
	// Rule 10: leave the order unchanged.
	return a.index - b.index
}

// prefer orders the one of two for which its condition holds first.
func prefer(a, b bool) int {
	switch {
	case a && !b:
		return -1
	case !a && b:
		return 1
	}
	return 0
}

// scope is glibc's get_scope: an IPv6 address's multicast scope, 2 for
// link-local and loopback, 5 for site-local, 14 otherwise; an IPv4
// address's from the scopev4 table.
func (t GaiTables) scope(a netip.Addr) int {
	if a.Is4() {
		return t.lookup(t.ScopesV4, a, true, 14)
	}
	switch {
	case a.IsMulticast():
		return int(a.As16()[1] & 0xf)
	case a.IsLinkLocalUnicast(), a.IsLoopback():
		return 2
	case a.As16()[0] == 0xfe && a.As16()[1]&0xc0 == 0xc0:
		return 5
	}
	return 14
}

// label and precedence are glibc's get_label and get_precedence: no
// line holding the address gives INT_MAX and 0.
func (t GaiTables) label(a netip.Addr) int      { return t.lookup(t.Labels, a, false, 1<<31-1) }
func (t GaiTables) precedence(a netip.Addr) int { return t.lookup(t.Precedence, a, false, 0) }
