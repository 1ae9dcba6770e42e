package rdma

import "testing"

func TestIbvUdPingpongArgs(t *testing.T) {
	def := rcWant
	def.Size, def.MTU = 2048, 0
	with := func(f func(o *ppOptions)) ppOptions { o := def; f(&o); return o }
	tests := []argsCase[ppOptions]{
		{"client defaults: 2048 bytes, no MTU", []string{"h"}, def, ""},
		{"every option", []string{"--port", "7000", "--ib-dev", "rxe0", "--ib-port", "2", "--size", "64", "--rx-depth", "8", "-n", "5",
			"--sl", "3", "-e", "-g", "1", "-c", "h"},
			with(func(o *ppOptions) {
				o.TCPPort, o.Device, o.IBPort, o.Size, o.RxDepth, o.Iters, o.SL = 7000, "rxe0", 2, 64, 8, 5, 3
				o.Events, o.GIDIndex, o.Check = true, 1, true
			}), ""},
		{"no -m in UD", []string{"-m", "1024"}, ppOptions{}, "unknown shorthand flag: 'm'"},
	}
	testArgs(t, "ibv_ud_pingpong", newIbvUdPingpongCmd, tests, ppCmpOpts...)
}
