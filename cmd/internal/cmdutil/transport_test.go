package cmdutil

import (
	"runtime"
	"testing"

	"github.com/spf13/cobra"
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

// TestOpenMADOnce checks that a run opens its MAD access once: a second
// Open returns what the first did (here the failure to find a device, not
// a second attempt), a discovery's options give the window, and each run's
// Factory starts with an access of its own.
func TestOpenMADOnce(t *testing.T) {
	f, _, _ := NewTestFactory(map[string]string{"IBTOOL_SYSFS": t.TempDir()})
	var o CommonOptions
	var d DiscoveryOptions
	c := &cobra.Command{Use: "zz"}
	AddCommonFlags(c, f, &o, FlagsLocalPort|FlagsMAD)
	AddDiscoveryFlags(c, &o, &d)
	if err := c.ParseFlags([]string{"-o", "8"}); err != nil {
		t.Fatal(err)
	}
	if got := o.discovery.window(); got != 8 {
		t.Errorf("window %d, want -o's 8", got)
	}
	_, _, err1 := o.Open()
	_, _, err2 := o.Open()
	if err1 == nil || err1 != err2 {
		t.Errorf("Open gave %v, then %v; want one failure, the same both times", err1, err2)
	}
	r := NewRun(f)
	defer r.Stop()
	if rf := r.FactoryFor(Tool{Name: "zz"}); rf.fabric == nil || rf.fabric == f.fabric {
		t.Errorf("a run's Factory shares the MAD access of the Factory it came from")
	}
}
