package rdma

import (
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibv_uc_pingpong",
		Summary: "UC SEND ping-pong between two hosts, as rdma-core's ibv_uc_pingpong",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbvUcPingpongCmd(f, nil) },
	})
}

var ucDefaults = ppDefaults{size: 4096, mtu: 1024}

func newIbvUcPingpongCmd(f *cmdutil.Factory, runF func(*ppOptions) error) *cobra.Command {
	o := &ppOptions{IO: f.IO, open: verbs.Open}
	if runF == nil {
		runF = func(o *ppOptions) error { return ppRun(o, ppUC) }
	}
	c := &cobra.Command{
		Use:   "ibv_uc_pingpong [options] [server]",
		Short: "UC SEND ping-pong between two hosts, as rdma-core's ibv_uc_pingpong",
		Long: `ibv_uc_pingpong sends messages back and forth over an unreliable-connected
QP between a server (started without a host name) and a client (given the
server's host name), as rdma-core's ibv_uc_pingpong does, and prints the
same lines. The addresses go over TCP in rdma-core's format, so either
side can be rdma-core's program. UC has no acknowledgements: a message
lost on the wire stalls the run. On RoCE give a GID index with -g.`,
		Example: `  ibv_uc_pingpong -d rxe0 -g 0                 # server
  ibv_uc_pingpong -d rxe0 -g 0 192.0.2.1       # client`,
		Args: cmdutil.ArgsRange(0, 1),
	}
	c.RunE = ppRunE(o, ucDefaults, nil, runF)
	addPingpongFlags(c.Flags(), o, ucDefaults)
	return c
}
