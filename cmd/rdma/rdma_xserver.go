package rdma

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdmacmutils"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "rdma_xserver",
		Summary: "receive one 16-byte message over an rdma_cm connection, RC or XRC, the server, as rdmacm-utils' rdma_xserver",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newRdmaXCmd(f, true, nil) },
	})
	cmdutil.Register(cmdutil.Tool{
		Name:    "rdma_xclient",
		Summary: "send one 16-byte message over an rdma_cm connection, RC or XRC, the client, as rdmacm-utils' rdma_xclient",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newRdmaXCmd(f, false, nil) },
	})
}

// rdmaXOptions are rdma_xserver's and rdma_xclient's flags.
type rdmaXOptions struct {
	IO cmdutil.IOStreams
	// Server says the tool is rdma_xserver.
	Server bool
	// Addr is the client's -s: the server's address.
	Addr string
	Port string // -p
	// XRC is -c x: XRC QPs in the IB port space (-c r: RC in the TCP
	// port space).
	XRC bool

	ctx     context.Context
	resolve func(ctx context.Context, host string) (netip.Addr, error)
	// endpoint makes the run's rdma_cm endpoint; tests swap it.
	endpoint func(o *rdmaXOptions) rdmaXEndpoint
	comm     string
	// ports ends the waits when the connection's port goes down; the
	// endpoint adds its IDs.
	ports *cmPortWatch
}

func (o *rdmaXOptions) name() string {
	if o.Server {
		return "rdma_xserver"
	}
	return "rdma_xclient"
}

func newRdmaXCmd(f *cmdutil.Factory, server bool, runF func(*rdmaXOptions) error) *cobra.Command {
	o := &rdmaXOptions{IO: f.IO, Server: server, resolve: rdmaPairLookup, endpoint: newCMXEndpoint}
	if runF == nil {
		runF = rdmaXRun
	}
	use := "rdma_xclient [-s server] [-p port_number] [-c communication type]"
	if server {
		use = "rdma_xserver [-p port_number] [-c communication type]"
	}
	c := &cobra.Command{
		Use:   use,
		Short: "one 16-byte message over an rdma_cm connection, RC or XRC, as rdmacm-utils' " + o.name(),
		Long: `rdma_xserver and rdma_xclient make one connection through the kernel's
RDMA connection manager and send one 16-byte message from the client to
the server, as rdmacm-utils' programs of those names do: with -c r (the
default) over RC QPs, with -c x over XRC, the server's XRC_RECV QP and
XRC SRQ taking the message the client's XRC_SEND QP sends to the SRQ
number the server put in its accept's private data. The server listens
on every address: on the wildcard librdmacm's rdma_getaddrinfo gives it,
[::] or 0.0.0.0 as the C library's getaddrinfo orders them on the
machine (0.0.0.0 while the loopback interface is up, [::] while it is
down, unless /etc/gai.conf says otherwise). Either side can be rdmacm-utils'. XRC needs a device with
XRC domains (Soft-RoCE and Soft-iWARP have none: the client fails in
rdma_create_ep, as rdmacm-utils' does).`,
		Example: `  rdma_xserver -c x &
  rdma_xclient -s 192.0.2.1 -c x`,
		Args: cmdutil.ArgsRange(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			switch strings.ToLower(o.comm + " ")[0] {
			case 'r':
			case 'x':
				o.XRC = true
			default:
				return cmdutil.UsageErrorf("invalid -c communication type %q: want r (RC: reliable-connected) or x (XRC: extended-reliable-connected)", o.comm)
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
	if !server {
		fl.StringVarP(&o.Addr, "server", "s", rdmaPairClientDst, "server: the server's address")
	}
	fl.StringVarP(&o.Port, "port", "p", rdmaPairPort, "port_number")
	fl.StringVarP(&o.comm, "comm", "c", "r", "communication type: r - RC: reliable-connected, x - XRC: extended-reliable-connected")
	return c
}

// rdmaXEndpoint is one side's rdma_cm endpoint as rdma_xserver and
// rdma_xclient use it: a step per librdmacm call they make. The run
// names the call in a step's error.
type rdmaXEndpoint interface {
	// resolve is the client's rdma_create_ep: the ID, the address and
	// route to dst, the QP (RC, or XRC_SEND with a send queue only).
	resolve(ctx context.Context, dst netip.AddrPort) error
	// bind is the server's rdma_create_ep: the listening ID bound to src.
	bind(src netip.AddrPort) error
	listen() error
	// getRequest waits for the first connect request and makes its QP
	// (RC, or XRC_RECV in an XRC domain), rejecting the request when
	// that fails.
	getRequest(ctx context.Context) error
	// createSRQ makes the XRC SRQ the request's receives go to and
	// returns its number.
	createSRQ() (uint32, error)
	regMsgs() error
	// postRecv posts the receive of the message (to the SRQ with XRC).
	postRecv() error
	accept(ctx context.Context, privateData []byte) error
	// connect connects and returns the server's private data.
	connect(ctx context.Context) ([]byte, error)
	// postSend sends the message, to XRC SRQ srqn with XRC.
	postSend(srqn uint32) error
	// completion waits for the next completion, of opcode want.
	completion(ctx context.Context, want verbs.WCOpcode) error
	disconnect()
	close()
}

func rdmaXRun(o *rdmaXOptions) error {
	fmt.Fprintf(o.IO.Out, "%s: start\n", o.name())
	o.ports = newCMPortWatch(o.ctx)
	defer o.ports.stop()
	o.ctx = o.ports.ctx
	ep := o.endpoint(o)
	var err error
	if o.Server {
		err = rdmaXServe(o, ep)
	} else {
		err = rdmaXConnect(o, ep)
	}
	err = o.ports.why(err)
	status := 0
	if err != nil {
		status = syncStatus(err)
	}
	ep.close()
	fmt.Fprintf(o.IO.Out, "%s: end %d\n", o.name(), status)
	return ucmaExit(status, err)
}

// rdmaXServe is rdma_xserver: listen, take the first request (its QP,
// with XRC the SRQ), post the receive, accept with the SRQ number (zero
// for RC) as private data, wait for the message.
func rdmaXServe(o *rdmaXOptions, ep rdmaXEndpoint) error {
	// rdma_getaddrinfo(NULL, port, RAI_PASSIVE): the wildcard the C
	// library's getaddrinfo lists first (cmPassive).
	src, err := cmLookup(o.ctx, o.resolve, false, "", o.Port)
	if err != nil {
		fmt.Fprintf(o.IO.Out, "rdma_getaddrinfo: %s\n", gaiText(err))
		return err
	}
	if err := ep.bind(src); err != nil {
		return fmt.Errorf("rdma_create_ep: %w", err)
	}
	if err := ep.listen(); err != nil {
		return fmt.Errorf("rdma_listen: %w", err)
	}
	if err := ep.getRequest(o.ctx); err != nil {
		return fmt.Errorf("rdma_get_request: %w", err)
	}
	var srqn uint32
	if o.XRC {
		if srqn, err = ep.createSRQ(); err != nil {
			return fmt.Errorf("rdma_create_srq: %w", err)
		}
	}
	if err := ep.regMsgs(); err != nil {
		return fmt.Errorf("rdma_reg_msgs: %w", err)
	}
	if err := ep.postRecv(); err != nil {
		return fmt.Errorf("rdma_post_recv: %w", err)
	}
	pd, _ := rdmacmutils.XRCSRQNumber(srqn).MarshalBinary()
	if err := ep.accept(o.ctx, pd); err != nil {
		return fmt.Errorf("rdma_accept: %w", err)
	}
	err = ep.completion(o.ctx, verbs.WCRecv)
	ep.disconnect()
	return err
}

// rdmaXConnect is rdma_xclient: the endpoint, the message's MR, the
// connection (with XRC the server's SRQ number from its private data),
// the send and its completion.
func rdmaXConnect(o *rdmaXOptions, ep rdmaXEndpoint) error {
	dst, err := cmLookup(o.ctx, o.resolve, false, o.Addr, o.Port)
	if err != nil {
		fmt.Fprintf(o.IO.Out, "rdma_getaddrinfo: %s\n", gaiText(err))
		return err
	}
	if err := ep.resolve(o.ctx, dst); err != nil {
		return fmt.Errorf("rdma_create_ep: %w", err)
	}
	if err := ep.regMsgs(); err != nil {
		return fmt.Errorf("rdma_reg_msgs: %w", err)
	}
	pd, err := ep.connect(o.ctx)
	if err != nil {
		return fmt.Errorf("rdma_connect: %w", err)
	}
	var srqn rdmacmutils.XRCSRQNumber
	if o.XRC {
		if err := srqn.UnmarshalBinary(pd); err != nil {
			ep.disconnect()
			return fmt.Errorf("rdma_connect: the server's reply has %d bytes of private data, not the 4 of its XRC SRQ number", len(pd))
		}
	}
	if err := ep.postSend(uint32(srqn)); err != nil {
		ep.disconnect()
		return fmt.Errorf("rdma_post_send: %w", err)
	}
	err = ep.completion(o.ctx, verbs.WCSend)
	ep.disconnect()
	return err
}
