package rdma

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/ibtool/ibtool/pkg/rdmacm"
)

// cmPassive is the wildcard rdma_getaddrinfo(NULL, port, RAI_PASSIVE)
// gives, the one rdmacm-utils' servers without an address listen on;
// tests swap it.
var cmPassive = rdmacm.PassiveAddr

// cmLookup resolves host and port as the rdmacm-utils programs'
// getaddrinfo does: a numeric address, or (unless numeric: -f ip) a host
// name; the port a number or a service name; no host, the wildcard a
// passive rdma_getaddrinfo without a node gives (cmPassive: [::] or
// 0.0.0.0, in the order of the machine's getaddrinfo).
// Its failure carries getaddrinfo's code (the programs' return status)
// and text.
func cmLookup(ctx context.Context, resolve func(context.Context, string) (netip.Addr, error), numeric bool, host, port string) (netip.AddrPort, error) {
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		n, lerr := net.LookupPort("tcp", port)
		if lerr != nil {
			return netip.AddrPort{}, &ucmaFailure{status: -8, err: fmt.Errorf("port %q: Servname not supported for ai_socktype", port)}
		}
		p = uint64(n)
	}
	if host == "" {
		a, err := cmPassive(uint16(p))
		if err != nil {
			status := -2
			if ae := (*rdmacm.AddrInfoError)(nil); errors.As(err, &ae) {
				status, err = ae.Code, errors.New(ae.Msg)
			}
			return netip.AddrPort{}, &ucmaFailure{status: status, err: err}
		}
		return a, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(a, uint16(p)), nil
	}
	if numeric {
		return netip.AddrPort{}, &ucmaFailure{status: -2, err: fmt.Errorf("%s: Name or service not known (-f ip: a numeric address)", host)}
	}
	a, err := resolve(ctx, host)
	if err != nil {
		return netip.AddrPort{}, &ucmaFailure{status: -2, err: fmt.Errorf("%s: Name or service not known: %v", host, err)}
	}
	return netip.AddrPortFrom(a, uint16(p)), nil
}

// cmGIDLookup reads host as a GID and port as cmLookup does, into the
// AF_IB address librdmacm's rdma_getaddrinfo makes of them for -f gid
// (no host: the GID ::); the service ID is port's in port space ps.
func cmGIDLookup(host, port string, ps rdmacm.PortSpace) (rdmacm.IBAddr, error) {
	ap, err := cmLookup(context.Background(), nil, true, cmp.Or(host, "::"), port)
	if err != nil {
		return rdmacm.IBAddr{}, err
	}
	if !ap.Addr().Is6() {
		return rdmacm.IBAddr{}, &ucmaFailure{status: -9, err: fmt.Errorf("%s: Address family for hostname not supported (-f gid: a GID)", host)}
	}
	return rdmacm.IBServiceAddr(ap.Addr(), ps, ap.Port()), nil
}
