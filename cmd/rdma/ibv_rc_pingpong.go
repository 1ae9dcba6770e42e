package rdma

import (
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibv_rc_pingpong",
		Summary: "RC SEND ping-pong between two hosts, as rdma-core's ibv_rc_pingpong",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbvRcPingpongCmd(f, nil) },
	})
}

var rcDefaults = ppDefaults{size: 4096, mtu: 1024}

func newIbvRcPingpongCmd(f *cmdutil.Factory, runF func(*ppOptions) error) *cobra.Command {
	o := &ppOptions{IO: f.IO, open: verbs.Open}
	if runF == nil {
		runF = func(o *ppOptions) error { return ppRun(o, ppRC) }
	}
	c := &cobra.Command{
		Use:   "ibv_rc_pingpong [options] [server]",
		Short: "RC SEND ping-pong between two hosts, as rdma-core's ibv_rc_pingpong",
		Long: `ibv_rc_pingpong sends messages back and forth over a reliable-connected QP
between a server (started without a host name) and a client (given the
server's host name), as rdma-core's ibv_rc_pingpong does, and prints the
same lines. The two exchange their LID, QP number, PSN and GID over TCP in
rdma-core's format, so either side can be rdma-core's program. On RoCE
(Soft-RoCE included) give a GID index with -g.`,
		Example: `  ibv_rc_pingpong -d rxe0 -g 0                 # server
  ibv_rc_pingpong -d rxe0 -g 0 192.0.2.1       # client: 1000 round trips of 4096 bytes
  ibv_rc_pingpong -d mlx5_0 -s 65536 -n 100 -e host1`,
		Args: cmdutil.ArgsRange(0, 1),
	}
	c.RunE = ppRunE(o, rcDefaults, o.rcCheck, runF)
	fl := c.Flags()
	addPingpongFlags(fl, o, rcDefaults)
	fl.BoolVarP(&o.ODP, "odp", "o", false, "use on demand paging")
	fl.BoolVarP(&o.ImplicitODP, "iodp", "O", false, "use implicit on demand paging")
	fl.BoolVarP(&o.Prefetch, "prefetch", "P", false, "prefetch an ODP MR")
	fl.BoolVarP(&o.Timestamps, "ts", "t", false, "get CQE with timestamp")
	fl.BoolVarP(&o.DeviceMemory, "dm", "j", false, "use device memory")
	fl.BoolVarP(&o.NewSend, "new_send", "N", false, "use new post send WR API (ibtool posts the same SEND either way)")
	return c
}

// rcCheck is rdma-core's checks of the memory options, and what ibtool
// does not do: implicit ODP, prefetch, device memory and completion
// timestamps need verbs ibtool does not load (docs/differences.md).
func (o *ppOptions) rcCheck() error {
	if o.ImplicitODP {
		o.ODP = true
	}
	switch {
	case o.ODP && o.DeviceMemory:
		return cmdutil.UsageErrorf("DM memory region can't be on demand")
	case !o.ODP && o.Prefetch:
		return cmdutil.UsageErrorf("prefetch is valid only with on-demand memory region")
	case o.ImplicitODP:
		return cmdutil.UsageErrorf("implicit on demand paging (-O) is not supported by ibtool")
	case o.Prefetch:
		return cmdutil.UsageErrorf("prefetch (-P) is not supported by ibtool")
	case o.DeviceMemory:
		return cmdutil.UsageErrorf("device memory (-j) is not supported by ibtool")
	case o.Timestamps:
		return cmdutil.UsageErrorf("completion timestamps (-t) are not supported by ibtool")
	}
	return nil
}
