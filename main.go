// Command ibtool is InfiniBand diagnostics in one binary: every tool of
// infiniband-diags and python-rdma's ibtool, run as "ibtool TOOL ARGS" or
// through a symlink named after the tool.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/ibtool/ibtool/cmd"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run())
}

// run runs the tool; with IBTOOL_CPUPROFILE set it writes a CPU profile
// there (for make bench and performance work).
func run() int {
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
