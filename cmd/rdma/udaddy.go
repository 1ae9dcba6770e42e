package rdma

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdmacm"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "udaddy",
		Summary: "datagrams (UD) to a peer found by IP address over rdma_cm, as rdmacm-utils' udaddy",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newUdaddyCmd(f, nil) },
	})
}

// udaddy's defaults (librdmacm/examples/udaddy.c): its port is fixed.
const (
	udaddyPort         = "7174"
	udaddyDefaultConns = 1
	udaddyDefaultCount = 10
	udaddyDefaultSize  = 100
)

// udaddyOptions are udaddy's flags.
type udaddyOptions struct {
	IO cmdutil.IOStreams
	// Server is -s, the server's address: given, the tool is the client.
	Server      string
	Bind        string // -b
	Format      string // -f: name, ip, ipv6 (numeric addresses only)
	PortSpace   string // -P: udp or ipoib
	Connections int    // -c
	Count       int    // -C
	Size        int    // -S
	TOS         uint8  // -t, when SetTOS
	SetTOS      bool

	numeric bool
	// gid is -f gid: the addresses are GIDs (AF_IB).
	gid     bool
	ps      rdmacm.PortSpace
	ctx     context.Context
	args    struct{ conns, count, size, tos, psNum string }
	resolve func(ctx context.Context, host string) (netip.Addr, error)
}

// udaddyLookup looks a host name up; tests swap it.
var udaddyLookup = rpingResolve

func newUdaddyCmd(f *cmdutil.Factory, runF func(*udaddyOptions) error) *cobra.Command {
	o := &udaddyOptions{IO: f.IO, resolve: udaddyLookup}
	if runF == nil {
		runF = udaddyRun
	}
	c := &cobra.Command{
		Use:   "udaddy [-s server_address] [-b bind_address] [-f address_format] [-P port_space] [-c connections] [-C message_count] [-S message_size] [-t tos] [-p port_space_number]",
		Short: "datagrams (UD) to a peer found by IP address over rdma_cm, as rdmacm-utils' udaddy",
		Long: `udaddy resolves -c unreliable-datagram endpoints of a peer through the
kernel's RDMA connection manager, as rdmacm-utils' udaddy does: the
client (-s server_address) resolves the address and the route and asks
the server (no -s, listening at -b on port 7174) for its QP number and
Q_Key (a SIDR exchange); then it sends -C datagrams of -S bytes on each,
the server answers each with one back to the sender it learnt from the
first. Either side can be rdmacm-utils' udaddy. Datagrams need
InfiniBand or RoCE: iWARP has no UD QPs.`,
		Example: `  udaddy -b 192.0.2.1                 # server
  udaddy -s 192.0.2.1 -c 2 -C 100     # client: 2 endpoints, 100 datagrams each way`,
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
	fl.StringVarP(&o.Bind, "bind", "b", "", "bind_address: the local address (the wildcard rdma_getaddrinfo gives without it, [::] or 0.0.0.0)")
	fl.StringVarP(&o.Format, "format", "f", "name", "address_format: name, ip, ipv6 (numeric addresses only), or gid")
	fl.StringVarP(&o.PortSpace, "port-space", "P", "udp", "port_space: udp or ipoib")
	fl.StringVarP(&o.args.conns, "connections", "c", strconv.Itoa(udaddyDefaultConns), "connections")
	fl.StringVarP(&o.args.count, "count", "C", strconv.Itoa(udaddyDefaultCount), "message_count: datagrams each way on each connection")
	fl.StringVarP(&o.args.size, "size", "S", strconv.Itoa(udaddyDefaultSize), "message_size: bytes in a datagram, at most the path MTU")
	fl.StringVarP(&o.args.tos, "tos", "t", "", "type_of_service of the client's endpoints")
	fl.StringVarP(&o.args.psNum, "port-space-number", "p", "", "port space as a number: 0x111 for UDP (the default), 0x2 for IPOIB (use -P)")
	return c
}

// finish checks the flags as udaddy reads them (strictly where udaddy
// takes anything atoi reads).
func (o *udaddyOptions) finish() error {
	num := func(flag, s string, lo int) (int, error) {
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil || int(v) < lo {
			return 0, cmdutil.UsageErrorf("invalid %s %q: want a decimal number from %d", flag, s, lo)
		}
		return int(v), nil
	}
	var err error
	if o.Connections, err = num("-c connections", o.args.conns, 1); err != nil {
		return err
	}
	if o.Count, err = num("-C message_count", o.args.count, 0); err != nil {
		return err
	}
	if o.Size, err = num("-S message_size", o.args.size, 0); err != nil {
		return err
	}
	if o.args.tos != "" {
		v, err := strconv.ParseUint(o.args.tos, 0, 8)
		if err != nil {
			return cmdutil.UsageErrorf("invalid -t type_of_service %q: want a number from 0 to 255", o.args.tos)
		}
		o.TOS, o.SetTOS = uint8(v), true
	}
	f := strings.ToLower(o.Format)
	switch {
	case strings.HasPrefix(f, "ip"):
		o.numeric = true
	case strings.HasPrefix(f, "gid"):
		o.numeric, o.gid = true, true
	case !strings.HasPrefix(f, "name"):
		fmt.Fprintf(o.IO.ErrOut, "Warning: unknown address format\n")
	}
	o.ps = rdmacm.PortSpaceUDP
	switch p := strings.ToLower(o.PortSpace); {
	case strings.HasPrefix(p, "ipoib"):
		o.ps = rdmacm.PortSpaceIPoIB
	case !strings.HasPrefix(p, "udp"):
		fmt.Fprintf(o.IO.ErrOut, "Warning: unknown port space format\n")
	}
	if o.args.psNum != "" {
		v, err := strconv.ParseUint(o.args.psNum, 0, 16)
		ps := rdmacm.PortSpace(v)
		if err != nil || (ps != rdmacm.PortSpaceUDP && ps != rdmacm.PortSpaceIPoIB) {
			return cmdutil.UsageErrorf("invalid -p port space %q: want %#x (UDP) or %#x (IPoIB)", o.args.psNum, uint16(rdmacm.PortSpaceUDP), uint16(rdmacm.PortSpaceIPoIB))
		}
		o.ps = ps
	}
	return nil
}
