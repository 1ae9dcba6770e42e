package cmdutil

import (
	"runtime"
	"strconv"
)

// SetProcs gives tool t the scheduler processors it runs on. ibtool starts
// on one (internal/oneproc); a light tool keeps it and any other gets the
// runtime's default (the CPUs the process may use, within its cgroup's
// limit). GOMAXPROCS in the environment, a positive number, is obeyed for
// every tool, as the runtime obeys it in any Go program.
func (f *Factory) SetProcs(t Tool) {
	if n, err := strconv.Atoi(f.Getenv("GOMAXPROCS")); err == nil && n > 0 {
		runtime.GOMAXPROCS(n)
		return
	}
	if !t.Light {
		runtime.SetDefaultGOMAXPROCS()
	}
}
