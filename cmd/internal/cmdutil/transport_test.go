package cmdutil

import (
	"runtime"
	"testing"
)

// TestShareCPUsWithSimulator: with ibsim on this machine the scheduler
// runs on one CPU fewer until restored; with the kernel's MAD interface or
// an ibsim reached over the network it is left alone.
func TestShareCPUsWithSimulator(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: nothing to leave the simulator")
	}
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	runtime.GOMAXPROCS(runtime.NumCPU())
	for _, tc := range []struct {
		name string
		env  map[string]string
		want int
	}{
		{"local ibsim", map[string]string{"IBSIM_SOCKNAME": "sim"}, runtime.NumCPU() - 1},
		{"IBTOOL_SIM", map[string]string{"IBTOOL_SIM": "1"}, runtime.NumCPU() - 1},
		{"ibsim over the network", map[string]string{"IBSIM_SOCKNAME": "sim", "IBSIM_SERVER_NAME": "fabric1"}, runtime.NumCPU()},
		{"kernel", map[string]string{}, runtime.NumCPU()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := NewTestFactory(tc.env)
			restore := f.ShareCPUsWithSimulator(&CommonOptions{})
			if got := runtime.GOMAXPROCS(0); got != tc.want {
				t.Errorf("GOMAXPROCS %d while sharing, want %d", got, tc.want)
			}
			restore()
			if got := runtime.GOMAXPROCS(0); got != runtime.NumCPU() {
				t.Errorf("GOMAXPROCS %d after restore, want %d", got, runtime.NumCPU())
			}
		})
	}
}
