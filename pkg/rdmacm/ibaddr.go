package rdmacm

import (
	"context"
	"encoding/binary"
	"net/netip"
	"time"
)

// sockaddrIBSize is the size of struct sockaddr_ib.
const sockaddrIBSize = 48

// The service ID of an IP port in a port space (RDMA_IB_IP_PS_MASK and
// RDMA_IB_IP_PORT_MASK of rdma_cma.h): the port space above the port.
const (
	ibServicePSMask   uint64 = 0xffffffffffff0000
	ibServicePortMask uint64 = 0x000000000000ffff
)

// IBAddr is an InfiniBand address (AF_IB, struct sockaddr_ib): a GID, a
// P_Key and a service ID with the mask of its bits that count, in place
// of an IP address and port. The kernel takes them where the device has
// InfiniBand addressing; elsewhere (RoCE, iWARP) it refuses them.
type IBAddr struct {
	// GID is the port's GID (or, for a multicast group, the MGID).
	GID         netip.Addr
	PKey        uint16
	FlowInfo    uint32
	ServiceID   uint64
	ServiceMask uint64
	ScopeID     uint64
}

// IBServiceAddr is gid at port in port space ps with the default P_Key,
// as librdmacm's rdma_getaddrinfo makes an AF_IB address of a numeric GID
// (ucmatose's and udaddy's -f gid): the service ID is the port space
// and the port, the mask covers the port space and, when port is not 0,
// the port.
func IBServiceAddr(gid netip.Addr, ps PortSpace, port uint16) IBAddr {
	a := IBAddr{GID: gid, PKey: 0xffff, ServiceID: uint64(ps)<<16 | uint64(port)}
	if ps != 0 {
		a.ServiceMask = ibServicePSMask
	}
	if port != 0 {
		a.ServiceMask |= ibServicePortMask
	}
	return a
}

// AddrPort is the address as this package's messages and Addr name an
// AF_IB address: the GID as an IPv6 address, the service ID's low 16
// bits as the port.
func (a IBAddr) AddrPort() netip.AddrPort {
	return netip.AddrPortFrom(a.GID, uint16(a.ServiceID))
}

// putSockaddrIB writes a as a sockaddr_ib into b and returns its size,
// 0 for an address without a GID.
func putSockaddrIB(b []byte, a IBAddr) int {
	if !a.GID.IsValid() {
		return 0
	}
	le.PutUint16(b[0:], afIB)
	binary.BigEndian.PutUint16(b[2:], a.PKey)
	binary.BigEndian.PutUint32(b[4:], a.FlowInfo)
	g := a.GID.As16()
	copy(b[8:24], g[:])
	binary.BigEndian.PutUint64(b[24:], a.ServiceID)
	binary.BigEndian.PutUint64(b[32:], a.ServiceMask)
	le.PutUint64(b[40:], a.ScopeID)
	return sockaddrIBSize
}

// BindIB binds the ID to an InfiniBand address (Bind's AF_IB form).
func (id *ID) BindIB(a IBAddr) error {
	return id.bind(a.AddrPort(), func(b []byte) int { return putSockaddrIB(b, a) })
}

// ResolveAddrIB resolves the InfiniBand address dst (from src, when its
// GID is valid) as ResolveAddr resolves an IP address.
func (id *ID) ResolveAddrIB(ctx context.Context, src, dst IBAddr, timeout time.Duration) error {
	return id.resolveAddr(ctx, dst.AddrPort(), func(b []byte) int { return putSockaddrIB(b, src) },
		func(b []byte) int { return putSockaddrIB(b, dst) }, timeout)
}

// JoinMulticastIB joins the UD ID to the multicast group of MGID
// group.GID (an AF_IB address: mckey's -M), as JoinMulticast joins the
// group of an IP address.
func (id *ID) JoinMulticastIB(ctx context.Context, group IBAddr, sendOnly bool) (*Multicast, *Event, error) {
	return id.join(ctx, group.GID, func(b []byte) int { return putSockaddrIB(b, group) }, sendOnly)
}
