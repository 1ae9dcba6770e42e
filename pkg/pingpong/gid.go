package pingpong

import (
	"fmt"
	"strings"
)

// FormatGID is the GID as glibc's inet_ntop(AF_INET6) prints it, which is
// what rdma-core's programs show: lower-case hex groups, the first
// longest run of two or more zero groups as "::", and the last 32 bits as
// a dotted quad for an IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible
// (::a.b.c.d) address. Go's netip prints the compatible form in hex, so
// ibtool keeps its own.
func FormatGID(g [16]byte) string {
	var w [8]uint16
	for i := range w {
		w[i] = uint16(g[2*i])<<8 | uint16(g[2*i+1])
	}
	// The longest run of zero words, the first one on a tie.
	best, bestLen := -1, 0
	for i := 0; i < 8; {
		if w[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && w[j] == 0 {
			j++
		}
		if j-i > bestLen {
			best, bestLen = i, j-i
		}
		i = j
	}
	if bestLen < 2 {
		best = -1
	}
	var b strings.Builder
	for i := 0; i < 8; i++ {
		if best >= 0 && i >= best && i < best+bestLen {
			if i == best {
				b.WriteByte(':')
			}
			continue
		}
		if i != 0 {
			b.WriteByte(':')
		}
		if i == 6 && best == 0 && (bestLen == 6 || bestLen == 5 && w[5] == 0xffff) {
			fmt.Fprintf(&b, "%d.%d.%d.%d", g[12], g[13], g[14], g[15])
			break
		}
		fmt.Fprintf(&b, "%x", w[i])
	}
	if best >= 0 && best+bestLen == 8 {
		b.WriteByte(':')
	}
	return b.String()
}
