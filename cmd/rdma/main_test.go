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
	cmPassive = passiveFirst(netip.IPv6Unspecified(), nil)
	os.Exit(m.Run())
}

// passiveFirst is a cmPassive that gives first (with the port asked) and
// err.
func passiveFirst(first netip.Addr, err error) func(uint16) (netip.AddrPort, error) {
	return func(port uint16) (netip.AddrPort, error) { return netip.AddrPortFrom(first, port), err }
}

// setPassive makes cmPassive passiveFirst(first, err) until the test
// ends.
func setPassive(t *testing.T, first netip.Addr, err error) {
	saved := cmPassive
	t.Cleanup(func() { cmPassive = saved })
	cmPassive = passiveFirst(first, err)
}
