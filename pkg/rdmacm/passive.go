package rdmacm

import (
	"fmt"
	"net/netip"
)

// PassiveAddrs gives the wildcard addresses a passive rdma_getaddrinfo
// without a node gives for port (librdmacm's rdma_getaddrinfo(NULL, port,
// RAI_PASSIVE)), in its order: the IPv6 wildcard [::] and the IPv4 one
// 0.0.0.0, sorted by the C library's getaddrinfo. A program listens on
// the first, as rdmacm-utils' servers (rdma_xserver, and ucmatose,
// udaddy and cmtime without -b) do.
//
// glibc sorts them by RFC 3484's rules with /etc/gai.conf's tables, from
// the source address a UDP socket connected to each would get (Linux
// takes the loopback address for a wildcard destination): with the
// loopback interface up, both have one and rule 5 (matching label: ::ffff:0:0/96
// holds 0.0.0.0 and 127.0.0.1, while :: and ::1 differ) puts 0.0.0.0
// first; with it down and without addresses (never brought up),
// neither has one and rule 6 (precedence: 20 for ::/96, 10 for
// ::ffff:0:0/96) puts [::] first; taken down after being up, it keeps
// 127.0.0.1 but not ::1, and rule 1 puts 0.0.0.0 first.
//
// A build with cgo asks the C library's getaddrinfo, so the order is
// the one librdmacm gets on that machine whatever its libc and
// /etc/gai.conf. A build without cgo sorts by glibc's rules in Go
// (PassiveOrder), with /etc/gai.conf's label, precedence and scopev4
// lines when it can read them.
func PassiveAddrs(port uint16) ([]netip.AddrPort, error) {
	return passiveLookup(port)
}

// PassiveAddr is the first of PassiveAddrs: the wildcard
// rdma_getaddrinfo gives a passive lookup without a node, the one
// rdmacm-utils' servers listen on.
func PassiveAddr(port uint16) (netip.AddrPort, error) {
	addrs, err := PassiveAddrs(port)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if len(addrs) == 0 {
		return netip.AddrPort{}, &AddrInfoError{Code: eaiNoName, Msg: "Name or service not known"}
	}
	return addrs[0], nil
}

// AddrInfoError is a failed getaddrinfo: its EAI_* code (glibc's
// values, negative) and gai_strerror's text.
type AddrInfoError struct {
	Code int
	Msg  string
}

// Error is gai_strerror's text with the code.
func (e *AddrInfoError) Error() string { return fmt.Sprintf("getaddrinfo: %s (%d)", e.Msg, e.Code) }

// glibc's EAI_NONAME.
const eaiNoName = -2
