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
		Name:    "ucmatose",
		Summary: "many RC connections over rdma_cm and messages on each, as rdmacm-utils' ucmatose",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newUcmatoseCmd(f, nil) },
	})
}

// ucmatose's defaults (librdmacm/examples/cmatose.c).
const (
	ucmatoseDefaultPort  = "7471"
	ucmatoseDefaultConns = 1
	ucmatoseDefaultCount = 10
	ucmatoseDefaultSize  = 100
)

// ucmatoseOptions are ucmatose's flags.
type ucmatoseOptions struct {
	IO cmdutil.IOStreams
	// Server is -s, the server's address: given, the tool is the client.
	Server      string
	Bind        string // -b
	Format      string // -f: name, ip, ipv6 (numeric addresses only)
	PortSpace   string // -P: tcp or ib
	Connections int    // -c
	Count       int    // -C
	Size        int    // -S
	Port        string // -p
	Migrate     bool   // -m
	// TOS (-t) and AckTimeout (-a) are set when SetTOS and SetAck say.
	TOS, AckTimeout uint8
	SetTOS, SetAck  bool

	// numeric is -f ip or ipv6: no host name lookups; gid is -f gid:
	// the addresses are GIDs (AF_IB).
	numeric, gid bool
	ps           rdmacm.PortSpace
	ctx          context.Context
	args         struct{ conns, count, size, tos, ack string }
	// resolve looks a host name up (net.DefaultResolver in the tool).
	resolve func(ctx context.Context, host string) (netip.Addr, error)
}

// ucmatoseLookup looks a host name up; tests swap it.
var ucmatoseLookup = rpingResolve

func newUcmatoseCmd(f *cmdutil.Factory, runF func(*ucmatoseOptions) error) *cobra.Command {
	o := &ucmatoseOptions{IO: f.IO, resolve: ucmatoseLookup}
	if runF == nil {
		runF = ucmatoseRun
	}
	c := &cobra.Command{
		Use:   "ucmatose [-s server_address] [-b bind_address] [-f address_format] [-P port_space] [-c connections] [-C message_count] [-S message_size] [-t tos] [-p port] [-m] [-a ack_timeout]",
		Short: "many RC connections over rdma_cm and messages on each, as rdmacm-utils' ucmatose",
		Long: `ucmatose makes -c reliable connections between two hosts through the
kernel's RDMA connection manager, as rdmacm-utils' ucmatose does: the
server (no -s) listens at -b, the client (-s server_address) connects
to it; then the server sends -C messages of -S bytes on each connection,
the client sends as many back, and the server disconnects. Either side
can be rdmacm-utils' ucmatose.`,
		Example: `  ucmatose -b 192.0.2.1                   # server
  ucmatose -s 192.0.2.1 -c 4 -C 100       # client: 4 connections, 100 messages each way
  ucmatose -s 192.0.2.1 -t 0x48 -a 14     # client: type of service and ACK timeout`,
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
	fl.StringVarP(&o.Bind, "bind", "b", "", "bind_address: the local address (the wildcard rdma_getaddrinfo gives without it, [::] or 0.0.0.0; -b ::0 for any IPv6 one)")
	fl.StringVarP(&o.Format, "format", "f", "name", "address_format: name, ip, ipv6 (numeric addresses only), or gid")
	fl.StringVarP(&o.PortSpace, "port-space", "P", "tcp", "port_space: tcp or ib")
	fl.StringVarP(&o.args.conns, "connections", "c", strconv.Itoa(ucmatoseDefaultConns), "connections")
	fl.StringVarP(&o.args.count, "count", "C", strconv.Itoa(ucmatoseDefaultCount), "message_count: messages each way on each connection")
	fl.StringVarP(&o.args.size, "size", "S", strconv.Itoa(ucmatoseDefaultSize), "message_size: bytes in a message")
	fl.StringVarP(&o.args.tos, "tos", "t", "", "type_of_service of the connections (the client's)")
	fl.StringVarP(&o.Port, "port", "p", ucmatoseDefaultPort, "port_number")
	fl.BoolVarP(&o.Migrate, "migrate", "m", false, "migrate the IDs to a new event channel before the disconnect")
	fl.StringVarP(&o.args.ack, "ack-timeout", "a", "", "ack_timeout: the QPs' ACK timeout, 4.096 µs * 2^ack_timeout")
	return c
}

// finish checks the flags. cmatose reads numbers with atoi and strtoul
// and takes anything; ibtool says what it cannot read.
func (o *ucmatoseOptions) finish() error {
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
	byteOpt := func(flag, s string) (uint8, bool, error) {
		if s == "" {
			return 0, false, nil
		}
		v, err := strconv.ParseUint(s, 0, 8)
		if err != nil {
			return 0, false, cmdutil.UsageErrorf("invalid %s %q: want a number from 0 to 255", flag, s)
		}
		return uint8(v), true, nil
	}
	if o.TOS, o.SetTOS, err = byteOpt("-t type_of_service", o.args.tos); err != nil {
		return err
	}
	if o.AckTimeout, o.SetAck, err = byteOpt("-a ack_timeout", o.args.ack); err != nil {
		return err
	}
	if o.SetAck && o.AckTimeout > 31 {
		return cmdutil.UsageErrorf("invalid -a ack_timeout %d: at most 31", o.AckTimeout)
	}
	// cmatose compares prefixes, case-insensitively: "ipv6" is "ip".
	f := strings.ToLower(o.Format)
	switch {
	case strings.HasPrefix(f, "ip"):
		o.numeric = true
	case strings.HasPrefix(f, "gid"):
		o.numeric, o.gid = true, true
	case !strings.HasPrefix(f, "name"):
		fmt.Fprintf(o.IO.ErrOut, "Warning: unknown address format\n")
	}
	o.ps = rdmacm.PortSpaceTCP
	switch p := strings.ToLower(o.PortSpace); {
	case strings.HasPrefix(p, "ib"):
		o.ps = rdmacm.PortSpaceIB
	case !strings.HasPrefix(p, "tcp"):
		fmt.Fprintf(o.IO.ErrOut, "Warning: unknown port space format\n")
	}
	return nil
}
