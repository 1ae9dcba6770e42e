package rdma

import (
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibv_ud_pingpong",
		Summary: "UD SEND ping-pong between two hosts, as rdma-core's ibv_ud_pingpong",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbvUdPingpongCmd(f, nil) },
	})
}

var udDefaults = ppDefaults{size: 2048, noMTU: true}

func newIbvUdPingpongCmd(f *cmdutil.Factory, runF func(*ppOptions) error) *cobra.Command {
	o := &ppOptions{IO: f.IO, open: verbs.Open}
	if runF == nil {
		runF = func(o *ppOptions) error { return ppRun(o, ppUD) }
	}
	c := &cobra.Command{
		Use:   "ibv_ud_pingpong [options] [server]",
		Short: "UD SEND ping-pong between two hosts, as rdma-core's ibv_ud_pingpong",
		Long: `ibv_ud_pingpong sends datagrams back and forth over an unreliable-datagram
QP between a server (started without a host name) and a client (given the
server's host name), as rdma-core's ibv_ud_pingpong does, and prints the
same lines. The addresses go over TCP in rdma-core's format, so either
side can be rdma-core's program. A message must fit in the port's active
MTU. On RoCE give a GID index with -g: the datagrams carry a GRH to the
peer's GID.`,
		Example: `  ibv_ud_pingpong -d rxe0 -g 0                 # server
  ibv_ud_pingpong -d rxe0 -g 0 -s 1024 192.0.2.1`,
		Args: cmdutil.ArgsRange(0, 1),
	}
	c.RunE = ppRunE(o, udDefaults, nil, runF)
	addPingpongFlags(c.Flags(), o, udDefaults)
	return c
}
