package rdma

import (
	"net/netip"
	"os"
	"testing"
)

// TestMain fixes the passive wildcard (cmPassive) to [::], glibc's first
// with the loopback interface down, so the tests do not depend on the
// machine's interfaces and /etc/gai.conf.
func TestMain(m *testing.M) {
	cmPassive = func(port uint16) (netip.AddrPort, error) {
		return netip.AddrPortFrom(netip.IPv6Unspecified(), port), nil
	}
	os.Exit(m.Run())
}
