package rdmacm

import (
	"bufio"
	"bytes"
	"cmp"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
)

// GaiConfPath is glibc's configuration of getaddrinfo's sort.
const GaiConfPath = "/etc/gai.conf"

// GaiPrefixValue is one line of a table of getaddrinfo's RFC 3484 sort:
// the addresses of Prefix get Value (a label, a precedence or a scope).
type GaiPrefixValue struct {
	Prefix netip.Prefix
	Value  int
}

// GaiTables are the tables glibc's getaddrinfo sorts with: the policy
// table's labels and precedences (IPv6 prefixes; an IPv4 address is
// looked up as ::ffff:a.b.c.d) and the scopes of IPv4 addresses. Each
// is ordered longest prefix first; the first prefix holding an address
// gives its value.
type GaiTables struct {
	Labels     []GaiPrefixValue
	Precedence []GaiPrefixValue
	ScopesV4   []GaiPrefixValue
}

// DefaultGaiTables are glibc's tables when /etc/gai.conf sets none
// (RFC 3484's policy table, and scope 2 for 169.254.0.0/16 and
// 127.0.0.0/8).
func DefaultGaiTables() GaiTables {
	p := netip.MustParsePrefix
	return GaiTables{
		Labels: []GaiPrefixValue{
			{p("::1/128"), 0}, {p("::/96"), 3}, {p("::ffff:0:0/96"), 4},
			{p("2001::/32"), 7}, {p("2002::/16"), 2}, {p("fec0::/10"), 5},
			{p("fc00::/7"), 6}, {p("::/0"), 1},
		},
		Precedence: []GaiPrefixValue{
			{p("::1/128"), 50}, {p("::/96"), 20}, {p("::ffff:0:0/96"), 10},
			{p("2002::/16"), 30}, {p("::/0"), 40},
		},
		ScopesV4: []GaiPrefixValue{
			{p("169.254.0.0/16"), 2}, {p("127.0.0.0/8"), 2}, {p("0.0.0.0/0"), 14},
		},
	}
}

// ParseGaiConf reads gai.conf(5)'s label, precedence and scopev4 lines
// as glibc does: a table with a line replaces the default one, gets a
// catch-all entry (::/0 label 1, precedence 40; scope 14) unless a line
// gives one, and is ordered longest prefix first. A line glibc ignores
// (an unknown keyword, a bad address, prefix length or value) is
// skipped; reload is accepted and has no meaning here. The error is
// only the reader's.
func ParseGaiConf(r io.Reader) (GaiTables, error) {
	var labels, prec, scopes []GaiPrefixValue
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, _, _ := bytes.Cut(sc.Bytes(), []byte("#"))
		f := strings.Fields(string(line))
		if len(f) < 3 {
			continue
		}
		v, err := strconv.ParseUint(f[2], 10, 31)
		if err != nil {
			continue
		}
		switch f[0] {
		case "label", "precedence":
			pfx, ok := gaiPrefix(f[1], false)
			if !ok {
				continue
			}
			e := GaiPrefixValue{pfx, int(v)}
			if f[0] == "label" {
				labels = append(labels, e)
			} else {
				prec = append(prec, e)
			}
		case "scopev4":
			if pfx, ok := gaiPrefix(f[1], true); ok {
				scopes = append(scopes, GaiPrefixValue{pfx, int(v)})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return DefaultGaiTables(), err
	}
	t := DefaultGaiTables()
	if labels != nil {
		t.Labels = gaiTable(labels, netip.MustParsePrefix("::/0"), 1)
	}
	if prec != nil {
		t.Precedence = gaiTable(prec, netip.MustParsePrefix("::/0"), 40)
	}
	if scopes != nil {
		t.ScopesV4 = gaiTable(scopes, netip.MustParsePrefix("0.0.0.0/0"), 14)
	}
	return t, nil
}

// ReadGaiConf is ParseGaiConf of the file at path, or glibc's default
// tables when it cannot be read.
func ReadGaiConf(path string) GaiTables {
	f, err := os.Open(path)
	if err != nil {
		return DefaultGaiTables()
	}
	defer f.Close()
	t, _ := ParseGaiConf(f)
	return t
}

// gaiPrefix reads gai.conf's ADDR[/BITS]: an IPv6 address (bits up to
// 128, 128 without), or for scopev4 an IPv4 one (up to 32) or an
// IPv4-mapped IPv6 one (96 to 128, as the IPv4 prefix of bits-96).
func gaiPrefix(s string, v4 bool) (netip.Prefix, bool) {
	addr, bits, slash := strings.Cut(s, "/")
	a, err := netip.ParseAddr(addr)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, false
	}
	n := a.BitLen()
	if slash {
		b, err := strconv.ParseUint(bits, 10, 8)
		if err != nil {
			return netip.Prefix{}, false
		}
		n = int(b)
	}
	if v4 && a.Is4In6() {
		if n < 96 {
			return netip.Prefix{}, false
		}
		a, n = a.Unmap(), n-96
	}
	if a.Is4() != v4 {
		return netip.Prefix{}, false
	}
	p, err := a.Prefix(n)
	return p, err == nil
}

// gaiTable orders a table's lines longest prefix first and ends it with
// the catch-all when no line is one.
func gaiTable(t []GaiPrefixValue, all netip.Prefix, v int) []GaiPrefixValue {
	if !slices.ContainsFunc(t, func(e GaiPrefixValue) bool { return e.Prefix.Bits() == 0 }) {
		t = append(t, GaiPrefixValue{all, v})
	}
	slices.SortStableFunc(t, func(a, b GaiPrefixValue) int { return cmp.Compare(b.Prefix.Bits(), a.Prefix.Bits()) })
	return t
}

// lookup is the value of the first prefix holding a (IPv4 addresses
// mapped unless v4), or def.
func (t GaiTables) lookup(table []GaiPrefixValue, a netip.Addr, v4 bool, def int) int {
	if !v4 && a.Is4() {
		a = netip.AddrFrom16(a.As16())
	}
	for _, e := range table {
		if e.Prefix.Contains(a) {
			return e.Value
		}
	}
	return def
}
