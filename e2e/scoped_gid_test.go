package e2e

import (
	"strings"
	"testing"
)

// TestScopedGIDTargets: a scoped GID target (GID%end-port) is resolved
// through the SA's PathRecord as a GID target is, from the end port its
// scope names; the output is infiniband-diags' for that LID. A scope that
// names no local port is a usage error (the simulator has one device of
// one port, so disagreements with -C/-P are left to cmdutil's tests).
func TestScopedGIDTargets(t *testing.T) {
	f := smallFabric(t)
	for _, c := range []struct {
		tool      string
		ref, ours []string
	}{
		{"smpquery", []string{"nodeinfo", "4"}, []string{"nodeinfo", "fe80::10:4%ibsim0/1"}},
		{"smpquery", []string{"nodedesc", "4"}, []string{"nodedesc", "fe80::10:4%ibsim0"}},
		{"smpquery", []string{"portinfo", "1", "3"}, []string{"-C", "ibsim0", "portinfo", "fe80::20:0%ibsim0/1", "3"}},
		{"smpdump", []string{"4", "0x15", "1"}, []string{"fe80::10:4%ibsim0/1", "0x15", "1"}},
		{"ibaddr", []string{"5"}, []string{"-P", "1", "fe80::10:7%ibsim0/1"}},
		{"ibroute", []string{"1"}, []string{"fe80::20:0%0x0000000000100001"}},
		{"perfquery", []string{"6", "1"}, []string{"fe80::10:a%ibsim0/1", "1"}},
	} {
		t.Run(c.tool+" "+strings.Join(c.ours, " "), func(t *testing.T) {
			mask := func(b []byte) []byte { return perfTrafficLines.ReplaceAll(b, []byte("$1N")) }
			sameOutput(t, f, "Hca1", mask, append([]string{c.tool}, c.ref...), append([]string{c.tool}, c.ours...))
		})
	}
	for _, c := range []struct {
		msg  string
		args []string
	}{
		{`local end port "ibsim0/2": ibsim0 has no port 2`, []string{"nodeinfo", "fe80::10:4%ibsim0/2"}},
		{`local end port "mlx5_0": no RDMA device "mlx5_0" (have ibsim0)`, []string{"nodeinfo", "fe80::10:4%mlx5_0"}},
	} {
		t.Run("smpquery "+strings.Join(c.args, " "), func(t *testing.T) {
			ibtoolFails(t, f, "Hca1", 2, c.msg, "smpquery", c.args...)
		})
	}
}
