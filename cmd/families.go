package cmd

// Linking a family in registers its tools (cmdutil.Register).
import (
	_ "github.com/ibtool/ibtool/cmd/cc"
	_ "github.com/ibtool/ibtool/cmd/exporterexec"
	_ "github.com/ibtool/ibtool/cmd/fabric"
	_ "github.com/ibtool/ibtool/cmd/local"
	_ "github.com/ibtool/ibtool/cmd/perf"
	_ "github.com/ibtool/ibtool/cmd/rdma"
	_ "github.com/ibtool/ibtool/cmd/sa"
	_ "github.com/ibtool/ibtool/cmd/smp"
	_ "github.com/ibtool/ibtool/cmd/trace"
	_ "github.com/ibtool/ibtool/cmd/vs"
)
