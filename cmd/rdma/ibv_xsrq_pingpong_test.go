package rdma

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestIbvXsrqPingpongArgs(t *testing.T) {
	def := xsrqOptions{TCPPort: 18515, IBPort: 1, Size: 4096, MTU: 3, Clients: 1, Tests: 5, GIDIndex: -1}
	with := func(f func(o *xsrqOptions)) xsrqOptions { o := def; f(&o); return o }
	tests := []argsCase[xsrqOptions]{
		{"server defaults", nil, def, ""},
		{"server of 3 clients, every short option", []string{"-p", "7000", "-d", "mlx5_0", "-i", "2", "-s", "64", "-m", "2048", "-c", "3", "-n", "10",
			"-l", "1", "-e", "-o", "-g", "0"},
			with(func(o *xsrqOptions) {
				o.TCPPort, o.Device, o.IBPort, o.Size, o.MTU, o.Clients, o.Tests, o.SL = 7000, "mlx5_0", 2, 64, 4, 3, 10, 1
				o.Events, o.ODP, o.GIDIndex = true, true, 0
			}), ""},
		{"every long option", []string{"--port=7000", "--ib-dev=mlx5_0", "--ib-port=2", "--size=64", "--mtu=512", "--clients=2", "--num_tests=3",
			"--sl=1", "--events", "--odp", "--gid-idx=1"},
			with(func(o *xsrqOptions) {
				o.TCPPort, o.Device, o.IBPort, o.Size, o.MTU, o.Clients, o.Tests, o.SL = 7000, "mlx5_0", 2, 64, 2, 2, 3, 1
				o.Events, o.ODP, o.GIDIndex = true, true, 1
			}), ""},
		{"a client is one client", []string{"-c", "4", "h"}, with(func(o *xsrqOptions) { o.Server = "h" }), ""},
		{"no tests", []string{"-n", "0"}, xsrqOptions{}, "invalid -n tests 0: want at least 1"},
		{"bad MTU", []string{"-m", "100"}, xsrqOptions{}, "invalid -m MTU 100"},
		{"no -r", []string{"-r", "5"}, xsrqOptions{}, "unknown shorthand flag: 'r'"},
	}
	testArgs(t, "ibv_xsrq_pingpong", newIbvXsrqPingpongCmd, tests, cmpopts.IgnoreUnexported(xsrqOptions{}), cmpopts.IgnoreFields(xsrqOptions{}, "IO"))
}
