package cmd

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// bwSession is one side's verbs objects: the device, a PD, one MR whose
// first half is what this side sends and second half what the peer
// writes, a CQ (with a completion channel for -e) and the RC QP.
type bwSession struct {
	dev      *verbs.Context
	port     verbs.Port
	gidIndex int // -1: no GRH
	gid      [16]byte
	pd       *verbs.PD
	mr       *verbs.MR
	ch       *verbs.CompChannel
	cq       *verbs.CQ
	qp       *verbs.QP
	half     int // bytes in each half of the MR
	inline   int // the most bytes the QP sends inline
	psn      uint32
}

// openBwSession opens the device and checks the port: it must be active,
// and on Ethernet (RoCE) a GID index is needed, 0 unless -x says.
func openBwSession(o *rdmaBwOptions) (*bwSession, error) {
	dev, err := o.open(o.Device)
	if err != nil {
		if o.Device != "" && errors.Is(err, os.ErrNotExist) && !errors.Is(err, verbs.ErrNoVerbs) {
			return nil, usageErrorf("IB device '%s' wasn't found", o.Device)
		}
		return nil, err
	}
	s := &bwSession{dev: dev, gidIndex: o.GIDIndex}
	s.port, err = dev.QueryPort(o.IBPort)
	if err != nil {
		s.close()
		return nil, err
	}
	if s.port.State != 4 {
		s.close()
		return nil, fmt.Errorf("%s port %d is %s (%d), not PORT_ACTIVE", dev.Name(), o.IBPort, verbsPortState(s.port.State), s.port.State)
	}
	if s.port.LinkLayer == verbs.LinkLayerEthernet && s.gidIndex < 0 {
		s.gidIndex = 0
	}
	if s.gidIndex >= 0 {
		if s.gidIndex >= s.port.GIDTblLen && s.port.GIDTblLen > 0 {
			s.close()
			return nil, usageErrorf("GID index %d: %s port %d has %d GIDs", s.gidIndex, dev.Name(), o.IBPort, s.port.GIDTblLen)
		}
		if s.gid, err = dev.QueryGID(o.IBPort, s.gidIndex); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// setup makes the PD, MR, CQ and QP for the parameters and moves the QP
// to INIT.
func (s *bwSession) setup(o *rdmaBwOptions, p bwParams) error {
	var err error
	if s.pd, err = s.dev.AllocPD(); err != nil {
		return err
	}
	s.half = p.Size
	if p.All {
		s.half = 1 << 23
	}
	if s.mr, err = s.pd.AllocMR(2*s.half, verbs.AccessLocalWrite|verbs.AccessRemoteWrite); err != nil {
		return err
	}
	if o.Events {
		if s.ch, err = s.dev.CreateCompChannel(); err != nil {
			return err
		}
	}
	if s.cq, err = s.dev.CreateCQ(p.TxDepth, s.ch); err != nil {
		return err
	}
	s.qp, err = s.pd.CreateQP(verbs.QPConfig{SendCQ: s.cq, RecvCQ: s.cq,
		Caps: verbs.QPCaps{MaxSendWR: p.TxDepth, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: p.Inline}})
	if err != nil {
		return err
	}
	s.inline = min(p.Inline, s.qp.Caps().MaxInlineData)
	s.psn = rand.Uint32() & 0xffffff
	return s.qp.Init(verbs.InitAttr{Port: o.IBPort, Access: verbs.AccessRemoteWrite | verbs.AccessLocalWrite})
}

// dest is what the peer needs to reach this side.
func (s *bwSession) dest() bwDest {
	return bwDest{LID: s.port.LID, QPN: s.qp.Num(), PSN: s.psn, GID: s.gid, RKey: s.mr.RKey(),
		Addr: s.mr.Addr() + uint64(s.half), MTU: s.port.ActiveMTU}
}

// pathMTU is the smaller of the two ports' MTUs, and -m's when given.
func pathMTU(o *rdmaBwOptions, local, remote bwDest) verbs.MTU {
	m := min(local.MTU, remote.MTU)
	if o.MTU != 0 {
		m = min(m, o.MTU)
	}
	return verbs.MTU(m)
}

// connect moves the QP to RTR and RTS towards the peer, with a GRH when a
// GID index is in use (RoCE), as perftest's ctx_connect does.
func (s *bwSession) connect(o *rdmaBwOptions, local, remote bwDest) error {
	rtr := verbs.RTRAttr{PathMTU: pathMTU(o, local, remote), DestQPN: remote.QPN, RQPSN: remote.PSN, DLID: remote.LID,
		SL: uint8(o.SL), MaxDestRdAtomic: 1, MinRNRTimer: 12}
	if s.gidIndex >= 0 {
		rtr.GRH = &verbs.GRH{DGID: remote.GID, SGIDIndex: s.gidIndex, HopLimit: 0xff}
	}
	if err := s.qp.ReadyToReceive(rtr); err != nil {
		return err
	}
	return s.qp.ReadyToSend(verbs.RTSAttr{SQPSN: local.PSN, Timeout: uint8(o.QPTimeout), RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1})
}

// sendHalf and recvHalf are the two halves of the MR.
func (s *bwSession) sendHalf() []byte { return s.mr.Bytes()[:s.half] }
func (s *bwSession) recvHalf() []byte { return s.mr.Bytes()[s.half:] }

// close releases what was made, in reverse order.
func (s *bwSession) close() {
	if s.qp != nil {
		_ = s.qp.Close()
	}
	if s.cq != nil {
		_ = s.cq.Close()
	}
	if s.ch != nil {
		_ = s.ch.Close()
	}
	if s.mr != nil {
		_ = s.mr.Close()
	}
	if s.pd != nil {
		_ = s.pd.Close()
	}
	_ = s.dev.Close()
}

// bwLoop is the state of one send loop: perftest's run_iter_bw, RDMA
// WRITEs of size bytes from the send half to the peer's receive half, at
// most txDepth outstanding, every cqMod-th signalled.
type bwLoop struct {
	s        *bwSession
	wr       verbs.SendWR
	txDepth  int
	cqMod    int
	events   bool
	wc       []verbs.WorkCompletion
	scnt     int // posted
	ccnt     int // completed (the last signalled ID + 1)
	start    time.Time
	onSignal func(id int, at time.Duration)
}

func (l *bwLoop) post(signalled bool) error {
	l.wr.ID = uint64(l.scnt)
	l.wr.Signaled = signalled
	if err := l.s.qp.PostSend(l.wr); err != nil {
		return err
	}
	l.scnt++
	return nil
}

// reap polls the CQ once (waiting on the channel with -e when nothing is
// there and the loop cannot post) and accounts the completions.
func (l *bwLoop) reap(mustWait bool) error {
	n, err := l.s.cq.Poll(l.wc)
	if err != nil {
		return err
	}
	if n == 0 && l.events && mustWait {
		if err := l.s.cq.ReqNotify(false); err != nil {
			return err
		}
		if n, err = l.s.cq.Poll(l.wc); err != nil {
			return err
		}
		if n == 0 {
			if _, err := l.s.ch.Wait(); err != nil {
				return err
			}
			if n, err = l.s.cq.Poll(l.wc); err != nil {
				return err
			}
		}
	}
	for i := range l.wc[:n] {
		if err := l.wc[i].Err(l.s.cq); err != nil {
			return err
		}
		id := int(l.wc[i].ID)
		l.ccnt = id + 1
		if l.onSignal != nil {
			l.onSignal(id, time.Since(l.start))
		}
	}
	return nil
}

// step is one turn of a send loop after its posts: reap the CQ once, and
// stop when the context ended.
func (l *bwLoop) step(ctx context.Context, done <-chan struct{}) error {
	if err := l.reap(true); err != nil {
		return err
	}
	select {
	case <-done:
		return ctx.Err()
	default:
		return nil
	}
}

// runWrites sends size-byte RDMA WRITEs to the peer for p.Iters
// iterations or p.Duration seconds and returns what it measured.
func (s *bwSession) runWrites(ctx context.Context, p bwParams, size int, remote bwDest, events bool) (bwStats, error) {
	l := &bwLoop{s: s, txDepth: p.TxDepth, cqMod: p.CQMod, events: events, wc: make([]verbs.WorkCompletion, 16),
		wr: verbs.SendWR{Op: verbs.OpRDMAWrite, MR: s.mr, Length: size, RemoteAddr: remote.Addr, RKey: remote.RKey, Inline: size <= s.inline}}
	if p.Duration > 0 {
		return l.forDuration(ctx, p, size)
	}
	return l.forIters(ctx, p, size)
}

func (l *bwLoop) forIters(ctx context.Context, p bwParams, size int) (bwStats, error) {
	iters := p.Iters
	txDepth := min(l.txDepth, iters)
	peak := !p.NoPeak && iters <= 20000
	var posted, completed []time.Duration
	var signalled []int
	var last time.Duration
	if peak {
		posted, completed = make([]time.Duration, iters), make([]time.Duration, iters)
	}
	l.onSignal = func(id int, at time.Duration) {
		last = at
		if peak {
			completed[id] = at
			signalled = append(signalled, id)
		}
	}
	done := ctx.Done()
	l.start = time.Now()
	for l.ccnt < iters {
		for l.scnt < iters && l.scnt-l.ccnt < txDepth {
			if peak {
				posted[l.scnt] = time.Since(l.start)
			}
			if err := l.post(l.scnt%l.cqMod == l.cqMod-1 || l.scnt == iters-1); err != nil {
				return bwStats{}, err
			}
		}
		if err := l.step(ctx, done); err != nil {
			return bwStats{}, err
		}
	}
	st := bwStats{Size: size, Iters: iters, Elapsed: last}
	if peak {
		st.Elapsed = last - posted[0]
		st.PeakPerMsg = peakPerMsg(posted, completed, signalled)
	}
	return st, nil
}

// forDuration is perftest's duration mode: a quarter of the time (whole
// seconds) to warm up, the middle sampled, a quarter to cool down. Then
// one last signalled WRITE, so that every byte has landed when its
// completion comes.
func (l *bwLoop) forDuration(ctx context.Context, p bwParams, size int) (bwStats, error) {
	margin := time.Duration(p.Duration/4) * time.Second
	total := time.Duration(p.Duration) * time.Second
	var c0, c1 int
	var t0, t1 time.Duration
	sampling, sampled := false, false
	done := ctx.Done()
	l.start = time.Now()
	for {
		now := time.Since(l.start)
		if !sampling && !sampled && now >= margin {
			sampling, c0, t0 = true, l.ccnt, now
		}
		if sampling && now >= total-margin {
			sampling, sampled, c1, t1 = false, true, l.ccnt, now
		}
		if now >= total {
			break
		}
		for l.scnt-l.ccnt < l.txDepth {
			if err := l.post(l.scnt%l.cqMod == l.cqMod-1); err != nil {
				return bwStats{}, err
			}
		}
		if err := l.step(ctx, done); err != nil {
			return bwStats{}, err
		}
	}
	for l.scnt-l.ccnt >= l.txDepth {
		if err := l.reap(true); err != nil {
			return bwStats{}, err
		}
	}
	if err := l.post(true); err != nil {
		return bwStats{}, err
	}
	for l.ccnt < l.scnt {
		if err := l.reap(true); err != nil {
			return bwStats{}, err
		}
	}
	return bwStats{Size: size, Iters: c1 - c0, Elapsed: t1 - t0}, nil
}
