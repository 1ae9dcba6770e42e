// Command ibtool is InfiniBand diagnostics in one binary: every tool of
// infiniband-diags and python-rdma's ibtool, run as "ibtool TOOL ARGS" or
// through a symlink named after the tool.
package main

import (
	"fmt"
	"os"

	"github.com/ibtool/ibtool/cmd"
	_ "github.com/ibtool/ibtool/internal/oneproc" // one processor from the first inits
	"github.com/ibtool/ibtool/internal/sigrelay"
	"github.com/ibtool/ibtool/pkg/mad/ibsim"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ibsim.ServeKeeper()  // exits when this process is one
	sigrelay.Exit(run()) // dies of the signal that ended the run, if one did
}

// run runs the tool, with the profiles IBTOOL_CPUPROFILE and
// IBTOOL_MEMPROFILE ask for (profile.go).
func run() int {
	stop, err := startProfiles()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ibtool: %v\n", err)
		return cmd.ExitFailure
	}
	defer stop()
	return cmd.Main(os.Args, cmd.NewFactory(version))
}
