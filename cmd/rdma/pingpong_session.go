package rdma

import (
	"context"
	"fmt"
	"time"

	"github.com/ibtool/ibtool/pkg/pingpong"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// ppKind is the QP type of a connected pingpong.
type ppKind int

const (
	ppRC ppKind = iota
	ppUC
	ppUD
)

// ppQKey is the Q_Key of ibv_ud_pingpong's datagrams.
const ppQKey = 0x11111111

// ppGRHLen is the room a UD receive keeps before the message for the
// GRH the device writes there (40 bytes, present or not).
const ppGRHLen = 40

// ppSession is one connected pingpong's verbs objects.
type ppSession struct {
	dev  *verbs.Context
	port verbs.Port
	gid  [16]byte
	pd   *verbs.PD
	mr   *verbs.MR
	ch   *verbs.CompChannel
	cq   *verbs.CQ
	qp   *verbs.QP
	size int
	inl  bool
	// UD: the message sits after the GRH's room; sends go through ah
	// to the peer's QP.
	off    int
	ah     *verbs.AH
	remQPN uint32
}

func (s *ppSession) close() {
	closeMade(s.ah)
	closeVerbs(s.qp, s.cq, s.ch, s.mr, s.pd, s.dev)
}

// closeMade closes each of cs that was made (is not nil), in the order
// given; a failed close leaves nothing to do but go on.
func closeMade[C interface {
	comparable
	Close() error
}](cs ...C) {
	var none C
	for _, c := range cs {
		if c != none {
			_ = c.Close()
		}
	}
}

// closeVerbs closes the objects every session makes, those of a setup
// that stopped part way too, in reverse order of making them.
func closeVerbs(qp *verbs.QP, cq *verbs.CQ, ch *verbs.CompChannel, mr *verbs.MR, pd *verbs.PD, dev *verbs.Context) {
	closeMade(qp)
	closeMade(cq)
	closeMade(ch)
	closeMade(mr)
	closeMade(pd)
	_ = dev.Close()
}

// ppRun is ibv_rc_pingpong, ibv_uc_pingpong and ibv_ud_pingpong: one QP
// of kind, its receives posted before the exchange, the server connected
// before it answers, then the loop and the report.
func ppRun(o *ppOptions, kind ppKind) error {
	dev, port, gid, err := ppDevice(o)
	if err != nil {
		return err
	}
	s := &ppSession{dev: dev, port: port, gid: gid, size: o.Size}
	defer s.close()
	if kind == ppUD {
		s.off = ppGRHLen
		if mtu := port.ActiveMTU.Bytes(); o.Size > mtu {
			return fmt.Errorf("requested size larger than port MTU (%d)", mtu)
		}
	}
	if err := s.setup(o, kind); err != nil {
		return err
	}
	q := &ppVerbsQueue{s: s, ctx: o.ctx}
	routs, err := ppPostFirst(o, q.postRecv, s.cq)
	if err != nil {
		return err
	}
	my := pingpong.Dest{LID: port.LID, QPN: s.qp.Num(), PSN: ppPSN(), GID: gid}
	if kind == ppUD {
		// ibv_ud_pingpong's local line has a colon before the GID.
		fmt.Fprintf(o.IO.Out, "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x: GID %s\n", my.LID, my.QPN, my.PSN, pingpong.FormatGID(my.GID))
	} else {
		fmt.Fprintf(o.IO.Out, "  local address:  %s\n", my)
	}
	connect := func(rem []pingpong.Dest) error { return s.connect(o, kind, my.PSN, rem[0]) }
	rem, err := ppExchange(o, []pingpong.Dest{my}, connect)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "  remote address: %s\n", rem[0])
	return ppFinish(o, func() error { return connect(rem) }, s.mr.Bytes()[s.off:s.off+o.Size], func() (time.Duration, error) {
		return ppLoop(o.ctx, q, o.Iters, o.RxDepth, o.Server != "", o.Events, routs)
	})
}

// ppPostFirst posts the rx depth receives a pingpong starts with and,
// with -e, asks cq for its first event; it returns how many went.
func ppPostFirst(o *ppOptions, postRecv func(n int) (int, error), cq *verbs.CQ) (int, error) {
	routs, err := postRecv(o.RxDepth)
	if err != nil || routs < o.RxDepth {
		return routs, fmt.Errorf("couldn't post receive (%d): %w", routs, err)
	}
	if o.Events {
		if err := cq.ReqNotify(false); err != nil {
			return routs, err
		}
	}
	return routs, nil
}

// ppFinish is what a pingpong does after the exchange: the client
// connects (and with -c marks buf, the message), loop runs the ping-pong,
// then come the totals and, on the server with -c, the check of buf.
func ppFinish(o *ppOptions, connect func() error, buf []byte, loop func() (time.Duration, error)) error {
	if o.Server != "" {
		if err := connect(); err != nil {
			return err
		}
		if o.Check {
			ppMark(buf)
		}
	}
	elapsed, err := loop()
	if err != nil {
		return err
	}
	if err := pingpong.Report(o.IO.Out, o.Size, o.Iters, elapsed); err != nil {
		return err
	}
	if o.Server == "" && o.Check {
		ppCheck(o.IO.Out, buf)
	}
	return nil
}

// setup makes the PD, the buffer (filled with 0x7b, as rdma-core's; with
// room for the GRH on UD), the CQ of rx depth + 1 entries, and the QP
// (one send, rx depth receives), and moves the QP to INIT.
func (s *ppSession) setup(o *ppOptions, kind ppKind) error {
	err := s.makeBuf(o, max(s.off+o.Size, 1))
	if err != nil {
		return err
	}
	if s.cq, err = s.dev.CreateCQ(o.RxDepth+1, s.ch); err != nil {
		return err
	}
	cfg := verbs.QPConfig{SendCQ: s.cq, RecvCQ: s.cq, Caps: verbs.QPCaps{MaxSendWR: 1, MaxRecvWR: o.RxDepth, MaxSendSGE: 1, MaxRecvSGE: 1}}
	cfg.Type = map[ppKind]verbs.QPType{ppRC: verbs.QPTypeRC, ppUC: verbs.QPTypeUC, ppUD: verbs.QPTypeUD}[kind]
	if s.qp, err = s.pd.CreateQP(cfg); err != nil {
		return err
	}
	s.inl = s.qp.Caps().MaxInlineData >= o.Size
	init := verbs.InitAttr{Port: o.IBPort}
	if kind == ppUD {
		init.QKey = ppQKey
	}
	return s.qp.Init(init)
}

// makeBuf makes the channel (with -e), the PD and an n-byte buffer filled
// with 0x7b, as rdma-core's pingpongs do.
func (s *ppSession) makeBuf(o *ppOptions, n int) error {
	var err error
	if s.ch, s.pd, s.mr, err = ppMakeBuf(s.dev, o.Events, o.ODP, n); err != nil {
		return err
	}
	for i := range s.mr.Bytes() {
		s.mr.Bytes()[i] = 0x7b
	}
	return nil
}

// ppMakeBuf makes the completion channel when events are asked for, the
// PD and an n-byte MR (on demand with odp). It returns what it made
// along with an error, for the session's close.
func ppMakeBuf(dev *verbs.Context, events, odp bool, n int) (ch *verbs.CompChannel, pd *verbs.PD, mr *verbs.MR, err error) {
	if events {
		if ch, err = dev.CreateCompChannel(); err != nil {
			return ch, pd, mr, err
		}
	}
	if pd, err = dev.AllocPD(); err != nil {
		return ch, pd, mr, err
	}
	access := verbs.AccessLocalWrite
	if odp {
		access |= verbs.AccessOnDemand
	}
	mr, err = pd.AllocMR(n, access)
	return ch, pd, mr, err
}

// connect is rdma-core's pp_connect_ctx: RTR towards rem (with a GRH,
// hop limit 1, when rem has a GID), then RTS; on UD, RTR and RTS with no
// peer, then an AH to it.
func (s *ppSession) connect(o *ppOptions, kind ppKind, psn uint32, rem pingpong.Dest) error {
	if kind == ppUD {
		return s.connectUD(o, psn, rem)
	}
	rtr := verbs.RTRAttr{PathMTU: verbs.MTU(o.MTU), DestQPN: rem.QPN, RQPSN: rem.PSN, DLID: rem.LID, SL: uint8(o.SL)}
	if kind == ppRC {
		rtr.MaxDestRdAtomic, rtr.MinRNRTimer = 1, 12
	}
	if rem.Global() {
		rtr.GRH = &verbs.GRH{DGID: rem.GID, SGIDIndex: o.GIDIndex, HopLimit: 1}
	}
	if err := s.qp.ReadyToReceive(rtr); err != nil {
		return fmt.Errorf("failed to modify QP to RTR: %w", err)
	}
	rts := verbs.RTSAttr{SQPSN: psn}
	if kind == ppRC {
		rts.Timeout, rts.RetryCnt, rts.RNRRetry, rts.MaxRdAtomic = 14, 7, 7, 1
	}
	if err := s.qp.ReadyToSend(rts); err != nil {
		return fmt.Errorf("failed to modify QP to RTS: %w", err)
	}
	return nil
}

// ppVerbsQueue is ppQueue on a session's QP and CQ: every message is the
// whole buffer (after the GRH's room on UD, which receives take too).
type ppVerbsQueue struct {
	s   *ppSession
	ctx context.Context // ends a wait for an event
}

func (q *ppVerbsQueue) postRecv(n int) (int, error) {
	for i := range n {
		if err := q.s.qp.PostRecv(verbs.RecvWR{ID: ppRecvWRID, MR: q.s.mr, Length: q.s.off + q.s.size}); err != nil {
			return i, err
		}
	}
	return n, nil
}

func (q *ppVerbsQueue) postSend() error {
	return q.s.qp.PostSend(verbs.SendWR{ID: ppSendWRID, Op: verbs.OpSend, MR: q.s.mr, Offset: q.s.off, Length: q.s.size, Signaled: true,
		Inline: q.s.inl, AH: q.s.ah, RemoteQPN: q.s.remQPN, RemoteQKey: ppQKey})
}

func (q *ppVerbsQueue) poll(wc []verbs.WorkCompletion) (int, error) { return q.s.cq.Poll(wc) }

func (q *ppVerbsQueue) wait() error {
	if _, err := q.s.ch.WaitContext(q.ctx); err != nil {
		return fmt.Errorf("failed to get cq_event: %w", err)
	}
	return q.s.cq.ReqNotify(false)
}

func (s *ppSession) connectUD(o *ppOptions, psn uint32, rem pingpong.Dest) error {
	if err := s.qp.ReadyToReceive(verbs.RTRAttr{}); err != nil {
		return fmt.Errorf("failed to modify QP to RTR: %w", err)
	}
	if err := s.qp.ReadyToSend(verbs.RTSAttr{SQPSN: psn}); err != nil {
		return fmt.Errorf("failed to modify QP to RTS: %w", err)
	}
	a := verbs.AHAttr{Port: o.IBPort, DLID: rem.LID, SL: uint8(o.SL)}
	if rem.Global() {
		a.GRH = &verbs.GRH{DGID: rem.GID, SGIDIndex: o.GIDIndex, HopLimit: 1}
	}
	ah, err := s.pd.CreateAH(a)
	if err != nil {
		return fmt.Errorf("failed to create AH: %w", err)
	}
	s.ah, s.remQPN = ah, rem.QPN
	return nil
}
