package rdma

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/pingpong"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibv_srq_pingpong",
		Summary: "RC SEND ping-pong over several QPs sharing a receive queue, as rdma-core's ibv_srq_pingpong",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbvSrqPingpongCmd(f, nil) },
	})
}

// srqMaxQP is rdma-core's MAX_QP: the exchange always carries this many
// addresses each way, zeros after the QPs in use, and -q must stay under
// it.
const srqMaxQP = 256

var srqDefaults = ppDefaults{size: 4096, mtu: 1024}

// srqOptions are ibv_srq_pingpong's flags: the common ones and -q.
type srqOptions struct {
	ppOptions
	NumQP   int // -q
	numQPIn string
}

func newIbvSrqPingpongCmd(f *cmdutil.Factory, runF func(*srqOptions) error) *cobra.Command {
	o := &srqOptions{ppOptions: ppOptions{IO: f.IO, open: verbs.Open}}
	if runF == nil {
		runF = srqRun
	}
	c := &cobra.Command{
		Use:   "ibv_srq_pingpong [options] [server]",
		Short: "RC SEND ping-pong over several QPs sharing a receive queue, as rdma-core's ibv_srq_pingpong",
		Long: `ibv_srq_pingpong runs the RC ping-pong of ibv_rc_pingpong over several QPs
(16 by default) whose receives all come from one shared receive queue
(SRQ), as rdma-core's ibv_srq_pingpong does, and prints the same lines:
one local and one remote address per QP, then the totals. The addresses go
over TCP in rdma-core's format (256 of them each way, as rdma-core sends),
so either side can be rdma-core's program. On RoCE give a GID index with
-g.`,
		Example: `  ibv_srq_pingpong -d rxe0 -g 0                # server
  ibv_srq_pingpong -d rxe0 -g 0 -q 4 192.0.2.1  # client over 4 QPs`,
		Args: cmdutil.ArgsRange(0, 1),
	}
	check := func() error {
		v, err := pingpong.ParseNum("-q number of QPs", o.numQPIn, srqMaxQP)
		if err != nil {
			return cmdutil.UsageErrorf("%v", err)
		}
		o.NumQP = int(v)
		switch {
		case o.NumQP > o.RxDepth:
			return cmdutil.UsageErrorf("rx_depth %d is too small for %d QPs -- must have at least one receive per QP", o.RxDepth, o.NumQP)
		case o.NumQP >= srqMaxQP:
			return cmdutil.UsageErrorf("num_qp %d must be less than %d", o.NumQP, srqMaxQP-1)
		case o.NumQP < 1:
			return cmdutil.UsageErrorf("invalid -q number of QPs 0: want 1 to %d", srqMaxQP-1)
		}
		return nil
	}
	c.RunE = ppRunE(&o.ppOptions, srqDefaults, check, func(*ppOptions) error { return runF(o) })
	fl := c.Flags()
	addPingpongFlags(fl, &o.ppOptions, srqDefaults)
	fl.StringVarP(&o.numQPIn, "num-qp", "q", "16", "number of QPs to use")
	fl.BoolVarP(&o.ODP, "odp", "o", false, "use on demand paging")
	fl.Lookup("iters").Usage = "number of exchanges (in all, over every QP)"
	return c
}

// srqSession is ibv_srq_pingpong's verbs objects.
type srqSession struct {
	ppSession
	srq *verbs.SRQ
	qps []*verbs.QP
}

func (s *srqSession) close() {
	closeMade(s.qps...)
	closeMade(s.srq)
	s.ppSession.close()
}

func srqRun(o *srqOptions) error {
	dev, port, gid, err := ppDevice(&o.ppOptions)
	if err != nil {
		return err
	}
	s := &srqSession{ppSession: ppSession{dev: dev, port: port, gid: gid, size: o.Size}}
	defer s.close()
	if err := s.setup(o); err != nil {
		return err
	}
	q := &srqVerbsQueue{s: s, ctx: o.ctx}
	routs, err := ppPostFirst(&o.ppOptions, q.postRecv, s.cq)
	if err != nil {
		return err
	}
	mine := make([]pingpong.Dest, srqMaxQP)
	for i, qp := range s.qps {
		mine[i] = pingpong.Dest{LID: port.LID, QPN: qp.Num(), PSN: ppPSN(), GID: gid}
		fmt.Fprintf(o.IO.Out, "  local address:  %s\n", mine[i])
	}
	connect := func(rem []pingpong.Dest) error { return s.connect(o, mine, rem) }
	rem, err := ppExchange(&o.ppOptions, mine, connect)
	if err != nil {
		return err
	}
	for i := range s.qps {
		fmt.Fprintf(o.IO.Out, "  remote address: %s\n", rem[i])
	}
	return ppFinish(&o.ppOptions, func() error { return connect(rem) }, s.mr.Bytes()[:o.Size], func() (time.Duration, error) {
		return srqLoop(o.ctx, q, o.NumQP, o.Iters, o.RxDepth, o.Server != "", o.Events, routs)
	})
}

// setup makes the buffer, the CQ (rx depth + QPs entries), the SRQ of rx
// depth receives and the QPs, each moved to INIT.
func (s *srqSession) setup(o *srqOptions) error {
	err := s.makeBuf(&o.ppOptions, max(o.Size, 1))
	if err != nil {
		return err
	}
	if s.cq, err = s.dev.CreateCQ(o.RxDepth+o.NumQP, s.ch); err != nil {
		return err
	}
	if s.srq, err = s.pd.CreateSRQ(o.RxDepth, 1); err != nil {
		return err
	}
	for range o.NumQP {
		qp, err := s.pd.CreateQP(verbs.QPConfig{SendCQ: s.cq, RecvCQ: s.cq, SRQ: s.srq, Caps: verbs.QPCaps{MaxSendWR: 1, MaxSendSGE: 1}})
		if err != nil {
			return err
		}
		s.qps = append(s.qps, qp)
		if err := qp.Init(verbs.InitAttr{Port: o.IBPort}); err != nil {
			return err
		}
	}
	s.inl = s.qps[0].Caps().MaxInlineData >= o.Size
	return nil
}

// connect is rdma-core's: QP i to the peer's QP i, each with a GRH to the
// peer's first GID when that one has an interface ID.
func (s *srqSession) connect(o *srqOptions, mine, rem []pingpong.Dest) error {
	for i, qp := range s.qps {
		rtr := verbs.RTRAttr{PathMTU: verbs.MTU(o.MTU), DestQPN: rem[i].QPN, RQPSN: rem[i].PSN, DLID: rem[i].LID, SL: uint8(o.SL),
			MaxDestRdAtomic: 1, MinRNRTimer: 12}
		if rem[0].Global() {
			rtr.GRH = &verbs.GRH{DGID: rem[0].GID, SGIDIndex: o.GIDIndex, HopLimit: 1}
		}
		if err := qp.ReadyToReceive(rtr); err != nil {
			return fmt.Errorf("failed to modify QP[%d] to RTR: %w", i, err)
		}
		if err := qp.ReadyToSend(verbs.RTSAttr{SQPSN: mine[i].PSN, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1}); err != nil {
			return fmt.Errorf("failed to modify QP[%d] to RTS: %w", i, err)
		}
	}
	return nil
}

// srqQueue is what srqLoop drives: the SRQ's receives, each QP's sends
// and the one CQ. The verbs one is srqVerbsQueue; tests use a fake.
type srqQueue interface {
	postRecv(n int) (int, error)
	postSend(qp int) error
	poll(wc []verbs.WorkCompletion) (int, error)
	wait() error
	// qpIndex is the index of the QP numbered qpn, or -1.
	qpIndex(qpn uint32) int
}

// srqLoop is rdma-core's loop over numQP QPs: ppLoop's, with a pending
// mask per QP, the SRQ topped up when no more than one receive per QP is
// left, and iters counting the sends and receives of all QPs together.
func srqLoop(ctx context.Context, q srqQueue, numQP, iters, rxDepth int, client, events bool, routs int) (time.Duration, error) {
	pending := make([]int, numQP)
	for i := range pending {
		pending[i] = ppRecvWRID
		if client {
			if err := q.postSend(i); err != nil {
				return 0, fmt.Errorf("couldn't post send: %w", err)
			}
			pending[i] |= ppSendWRID
		}
	}
	start := time.Now()
	wc := make([]verbs.WorkCompletion, numQP+rxDepth)
	rcnt, scnt, idle := 0, 0, 0
	for rcnt < iters || scnt < iters {
		if events {
			if err := q.wait(); err != nil {
				return 0, err
			}
		}
		n, err := q.poll(wc)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			if idle++; idle%4096 == 0 && ctx.Err() != nil {
				return 0, ctx.Err()
			}
			continue
		}
		for _, w := range wc[:n] {
			if w.Status != verbs.WCSuccess {
				return 0, fmt.Errorf("failed status %s (%d) for wr_id %d", w.Status, int(w.Status), w.ID)
			}
			i := q.qpIndex(w.QPNum)
			if i < 0 {
				return 0, fmt.Errorf("couldn't find QPN %06x", w.QPNum)
			}
			switch w.ID {
			case ppSendWRID:
				scnt++
			case ppRecvWRID:
				if routs--; routs <= numQP {
					got, err := q.postRecv(rxDepth - routs)
					routs += got
					if err != nil || routs < rxDepth {
						return 0, fmt.Errorf("couldn't post receive (%d): %w", routs, err)
					}
				}
				rcnt++
			default:
				return 0, fmt.Errorf("completion for unknown wr_id %d", w.ID)
			}
			pending[i] &^= int(w.ID)
			if scnt < iters && pending[i] == 0 {
				if err := q.postSend(i); err != nil {
					return 0, fmt.Errorf("couldn't post send: %w", err)
				}
				pending[i] = ppRecvWRID | ppSendWRID
			}
		}
	}
	return time.Since(start), nil
}

// srqVerbsQueue is srqQueue on a session.
type srqVerbsQueue struct {
	s   *srqSession
	ctx context.Context
}

func (q *srqVerbsQueue) postRecv(n int) (int, error) {
	for i := range n {
		if err := q.s.srq.PostRecv(verbs.RecvWR{ID: ppRecvWRID, MR: q.s.mr, Length: q.s.size}); err != nil {
			return i, err
		}
	}
	return n, nil
}

func (q *srqVerbsQueue) postSend(i int) error {
	return q.s.qps[i].PostSend(verbs.SendWR{ID: ppSendWRID, Op: verbs.OpSend, MR: q.s.mr, Length: q.s.size, Signaled: true, Inline: q.s.inl})
}

func (q *srqVerbsQueue) poll(wc []verbs.WorkCompletion) (int, error) { return q.s.cq.Poll(wc) }

func (q *srqVerbsQueue) wait() error {
	if _, err := q.s.ch.WaitContext(q.ctx); err != nil {
		return fmt.Errorf("failed to get cq_event: %w", err)
	}
	return q.s.cq.ReqNotify(false)
}

func (q *srqVerbsQueue) qpIndex(qpn uint32) int {
	for i, qp := range q.s.qps {
		if qp.Num() == qpn {
			return i
		}
	}
	return -1
}
