package rdma

import (
	"context"
	"net/netip"
	"testing"

	"github.com/ibtool/ibtool/pkg/rdmacm"
)

// TestCmGIDLookup: -f gid's addresses are AF_IB ones with the service ID
// of the port in the port space, as librdmacm's rdma_getaddrinfo makes
// them; an IPv4 address or a name is not a GID.
func TestCmGIDLookup(t *testing.T) {
	got, err := cmGIDLookup("fe80::2", "7471", rdmacm.PortSpaceTCP)
	want := rdmacm.IBServiceAddr(netip.MustParseAddr("fe80::2"), rdmacm.PortSpaceTCP, 7471)
	if err != nil || got != want {
		t.Errorf("fe80::2 port 7471: %+v, %v; want %+v", got, err, want)
	}
	if got, err := cmGIDLookup("", "0", rdmacm.PortSpaceUDP); err != nil || got.GID != netip.IPv6Unspecified() || got.ServiceID != 0x0111_0000 {
		t.Errorf("no host: %+v, %v; want :: in the UDP port space", got, err)
	}
	for host, status := range map[string]int{"192.0.2.1": -9, "host1": -2} {
		if _, err := cmGIDLookup(host, "7471", rdmacm.PortSpaceTCP); ucmaStatus(err) != status {
			t.Errorf("%s: %v (status %d), want status %d", host, err, ucmaStatus(err), status)
		}
	}
}

// TestCmLookupPassive: no host is the wildcard rdma_getaddrinfo's passive
// lookup gives first, either family; its failure is getaddrinfo's code
// and text.
func TestCmLookupPassive(t *testing.T) {
	tests := []struct {
		name   string
		first  netip.Addr
		err    error
		want   string
		status int
		text   string
	}{
		{"lo up: 0.0.0.0", netip.IPv4Unspecified(), nil, "0.0.0.0:7481", 0, ""},
		{"lo down: [::]", netip.IPv6Unspecified(), nil, "[::]:7481", 0, ""},
		{"getaddrinfo fails", netip.Addr{}, &rdmacm.AddrInfoError{Code: -9, Msg: "Address family for hostname not supported"}, "", -9, "Address family for hostname not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setPassive(t, tt.first, tt.err)
			got, err := cmLookup(context.Background(), nil, false, "", "7481")
			if tt.status != 0 {
				if st := ucmaStatus(err); st != tt.status || gaiText(err) != tt.text {
					t.Errorf("status %d (%q), want %d (%q)", st, gaiText(err), tt.status, tt.text)
				}
				return
			}
			if err != nil || got.String() != tt.want {
				t.Errorf("got %v, %v; want %s", got, err, tt.want)
			}
		})
	}
}
