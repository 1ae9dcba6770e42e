package rdmacm

import (
	"net"
	"strconv"
)

// zoneIndex is the interface index of an IPv6 zone ("veth0" or "3"), 0
// when there is none or it names no interface.
func zoneIndex(zone string) uint32 {
	if zone == "" {
		return 0
	}
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return uint32(n)
	}
	if ifi, err := net.InterfaceByName(zone); err == nil {
		return uint32(ifi.Index)
	}
	return 0
}

// zoneName names the interface of index i, or gives the number when no
// interface has it.
func zoneName(i uint32) string {
	if ifi, err := net.InterfaceByIndex(int(i)); err == nil {
		return ifi.Name
	}
	return strconv.FormatUint(uint64(i), 10)
}
