package rdma

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "rdma_server",
		Summary: "one 16-byte message each way over an rdma_cm connection, the server, as rdmacm-utils' rdma_server",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newRdmaPairCmd(f, true, nil) },
	})
	cmdutil.Register(cmdutil.Tool{
		Name:    "rdma_client",
		Summary: "one 16-byte message each way over an rdma_cm connection, the client, as rdmacm-utils' rdma_client",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newRdmaPairCmd(f, false, nil) },
	})
}

// rdma_server's and rdma_client's defaults (librdmacm/examples).
const (
	rdmaPairPort      = "7471"
	rdmaPairServer    = "0.0.0.0"
	rdmaPairClientDst = "127.0.0.1"
	rdmaPairMsgSize   = 16
)

// rdmaPairOptions are rdma_server's and rdma_client's flags.
type rdmaPairOptions struct {
	IO cmdutil.IOStreams
	// Server says the tool is rdma_server.
	Server bool
	// Addr is -s: the address the server listens at, the client connects
	// to.
	Addr string
	Port string // -p

	ctx     context.Context
	resolve func(ctx context.Context, host string) (netip.Addr, error)
}

// rdmaPairLookup looks a host name up; tests swap it.
var rdmaPairLookup = rpingResolve

func newRdmaPairCmd(f *cmdutil.Factory, server bool, runF func(*rdmaPairOptions) error) *cobra.Command {
	o := &rdmaPairOptions{IO: f.IO, Server: server, resolve: rdmaPairLookup}
	if runF == nil {
		runF = rdmaPairRun
	}
	name, def, what := "rdma_client", rdmaPairClientDst, "the server's address"
	if server {
		name, def, what = "rdma_server", rdmaPairServer, "the address to listen at"
	}
	c := &cobra.Command{
		Use:   name + " [-s server_address] [-p port_number]",
		Short: "one 16-byte message each way over an rdma_cm connection, as rdmacm-utils' " + name,
		Long: `rdma_server and rdma_client make one connection through the kernel's RDMA
connection manager and send one 16-byte message each way, as
rdmacm-utils' programs of those names do (librdmacm's rdma_create_ep
and rdma_get_request calls): the client sends first, inline when the
device takes 16 bytes inline, and the server answers. Either side can be
rdmacm-utils'.`,
		Example: `  rdma_server -s 192.0.2.1 &
  rdma_client -s 192.0.2.1`,
		Args: cmdutil.ArgsRange(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			o.ctx = c.Context()
			if o.ctx == nil {
				o.ctx = context.Background()
			}
			return runF(o)
		},
	}
	fl := c.Flags()
	fl.SortFlags = false
	fl.StringVarP(&o.Addr, "server", "s", def, "server_address: "+what)
	fl.StringVarP(&o.Port, "port", "p", rdmaPairPort, "port_number")
	return c
}

// rdmaPair is one run: the ID, its verbs objects and the two messages.
type rdmaPair struct {
	o      *rdmaPairOptions
	ch     *rdmacm.EventChannel
	id     *rdmacm.ID
	dev    *verbs.Context
	pd     *verbs.PD
	cch    *verbs.CompChannel
	cq     *verbs.CQ
	recvMR *verbs.MR
	sendMR *verbs.MR
	inline bool
	armed  bool
	// ports ends the waits when the connection's port goes down.
	ports *cmPortWatch
}

func (p *rdmaPair) name() string {
	if p.o.Server {
		return "rdma_server"
	}
	return "rdma_client"
}

func rdmaPairRun(o *rdmaPairOptions) error {
	p := &rdmaPair{o: o, ports: newCMPortWatch(o.ctx)}
	defer p.ports.stop()
	o.ctx = p.ports.ctx
	fmt.Fprintf(o.IO.Out, "%s: start\n", p.name())
	err := p.ports.why(p.run())
	status := 0
	if err != nil {
		status = syncStatus(err)
	}
	p.close()
	fmt.Fprintf(o.IO.Out, "%s: end %d\n", p.name(), status)
	return ucmaExit(status, err)
}

func (p *rdmaPair) run() error {
	o := p.o
	addr, err := cmLookup(o.ctx, o.resolve, false, o.Addr, o.Port)
	if err != nil {
		fmt.Fprintf(o.IO.Out, "rdma_getaddrinfo: %s\n", gaiText(err))
		return err
	}
	if p.ch, err = rdmacm.NewEventChannel(); err != nil {
		return err
	}
	if o.Server {
		return p.serve(addr)
	}
	return p.connect(addr)
}

// connect is rdma_client: the endpoint (rdma_create_ep: the address,
// the route, the QP), a receive, the connection, the message out, the
// answer in.
func (p *rdmaPair) connect(dst netip.AddrPort) error {
	o := p.o
	var err error
	if p.id, err = p.ch.CreateID(rdmacm.PortSpaceTCP); err != nil {
		return err
	}
	if err := p.id.ResolveAddr(o.ctx, netip.AddrPort{}, dst, 2*time.Second); err != nil {
		return fmt.Errorf("rdma_create_ep: %w", err)
	}
	p.ports.add(p.id)
	if err := p.id.ResolveRoute(o.ctx, 2*time.Second); err != nil {
		return fmt.Errorf("rdma_create_ep: %w", err)
	}
	if err := p.prepare(); err != nil {
		return err
	}
	// librdmacm's connect without parameters: the device's RDMA READ
	// depths, 7 retries.
	cp := rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}
	if d, err := p.id.Device(); err == nil {
		cp.ResponderResources = uint8(min(max(d.Attr.MaxQPRdAtom, 1), 255))
		cp.InitiatorDepth = uint8(min(max(d.Attr.MaxQPInitRdAtom, 1), 255))
	}
	if _, err := p.id.Connect(o.ctx, cp); err != nil {
		return fmt.Errorf("rdma_connect: %w", err)
	}
	err = p.send()
	if err == nil {
		err = p.completion(o.ctx, verbs.WCRecv)
	}
	p.id.Disconnect()
	return err
}

// serve is rdma_server: a listening endpoint, the first request's QP, a
// receive, the accept, the message in, the answer out.
func (p *rdmaPair) serve(src netip.AddrPort) error {
	o := p.o
	listen, err := p.ch.CreateID(rdmacm.PortSpaceTCP)
	if err != nil {
		return err
	}
	defer listen.Close()
	if err := listen.Bind(src); err != nil {
		return fmt.Errorf("rdma_create_ep: %w", err)
	}
	if err := listen.Listen(0); err != nil {
		return fmt.Errorf("rdma_listen: %w", err)
	}
	p.ports.add(listen)
	var req *rdmacm.Event
	for req == nil || req.Type != rdmacm.EventConnectRequest {
		if req, err = listen.Await(o.ctx, "rdma_get_request"); err != nil {
			return err
		}
	}
	p.id = req.ID
	p.ports.add(p.id)
	if err := p.prepare(); err != nil {
		p.id.Reject(nil)
		return err
	}
	cp := rdmacm.ConnParam{ResponderResources: req.Conn.ResponderResources, InitiatorDepth: req.Conn.InitiatorDepth, RetryCount: 7, RNRRetryCount: 7}
	if err := p.id.Accept(o.ctx, cp); err != nil {
		return fmt.Errorf("rdma_accept: %w", err)
	}
	err = p.completion(o.ctx, verbs.WCRecv)
	if err == nil {
		err = p.send()
	}
	p.id.Disconnect()
	return err
}

// prepare makes the ID's QP (one send and one receive, every send
// signaled, 16 bytes inline if the device takes them), the messages'
// MRs, and posts the receive.
func (p *rdmaPair) prepare() error {
	var err error
	if p.dev, err = p.id.OpenDevice(); err != nil {
		return err
	}
	if p.pd, err = p.dev.AllocPD(); err != nil {
		return err
	}
	if p.cch, err = p.dev.CreateCompChannel(); err != nil {
		return err
	}
	if p.cq, err = p.dev.CreateCQ(2, p.cch); err != nil {
		return err
	}
	caps := verbs.QPCaps{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: rdmaPairMsgSize}
	qp, err := p.id.CreateQP(p.pd, verbs.QPConfig{SendCQ: p.cq, RecvCQ: p.cq, SignalAll: true, Caps: caps})
	if err != nil {
		// A device that takes no inline data: sends from an MR.
		caps.MaxInlineData = 0
		if qp, err = p.id.CreateQP(p.pd, verbs.QPConfig{SendCQ: p.cq, RecvCQ: p.cq, SignalAll: true, Caps: caps}); err != nil {
			return fmt.Errorf("rdma_create_ep: %w", err)
		}
	}
	p.inline = qp.Caps().MaxInlineData >= rdmaPairMsgSize
	if !p.inline {
		fmt.Fprintf(p.o.IO.Out, "%s: device doesn't support IBV_SEND_INLINE, using sge sends\n", p.name())
	}
	if p.recvMR, err = p.pd.AllocMR(rdmaPairMsgSize, verbs.AccessLocalWrite); err != nil {
		return fmt.Errorf("rdma_reg_msgs for recv_msg: %w", err)
	}
	if p.sendMR, err = p.pd.AllocMR(rdmaPairMsgSize, verbs.AccessLocalWrite); err != nil {
		return fmt.Errorf("rdma_reg_msgs for send_msg: %w", err)
	}
	if err := qp.PostRecv(verbs.RecvWR{MR: p.recvMR, Length: rdmaPairMsgSize}); err != nil {
		return fmt.Errorf("rdma_post_recv: %w", err)
	}
	return nil
}

// send sends the 16-byte message and waits for its completion.
func (p *rdmaPair) send() error {
	if err := p.id.QP().PostSend(verbs.SendWR{Op: verbs.OpSend, MR: p.sendMR, Length: rdmaPairMsgSize, Inline: p.inline}); err != nil {
		return fmt.Errorf("rdma_post_send: %w", err)
	}
	return p.completion(p.o.ctx, verbs.WCSend)
}

// completion waits for the next completion, which must be of opcode
// want and successful (rdma_get_send_comp, rdma_get_recv_comp).
func (p *rdmaPair) completion(ctx context.Context, want verbs.WCOpcode) error {
	return cmCompletion(ctx, p.cq, p.cch, &p.armed, want)
}

// cmCompletion waits on cq, whose events come to ch, for its next
// completion, which must be of opcode want and successful, as
// librdmacm's rdma_get_send_comp and rdma_get_recv_comp do: poll, arm
// the CQ (armed says it is), poll again, sleep on the channel until ctx
// ends. The error names the librdmacm call.
func cmCompletion(ctx context.Context, cq *verbs.CQ, ch *verbs.CompChannel, armed *bool, want verbs.WCOpcode) error {
	what := "rdma_get_recv_comp"
	if want == verbs.WCSend {
		what = "rdma_get_send_comp"
	}
	var wc [1]verbs.WorkCompletion
	for {
		n, err := cq.Poll(wc[:])
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if n == 1 {
			if err := wc[0].Err(cq); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if wc[0].Opcode != want {
				return fmt.Errorf("%s: a %s completion", what, wc[0].Opcode)
			}
			return nil
		}
		if !*armed {
			if err := cq.ReqNotify(false); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			*armed = true
			continue
		}
		if _, err := ch.WaitContext(ctx); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		*armed = false
	}
}

// close frees what the run made.
func (p *rdmaPair) close() {
	if p.id != nil {
		p.id.Close()
	}
	for _, mr := range []*verbs.MR{p.recvMR, p.sendMR} {
		if mr != nil {
			mr.Close()
		}
	}
	if p.cq != nil {
		p.cq.Close()
	}
	if p.cch != nil {
		p.cch.Close()
	}
	if p.pd != nil {
		p.pd.Close()
	}
	if p.dev != nil {
		p.dev.Close()
	}
	if p.ch != nil {
		p.ch.Close()
	}
}
