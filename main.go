// Command ibtool is InfiniBand diagnostics in one binary: every tool of
// infiniband-diags and python-rdma's ibtool, run as "ibtool TOOL ARGS" or
// through a symlink named after the tool.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/ibtool/ibtool/cmd"
	"github.com/ibtool/ibtool/pkg/mad/ibsim"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ibsim.ServeKeeper() // exits when this process is one
	os.Exit(run())
}

// run runs the tool; with IBTOOL_CPUPROFILE set it writes a CPU profile
// there, with IBTOOL_MEMPROFILE an allocation profile of the whole run (for
// make bench and performance work).
func run() int {
	if path := os.Getenv("IBTOOL_MEMPROFILE"); path != "" {
		runtime.MemProfileRate = 512
		defer func() {
			runtime.GC() // the profile counts allocations up to the last GC
			f, err := os.Create(path)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "ibtool: IBTOOL_MEMPROFILE: %v\n", err)
			}
		}()
	}
	if path := os.Getenv("IBTOOL_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ibtool: IBTOOL_CPUPROFILE: %v\n", err)
			return cmd.ExitFailure
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "ibtool: IBTOOL_CPUPROFILE: %v\n", err)
			return cmd.ExitFailure
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	return cmd.Main(os.Args, cmd.NewFactory(version))
}
