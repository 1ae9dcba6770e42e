package rdma

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/pingpong"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibv_xsrq_pingpong",
		Summary: "XRC SEND ping-pong between a server and its clients through XRC SRQs, as rdma-core's ibv_xsrq_pingpong",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbvXsrqPingpongCmd(f, nil) },
	})
}

// xsrqDomainFile is the file rdma-core ties its XRC domain to.
const xsrqDomainFile = "/tmp/xrc_domain"

// xsrqOptions are ibv_xsrq_pingpong's flags.
type xsrqOptions struct {
	IO       cmdutil.IOStreams
	Server   string
	TCPPort  int    // -p
	Device   string // -d
	IBPort   int    // -i
	Size     int    // -s
	MTU      int    // -m as enum ibv_mtu
	Clients  int    // -c (server only; a client is one)
	Tests    int    // -n, per client
	SL       int    // -l
	Events   bool   // -e
	ODP      bool   // -o
	GIDIndex int    // -g; -1: none

	open func(string) (*verbs.Context, error)
	ctx  context.Context
	args struct{ port, ibPort, size, mtu, clients, tests, sl, gid string }
}

func newIbvXsrqPingpongCmd(f *cmdutil.Factory, runF func(*xsrqOptions) error) *cobra.Command {
	o := &xsrqOptions{IO: f.IO, open: verbs.Open}
	if runF == nil {
		runF = xsrqRun
	}
	c := &cobra.Command{
		Use:   "ibv_xsrq_pingpong [options] [server]",
		Short: "XRC SEND ping-pong through XRC SRQs, as rdma-core's ibv_xsrq_pingpong",
		Long: `ibv_xsrq_pingpong exchanges messages between a server and -c clients over
XRC (eXtended Reliable Connected) QPs, as rdma-core's ibv_xsrq_pingpong
does: each side opens the XRC domain of /tmp/xrc_domain, an XRC SRQ and a
pair of XRC QPs per peer; a message names the peer's SRQ number, and the
server sends to its clients round robin over its send QPs. Each side prints
its and the peer's address (receive and send QP numbers, PSN, SRQ number,
GID), runs -n exchanges per client and prints "success". The addresses go
over TCP in rdma-core's format, so either side can be rdma-core's program.
The device must support XRC (Soft-RoCE does not).`,
		Example: `  ibv_xsrq_pingpong -d mlx5_0 -c 2           # server of two clients
  ibv_xsrq_pingpong -d mlx5_0 host1           # each client`,
		Args: cmdutil.ArgsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.finish(args); err != nil {
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
	fl.StringVarP(&o.args.port, "port", "p", fmt.Sprint(pingpong.DefaultPort), "listen on/connect to TCP port <port>")
	fl.StringVarP(&o.Device, "ib-dev", "d", "", "use IB device <dev> (default first device found)")
	fl.StringVarP(&o.args.ibPort, "ib-port", "i", "1", "use port <port> of IB device")
	fl.StringVarP(&o.args.size, "size", "s", "4096", "size of message to exchange")
	fl.StringVarP(&o.args.mtu, "mtu", "m", "1024", "path MTU")
	fl.StringVarP(&o.args.clients, "clients", "c", "1", "number of clients (on server only)")
	fl.StringVarP(&o.args.tests, "num_tests", "n", "5", "number of tests per client")
	fl.StringVarP(&o.args.sl, "sl", "l", "0", "service level value")
	fl.BoolVarP(&o.Events, "events", "e", false, "sleep on CQ events (default poll)")
	fl.BoolVarP(&o.ODP, "odp", "o", false, "use on demand paging")
	fl.StringVarP(&o.args.gid, "gid-idx", "g", "-1", "local port GID index (needed on RoCE)")
	return c
}

func (o *xsrqOptions) finish(args []string) error {
	for _, n := range []struct {
		dst  *int
		name string
		s    string
		min  int
		max  uint64
	}{
		{&o.TCPPort, "-p port", o.args.port, 0, 65535}, {&o.IBPort, "-i IB port", o.args.ibPort, 1, 255},
		{&o.Size, "-s size", o.args.size, 1, 1<<31 - 1}, {&o.Clients, "-c clients", o.args.clients, 1, 1 << 16},
		{&o.Tests, "-n tests", o.args.tests, 1, 1 << 24}, {&o.SL, "-l service level", o.args.sl, 0, 15},
	} {
		v, err := pingpong.ParseNum(n.name, n.s, n.max)
		if err != nil {
			return cmdutil.UsageErrorf("%v", err)
		}
		if int(v) < n.min {
			return cmdutil.UsageErrorf("invalid %s %s: want at least %d", n.name, n.s, n.min)
		}
		*n.dst = int(v)
	}
	o.GIDIndex = -1
	if o.args.gid != "-1" {
		v, err := pingpong.ParseNum("-g GID index", o.args.gid, 255)
		if err != nil {
			return cmdutil.UsageErrorf("%v", err)
		}
		o.GIDIndex = int(v)
	}
	m, err := pingpong.ParseNum("-m MTU", o.args.mtu, 1<<16)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	if o.MTU = pingpong.MTUBytes(m); o.MTU == 0 {
		return cmdutil.UsageErrorf("invalid -m MTU %s: want 256, 512, 1024, 2048 or 4096", o.args.mtu)
	}
	if len(args) == 1 {
		o.Server = args[0]
		o.Clients = 1 // rdma-core's client is one, whatever -c says
	}
	return nil
}

// xsrqSession is one side's objects: per peer a receive (target) and a
// send (initiator) QP, the address the peer sent, its connection and
// the sends made to it.
type xsrqSession struct {
	dev           *verbs.Context
	file          *os.File
	pd            *verbs.PD
	mr            *verbs.MR
	ch            *verbs.CompChannel
	recvCQ        *verbs.CQ
	sendCQ        *verbs.CQ
	xrcd          *verbs.XRCD
	srq           *verbs.SRQ
	recv, send    []*verbs.QP
	rem           []pingpong.XRCDest
	psn           []uint32
	conns         []*pingpong.Conn
	sent          []int // rdma-core's pp_cnt
	lid           uint16
	gid           [16]byte
	size, clients int
	tests         int
}

func (s *xsrqSession) close() {
	closeMade(s.conns...)
	closeMade(s.send...)
	closeMade(s.recv...)
	closeMade(s.srq)
	closeMade(s.xrcd)
	closeMade(s.sendCQ, s.recvCQ)
	closeMade(s.mr)
	closeMade(s.pd)
	closeMade(s.ch)
	closeMade(s.file)
	_ = s.dev.Close()
}

func xsrqRun(o *xsrqOptions) error {
	dev, err := o.open(o.Device)
	if err != nil {
		if o.Device != "" && errors.Is(err, os.ErrNotExist) && !errors.Is(err, verbs.ErrNoVerbs) {
			return cmdutil.UsageErrorf("IB device %s not found", o.Device)
		}
		return err
	}
	s := &xsrqSession{dev: dev, size: o.Size, clients: o.Clients, tests: o.Tests}
	defer s.close()
	if err := s.setup(o); err != nil {
		return err
	}
	if err := s.postRecv(o.Clients); err != nil {
		return err
	}
	if o.Server != "" {
		c, err := pingpong.Dial(o.ctx, o.Server, o.TCPPort)
		if err != nil {
			return err
		}
		s.conns[0] = c
		context.AfterFunc(o.ctx, func() { c.Close() })
		if err := s.sendLocal(o, 0); err != nil {
			return err
		}
		if err := s.recvRemote(o, 0); err != nil {
			return err
		}
		if err := s.connect(o, 0); err != nil {
			return err
		}
	} else {
		l, err := pingpong.Listen(o.ctx, o.TCPPort)
		if err != nil {
			return err
		}
		for i := range o.Clients {
			c, err := l.Accept()
			if err != nil {
				l.Close()
				return err
			}
			s.conns[i] = c
			context.AfterFunc(o.ctx, func() { c.Close() })
			if err := s.recvRemote(o, i); err != nil {
				l.Close()
				return err
			}
			if err := s.sendLocal(o, i); err != nil {
				l.Close()
				return err
			}
			if err := s.connect(o, i); err != nil {
				l.Close()
				return err
			}
		}
		l.Close()
		for i := range o.Clients {
			if err := s.postSend(i); err != nil {
				return err
			}
		}
	}
	if err := s.loop(o); err != nil {
		return err
	}
	if err := s.terminate(o.Server != ""); err != nil {
		return err
	}
	fmt.Fprintln(o.IO.Out, "success")
	return nil
}

// setup is rdma-core's pp_init_ctx and create_qps: the buffer (zeros),
// the domain of /tmp/xrc_domain, a receive CQ (with the channel for -e)
// and a send CQ of one entry per client, the XRC SRQ, and per client an
// XRC_RECV QP (remote read and write allowed) and an XRC_SEND QP, in INIT.
func (s *xsrqSession) setup(o *xsrqOptions) error {
	port, err := s.dev.QueryPort(o.IBPort)
	if err != nil {
		return err
	}
	s.lid = port.LID
	if port.LinkLayer != verbs.LinkLayerEthernet && s.lid == 0 {
		return fmt.Errorf("couldn't get local LID: %s port %d has none (is the subnet manager running?)", s.dev.Name(), o.IBPort)
	}
	if o.GIDIndex >= 0 {
		if s.gid, err = s.dev.QueryGID(o.IBPort, o.GIDIndex); err != nil {
			return fmt.Errorf("can't read sgid of index %d: %w", o.GIDIndex, err)
		}
	}
	n := o.Clients
	s.recv, s.send = make([]*verbs.QP, 0, n), make([]*verbs.QP, 0, n)
	s.rem, s.psn, s.conns, s.sent = make([]pingpong.XRCDest, n), make([]uint32, n), make([]*pingpong.Conn, n), make([]int, n)
	if s.ch, s.pd, s.mr, err = ppMakeBuf(s.dev, o.Events, o.ODP, o.Size); err != nil {
		return err
	}
	fd := -1
	// rdma-core goes on without the file (a domain of its own) when
	// it cannot create it.
	if s.file, err = os.OpenFile(xsrqDomainFile, os.O_RDONLY|os.O_CREATE, 0o440); err == nil {
		fd = int(s.file.Fd())
	} else {
		fmt.Fprintf(o.IO.ErrOut, "couldn't create the file for the XRC domain, but not stopping: %v\n", err)
		s.file = nil
	}
	if s.xrcd, err = s.dev.OpenXRCD(fd); err != nil {
		return fmt.Errorf("couldn't open the XRC domain: %w", err)
	}
	if s.recvCQ, err = s.dev.CreateCQ(n, s.ch); err != nil {
		return err
	}
	if o.Events {
		if err := s.recvCQ.ReqNotify(false); err != nil {
			return err
		}
	}
	if s.sendCQ, err = s.dev.CreateCQ(n, nil); err != nil {
		return err
	}
	if s.srq, err = s.pd.CreateXRCSRQ(s.xrcd, s.recvCQ, n, 1); err != nil {
		return err
	}
	for i := range n {
		r, err := s.pd.CreateQP(verbs.QPConfig{Type: verbs.QPTypeXRCRecv, XRCD: s.xrcd})
		if err != nil {
			return fmt.Errorf("couldn't create recv QP[%d]: %w", i, err)
		}
		s.recv = append(s.recv, r)
		if err := r.Init(verbs.InitAttr{Port: o.IBPort, Access: verbs.AccessRemoteWrite | verbs.AccessRemoteRead}); err != nil {
			return fmt.Errorf("failed to modify recv QP[%d] to INIT: %w", i, err)
		}
		sq, err := s.pd.CreateQP(verbs.QPConfig{Type: verbs.QPTypeXRCSend, SendCQ: s.sendCQ, Caps: verbs.QPCaps{MaxSendWR: n * o.Tests, MaxSendSGE: 1}})
		if err != nil {
			return fmt.Errorf("couldn't create send QP[%d]: %w", i, err)
		}
		s.send = append(s.send, sq)
		if err := sq.Init(verbs.InitAttr{Port: o.IBPort}); err != nil {
			return fmt.Errorf("failed to modify send QP[%d] to INIT: %w", i, err)
		}
	}
	return nil
}

func (s *xsrqSession) postRecv(n int) error {
	for range n {
		if err := s.srq.PostRecv(verbs.RecvWR{MR: s.mr, Length: s.size}); err != nil {
			return fmt.Errorf("failed to post receive to SRQ: %w", err)
		}
	}
	return nil
}

// sendLocal prints and sends this side's address for peer i, with a new
// random PSN.
func (s *xsrqSession) sendLocal(o *xsrqOptions, i int) error {
	s.psn[i] = ppPSN()
	d := pingpong.XRCDest{LID: s.lid, RecvQPN: s.recv[i].Num(), SendQPN: s.send[i].Num(), PSN: s.psn[i], SRQN: s.srq.Num(), GID: s.gid}
	fmt.Fprint(o.IO.Out, d.Line("local"))
	return s.conns[i].SendXRC(d)
}

func (s *xsrqSession) recvRemote(o *xsrqOptions, i int) error {
	d, err := s.conns[i].RecvXRC()
	if err != nil {
		return err
	}
	s.rem[i] = d
	fmt.Fprint(o.IO.Out, d.Line("remote"))
	return nil
}

// connect is rdma-core's connect_qps: the receive QP to the peer's send
// QP, the send QP to the peer's receive QP, with a GRH (hop limit 5) when
// the peer's GID has an interface ID.
func (s *xsrqSession) connect(o *xsrqOptions, i int) error {
	rem := s.rem[i]
	var grh *verbs.GRH
	if rem.Global() {
		grh = &verbs.GRH{DGID: rem.GID, SGIDIndex: o.GIDIndex, HopLimit: 5}
	}
	r := s.recv[i]
	if err := r.ReadyToReceive(verbs.RTRAttr{PathMTU: verbs.MTU(o.MTU), DestQPN: rem.SendQPN, RQPSN: rem.PSN, DLID: rem.LID, SL: uint8(o.SL), GRH: grh, MinRNRTimer: 12}); err != nil {
		return fmt.Errorf("failed to modify recv QP[%d] to RTR: %w", i, err)
	}
	if err := r.ReadyToSend(verbs.RTSAttr{SQPSN: s.psn[i], Timeout: 14}); err != nil {
		return fmt.Errorf("failed to modify recv QP[%d] to RTS: %w", i, err)
	}
	sq := s.send[i]
	if err := sq.ReadyToReceive(verbs.RTRAttr{PathMTU: verbs.MTU(o.MTU), DestQPN: rem.RecvQPN, RQPSN: rem.PSN, DLID: rem.LID, SL: uint8(o.SL), GRH: grh}); err != nil {
		return fmt.Errorf("failed to modify send QP[%d] to RTR: %w", i, err)
	}
	if err := sq.ReadyToSend(verbs.RTSAttr{SQPSN: s.psn[i], Timeout: 14, RetryCnt: 7, RNRRetry: 7}); err != nil {
		return fmt.Errorf("failed to modify send QP[%d] to RTS: %w", i, err)
	}
	return nil
}

// postSend is rdma-core's pp_post_send: a message to peer i's SRQ, over
// the send QPs round robin, signalled when it is the peer's last.
func (s *xsrqSession) postSend(i int) error {
	qpi := (i + s.sent[i]) % s.clients
	s.sent[i]++
	wr := verbs.SendWR{ID: uint64(i), Op: verbs.OpSend, MR: s.mr, Length: s.size, RemoteSRQN: s.rem[i].SRQN, Signaled: s.sent[i] >= s.tests}
	if err := s.send[qpi].PostSend(wr); err != nil {
		return fmt.Errorf("couldn't post send: %w", err)
	}
	return nil
}

// peer is rdma-core's find_qp: the client whose receive QP a completion
// came through (the only one when there is one).
func (s *xsrqSession) peer(qpn uint32) int {
	if s.clients == 1 {
		return 0
	}
	for i, r := range s.recv {
		if r.Num() == qpn {
			return i
		}
	}
	return 0
}

// loop receives clients * tests messages, reposting each receive and
// answering while the peer has tests left, then waits for the last
// signalled send of each client.
func (s *xsrqSession) loop(o *xsrqOptions) error {
	total, cnt := s.clients*s.tests, 0
	var wc [1]verbs.WorkCompletion
	idle := 0
	for cnt < total {
		if o.Events {
			if _, err := s.ch.WaitContext(o.ctx); err != nil {
				return fmt.Errorf("failed to get cq_event: %w", err)
			}
			if err := s.recvCQ.ReqNotify(false); err != nil {
				return err
			}
		}
		for {
			n, err := s.recvCQ.Poll(wc[:])
			if err != nil {
				return err
			}
			if n == 0 {
				break
			}
			if wc[0].Status != verbs.WCSuccess {
				return fmt.Errorf("work completion error %d (%s)", int(wc[0].Status), wc[0].Status)
			}
			if err := s.postRecv(n); err != nil {
				return err
			}
			if i := s.peer(wc[0].QPNum); s.sent[i] < s.tests {
				if err := s.postSend(i); err != nil {
					return err
				}
			}
			cnt += n
		}
		if idle++; idle%4096 == 0 && o.ctx.Err() != nil {
			return o.ctx.Err()
		}
	}
	for done := 0; done < s.clients; {
		n, err := s.sendCQ.Poll(wc[:])
		if err != nil {
			return err
		}
		if n > 0 && wc[0].Status != verbs.WCSuccess {
			return fmt.Errorf("work completion error %d (%s)", int(wc[0].Status), wc[0].Status)
		}
		done += n
		if idle++; idle%4096 == 0 && o.ctx.Err() != nil {
			return o.ctx.Err()
		}
	}
	return nil
}

// terminate is rdma-core's: a client sends "END" and waits for the
// server's; the server waits for every client's, then answers each, so
// that no side frees what a peer's last message still goes to.
func (s *xsrqSession) terminate(client bool) error {
	if client {
		if err := s.conns[0].SendEnd(); err != nil {
			return err
		}
		return s.conns[0].RecvEnd()
	}
	for _, c := range s.conns {
		if err := c.RecvEnd(); err != nil {
			return err
		}
	}
	for _, c := range s.conns {
		if err := c.SendEnd(); err != nil {
			return err
		}
	}
	return nil
}
