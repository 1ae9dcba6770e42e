//go:build !cgo

package rdmacm

import "net/netip"

var passiveLookup = goPassive

// goPassive is PassiveAddrs without a C library: glibc's order of the two
// wildcards from this machine's source addresses and /etc/gai.conf.
func goPassive(port uint16) ([]netip.AddrPort, error) {
	var addrs []netip.AddrPort
	for _, a := range PassiveOrder(LocalSources(), ReadGaiConf(GaiConfPath)) {
		addrs = append(addrs, netip.AddrPortFrom(a, port))
	}
	return addrs, nil
}
