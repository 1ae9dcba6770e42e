package rdma

import "testing"

func TestIbvUcPingpongArgs(t *testing.T) {
	with := func(f func(o *ppOptions)) ppOptions { o := rcWant; f(&o); return o }
	tests := []argsCase[ppOptions]{
		{"client defaults", []string{"h"}, rcWant, ""},
		{"every option", []string{"-p", "7000", "-d", "rxe0", "-i", "2", "-s", "64", "--mtu=2048", "-r", "8", "--iters", "5", "-l", "3", "--events", "--gid-idx", "1", "--chk", "h"},
			with(func(o *ppOptions) {
				o.TCPPort, o.Device, o.IBPort, o.Size, o.MTU, o.RxDepth, o.Iters, o.SL = 7000, "rxe0", 2, 64, 4, 8, 5, 3
				o.Events, o.GIDIndex, o.Check = true, 1, true
			}), ""},
		{"no ODP in UC", []string{"-o"}, ppOptions{}, "unknown shorthand flag: 'o'"},
		{"bad MTU", []string{"-m", "9000"}, ppOptions{}, "invalid -m MTU 9000"},
	}
	testArgs(t, "ibv_uc_pingpong", newIbvUcPingpongCmd, tests, ppCmpOpts...)
}
