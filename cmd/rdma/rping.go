package rdma

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "rping",
		Summary: "RDMA ping over an rdma_cm connection, as rdmacm-utils' rping",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newRpingCmd(f, nil) },
	})
}

// rping's limits and defaults (librdmacm/examples/rping.c).
const (
	rpingDefaultPort = 7174
	rpingDefaultSize = 64
	rpingBufSize     = 64 * 1024
	// rpingMinSize is sizeof(stringify(INT_MAX)) + sizeof("rdma-ping-%d: "):
	// "0x7fffffff" and the format, each with its NUL.
	rpingMinSize = 11 + 15
)

// rpingOptions are rping's flags.
type rpingOptions struct {
	IO         cmdutil.IOStreams
	Server     bool   // -s
	Client     bool   // -c
	Addr       string // -a
	Source     string // -I
	Port       int    // -p
	Count      int    // -C; 0: forever
	Size       int    // -S
	Verbose    bool   // -v
	Validate   bool   // -V
	Debug      bool   // -d
	Persistent bool   // -P
	SelfQP     bool   // -q

	// dst and src are -a and -I resolved.
	dst, src netip.AddrPort
	ctx      context.Context
	args     struct{ port, count, size string }
	// resolve looks a host name up (net.DefaultResolver in the tool).
	resolve func(ctx context.Context, host string) (netip.Addr, error)
}

// rpingLookup looks a host name up; tests swap it.
var rpingLookup = rpingResolve

func newRpingCmd(f *cmdutil.Factory, runF func(*rpingOptions) error) *cobra.Command {
	o := &rpingOptions{IO: f.IO, resolve: rpingLookup}
	if runF == nil {
		runF = rpingRun
	}
	c := &cobra.Command{
		Use:   "rping -s|-c [-vVd] [-S size] [-C count] [-a addr] [-I addr] [-p port] [-P] [-q]",
		Short: "RDMA ping over an rdma_cm connection, as rdmacm-utils' rping",
		Long: `rping checks an RDMA path as rdmacm-utils' rping does: the client (-c)
connects to the server (-s) at -a through the kernel's RDMA connection
manager (an IP address, on InfiniBand, RoCE or iWARP), then each ping
advertises a buffer the server reads with an RDMA READ and one it writes
back with an RDMA WRITE. -v prints each ping's data, -V checks it. Either
side can be rdmacm-utils' rping.`,
		Example: `  rping -s -a 192.0.2.1 -v              # server
  rping -c -a 192.0.2.1 -C 10 -v -V      # client: 10 pings, printed and checked
  rping -s -P                            # persistent server, any address`,
		Args: cmdutil.ArgsRange(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.finish(); err != nil {
				return err
			}
			o.ctx = c.Context()
			if o.ctx == nil {
				o.ctx = context.Background()
			}
			if err := o.resolveAddrs(); err != nil {
				return err
			}
			return runF(o)
		},
	}
	fl := c.Flags()
	fl.SortFlags = false
	fl.BoolVarP(&o.Server, "server", "s", false, "server side. To bind to any address with IPv6 use -a ::0")
	fl.BoolVarP(&o.Client, "client", "c", false, "client side")
	fl.StringVarP(&o.Addr, "addr", "a", "", "address")
	fl.StringVarP(&o.Source, "source", "I", "", "Source address to bind to for client.")
	fl.StringVarP(&o.args.port, "port", "p", strconv.Itoa(rpingDefaultPort), "port")
	fl.StringVarP(&o.args.count, "count", "C", "0", "ping count times")
	fl.StringVarP(&o.args.size, "size", "S", strconv.Itoa(rpingDefaultSize), "ping data size")
	fl.BoolVarP(&o.Verbose, "verbose", "v", false, "display ping data to stdout")
	fl.BoolVarP(&o.Validate, "validate", "V", false, "validate ping data")
	fl.BoolVarP(&o.Debug, "debug", "d", false, "debug printfs")
	fl.BoolVarP(&o.Persistent, "persistent", "P", false, "persistent server mode allowing multiple connections")
	fl.BoolVarP(&o.SelfQP, "self-qp", "q", false, "use self-created, self-modified QP")
	// -V is rping's validate: the version is --version only.
	fl.Bool("version", false, "print the version")
	return c
}

// finish checks the flags as rping does.
func (o *rpingOptions) finish() error {
	num := func(name, s string) (int, error) {
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return 0, cmdutil.UsageErrorf("invalid %s %q: want a decimal number", name, s)
		}
		return int(v), nil
	}
	var err error
	if o.Port, err = num("-p port", o.args.port); err != nil {
		return err
	}
	if o.Port < 0 || o.Port > 65535 {
		return cmdutil.UsageErrorf("invalid -p port %d: want 0 to 65535", o.Port)
	}
	if o.Count, err = num("-C count", o.args.count); err != nil {
		return err
	}
	if o.Count < 0 {
		return cmdutil.UsageErrorf("Invalid count %d", o.Count)
	}
	if o.Size, err = num("-S size", o.args.size); err != nil {
		return err
	}
	if o.Size < rpingMinSize || o.Size > rpingBufSize-1 {
		return cmdutil.UsageErrorf("Invalid size %d (valid range is %d to %d)", o.Size, rpingMinSize, rpingBufSize)
	}
	switch {
	case o.Server && o.Client:
		return cmdutil.UsageErrorf("-s and -c: a server or a client, not both")
	case !o.Server && !o.Client:
		return cmdutil.UsageErrorf("-s (server) or -c (client) is required")
	case o.Client && o.Addr == "":
		return cmdutil.UsageErrorf("the client needs the server's address (-a)")
	case o.Persistent && o.Client:
		return cmdutil.UsageErrorf("-P is for the server (-s)")
	}
	return nil
}

// resolveAddrs looks up -a and -I: the server listens on -a (any IPv4
// address without it), the client connects to it.
func (o *rpingOptions) resolveAddrs() error {
	lookup := func(flag, host string) (netip.Addr, error) {
		if a, err := netip.ParseAddr(host); err == nil {
			return a, nil
		}
		a, err := o.resolve(o.ctx, host)
		if err != nil {
			return netip.Addr{}, cmdutil.UsageErrorf("getaddrinfo failed for %s %s - invalid hostname or IP address: %v", flag, host, err)
		}
		return a, nil
	}
	dst := netip.IPv4Unspecified()
	if o.Addr != "" {
		a, err := lookup("-a", o.Addr)
		if err != nil {
			return err
		}
		dst = a
	}
	o.dst = netip.AddrPortFrom(dst, uint16(o.Port))
	if o.Source != "" {
		a, err := lookup("-I", o.Source)
		if err != nil {
			return err
		}
		o.src = netip.AddrPortFrom(a, 0)
	}
	return nil
}

// debugf prints one of rping's -d lines on stdout.
func (o *rpingOptions) debugf(format string, a ...any) {
	if o.Debug {
		fmt.Fprintf(o.IO.Out, format, a...)
	}
}
