package rdma

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibv_asyncwatch",
		Summary: "print a device's async events (port up and down, LID and GID changes), as rdma-core's ibv_asyncwatch",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbvAsyncwatchCmd(f, nil) },
	})
}

// asyncwatchOptions are ibv_asyncwatch's flags.
type asyncwatchOptions struct {
	IO     cmdutil.IOStreams
	Device string // -d
	open   func(string) (*verbs.Context, error)
	ctx    context.Context
}

func newIbvAsyncwatchCmd(f *cmdutil.Factory, runF func(*asyncwatchOptions) error) *cobra.Command {
	o := &asyncwatchOptions{IO: f.IO, open: verbs.Open}
	c := &cobra.Command{
		Use:   "ibv_asyncwatch [options]",
		Short: "print a device's async events, as rdma-core's ibv_asyncwatch",
		Long: `ibv_asyncwatch opens an RDMA device and prints each async event libibverbs
reports for it until it is stopped, as rdma-core's ibv_asyncwatch does: a
port that goes down (IBV_EVENT_PORT_ERR) or up (IBV_EVENT_PORT_ACTIVE), a
LID, P_Key, GID or SM change, a client reregister, a fatal device error.
Events about QPs, CQs and SRQs, which belong to other processes' objects,
print as "unexpected", as rdma-core's do.`,
		Example: `  ibv_asyncwatch -d rxe0
  ibv_asyncwatch -d mlx5_0 | ts    # with a time stamp per event`,
		Args: cmdutil.ArgsRange(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			o.ctx = c.Context()
			if o.ctx == nil {
				o.ctx = context.Background()
			}
			if runF != nil {
				return runF(o)
			}
			return asyncwatchRun(o)
		},
	}
	c.Flags().StringVarP(&o.Device, "ib-dev", "d", "", "use IB device <dev> (default first device found)")
	return c
}

func asyncwatchRun(o *asyncwatchOptions) error {
	dev, err := o.open(o.Device)
	if err != nil {
		if o.Device != "" && errors.Is(err, os.ErrNotExist) && !errors.Is(err, verbs.ErrNoVerbs) {
			return cmdutil.UsageErrorf("IB device %s not found", o.Device)
		}
		return err
	}
	defer dev.Close()
	fmt.Fprintf(o.IO.Out, "%s: async event FD %d\n", dev.Name(), dev.AsyncFD())
	for {
		e, err := dev.NextAsyncEvent(o.ctx)
		if err != nil {
			return err
		}
		fmt.Fprint(o.IO.Out, asyncwatchLine(e))
	}
}

// asyncwatchLine is rdma-core's line for one event: the type's name for a
// port or device event, "unexpected" for any other, its number, and the
// element's port number.
func asyncwatchLine(e verbs.AsyncEvent) string {
	name := "unexpected"
	if e.Type.PortEvent() {
		name = e.Type.String()
	}
	return fmt.Sprintf("  event_type %s (%d), port %d\n", name, int(e.Type), e.Port)
}
