package rdma

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ppCmpOpts compare the parsed options, not the raw flag strings.
var ppCmpOpts = []cmp.Option{cmpopts.IgnoreUnexported(ppOptions{}), cmpopts.IgnoreFields(ppOptions{}, "IO")}

// rcWant are ibv_rc_pingpong's defaults for a client of host h.
var rcWant = ppOptions{Server: "h", TCPPort: 18515, IBPort: 1, Size: 4096, MTU: 3, RxDepth: 500, Iters: 1000, GIDIndex: -1}

func TestIbvRcPingpongArgs(t *testing.T) {
	with := func(f func(o *ppOptions)) ppOptions { o := rcWant; f(&o); return o }
	tests := []argsCase[ppOptions]{
		{"client defaults", []string{"h"}, rcWant, ""},
		{"server", nil, with(func(o *ppOptions) { o.Server = "" }), ""},
		{"every short option", []string{"-p", "7000", "-d", "rxe0", "-i", "2", "-s", "0x100", "-m", "4096", "-r", "010", "-n", "5", "-l", "3", "-e", "-g", "1", "-c", "-o", "-N", "h"},
			with(func(o *ppOptions) {
				o.TCPPort, o.Device, o.IBPort, o.Size, o.MTU, o.RxDepth, o.Iters, o.SL = 7000, "rxe0", 2, 256, 5, 8, 5, 3
				o.Events, o.GIDIndex, o.Check, o.ODP, o.NewSend = true, 1, true, true, true
			}), ""},
		{"every long option", []string{"--port=7000", "--ib-dev=rxe0", "--ib-port=2", "--size=64", "--mtu=256", "--rx-depth=10", "--iters=5",
			"--sl=1", "--events", "--gid-idx=0", "--chk", "--odp", "--new_send", "h"},
			with(func(o *ppOptions) {
				o.TCPPort, o.Device, o.IBPort, o.Size, o.MTU, o.RxDepth, o.Iters, o.SL = 7000, "rxe0", 2, 64, 1, 10, 5, 1
				o.Events, o.GIDIndex, o.Check, o.ODP, o.NewSend = true, 0, true, true, true
			}), ""},
		{"bad MTU", []string{"-m", "1500"}, ppOptions{}, "invalid -m MTU 1500: want 256, 512, 1024, 2048 or 4096"},
		{"size with a suffix", []string{"-s", "4k"}, ppOptions{}, `invalid -s size "4k": want a number`},
		{"TCP port too big", []string{"-p", "65536"}, ppOptions{}, `invalid -p port "65536": want at most 65535`},
		{"IB port 0", []string{"-i", "0"}, ppOptions{}, "invalid -i IB port 0"},
		{"rx depth 0", []string{"-r", "0"}, ppOptions{}, "invalid -r rx depth 0"},
		{"SL too big", []string{"-l", "16"}, ppOptions{}, `invalid -l service level "16"`},
		{"GID index not a number", []string{"-g", "x"}, ppOptions{}, `invalid -g GID index "x"`},
		{"ODP with device memory", []string{"-o", "-j"}, ppOptions{}, "DM memory region can't be on demand"},
		{"prefetch without ODP", []string{"-P"}, ppOptions{}, "prefetch is valid only with on-demand memory region"},
		{"implicit ODP", []string{"--iodp"}, ppOptions{}, "implicit on demand paging (-O) is not supported by ibtool"},
		{"prefetch", []string{"-o", "--prefetch"}, ppOptions{}, "prefetch (-P) is not supported by ibtool"},
		{"device memory", []string{"--dm"}, ppOptions{}, "device memory (-j) is not supported by ibtool"},
		{"timestamps", []string{"--ts"}, ppOptions{}, "completion timestamps (-t) are not supported by ibtool"},
		{"two hosts", []string{"a", "b"}, ppOptions{}, "expected at most 1 argument(s)"},
	}
	testArgs(t, "ibv_rc_pingpong", newIbvRcPingpongCmd, tests, ppCmpOpts...)
}
