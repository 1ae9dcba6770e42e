// Command ibtool is InfiniBand diagnostics in one binary: every tool of
// infiniband-diags and python-rdma's ibtool, run as "ibtool TOOL ARGS" or
// through a symlink named after the tool.
package main

import (
	"os"

	"github.com/ibtool/ibtool/cmd"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(cmd.Main(os.Args, cmd.NewFactory(version)))
}
