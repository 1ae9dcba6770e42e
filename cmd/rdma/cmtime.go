package rdma

import (
	"context"
	"net/netip"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "cmtime",
		Summary: "the time of each rdma_cm connection step over many connections, as rdmacm-utils' cmtime",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newCmtimeCmd(f, nil) },
	})
}

// cmtime's defaults (librdmacm/examples/cmtime.c).
const (
	cmtimeDefaultPort    = "7471"
	cmtimeDefaultConns   = 100
	cmtimeDefaultRetries = 2
	cmtimeDefaultTimeout = 2000
)

// cmtimeOptions are cmtime's flags.
type cmtimeOptions struct {
	IO cmdutil.IOStreams
	// Server is -s, the server's address: given, the tool is the client.
	Server      string
	Bind        string // -b
	Connections int    // -c
	Port        string // -p
	Retries     int    // -r: address and route resolution retries, and the connections' transport retries
	Timeout     time.Duration

	ctx     context.Context
	args    struct{ conns, retries, timeout string }
	resolve func(ctx context.Context, host string) (netip.Addr, error)
}

// cmtimeLookup looks a host name up; tests swap it.
var cmtimeLookup = rpingResolve

func newCmtimeCmd(f *cmdutil.Factory, runF func(*cmtimeOptions) error) *cobra.Command {
	o := &cmtimeOptions{IO: f.IO, resolve: cmtimeLookup}
	if runF == nil {
		runF = cmtimeRun
	}
	c := &cobra.Command{
		Use:   "cmtime [-s server_address] [-b bind_address] [-c connections] [-p port_number] [-r retries] [-t timeout_ms]",
		Short: "the time of each rdma_cm connection step over many connections, as rdmacm-utils' cmtime",
		Long: `cmtime times the steps of making -c connections through the kernel's RDMA
connection manager, as rdmacm-utils' cmtime does: the client (-s
server_address) creates the IDs, binds them (-b), resolves the address
and the route, creates the QPs, connects, disconnects and destroys the
IDs, each step for all connections at once, and prints each step's total
time, the longest and the shortest of one connection, and the total per
connection. The server (no -s) accepts connections until it is stopped.
Either side can be rdmacm-utils' cmtime.`,
		Example: `  cmtime -b 192.0.2.1 &                  # server
  cmtime -s 192.0.2.1 -c 50              # client: 50 connections`,
		Args: cmdutil.ArgsRange(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.finish(); err != nil {
				return err
			}
			o.ctx = c.Context()
			if o.ctx == nil {
				o.ctx = context.Background()
			}
			return runF(o)
		},
	}
	fl := c.Flags()
	fl.SortFlags = false
	fl.StringVarP(&o.Server, "server", "s", "", "server_address: the server's address (the client's option)")
	fl.StringVarP(&o.Bind, "bind", "b", "", "bind_address: the local address")
	fl.StringVarP(&o.args.conns, "connections", "c", strconv.Itoa(cmtimeDefaultConns), "connections")
	fl.StringVarP(&o.Port, "port", "p", cmtimeDefaultPort, "port_number")
	fl.StringVarP(&o.args.retries, "retries", "r", strconv.Itoa(cmtimeDefaultRetries), "retries of address and route resolution, and the connections' transport retries")
	fl.StringVarP(&o.args.timeout, "timeout", "t", strconv.Itoa(cmtimeDefaultTimeout), "timeout_ms of address and route resolution")
	return c
}

// finish checks the flags (strictly where cmtime takes anything atoi
// reads).
func (o *cmtimeOptions) finish() error {
	num := func(flag, s string, lo, hi int) (int, error) {
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil || int(v) < lo || int(v) > hi {
			return 0, cmdutil.UsageErrorf("invalid %s %q: want a decimal number from %d to %d", flag, s, lo, hi)
		}
		return int(v), nil
	}
	var err error
	if o.Connections, err = num("-c connections", o.args.conns, 1, 1<<20); err != nil {
		return err
	}
	if o.Retries, err = num("-r retries", o.args.retries, 0, 7); err != nil {
		return err
	}
	ms, err := num("-t timeout_ms", o.args.timeout, 1, 1<<30)
	if err != nil {
		return err
	}
	o.Timeout = time.Duration(ms) * time.Millisecond
	return nil
}
