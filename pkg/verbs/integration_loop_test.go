//go:build cgo && !noverbs

package verbs

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// loopSide is one end of a loopback RC connection on the integration
// device: its own PD, CQ, MR and QP, as a pyverbs test's player has.
type loopSide struct {
	pd *PD
	cq *CQ
	mr *MR
	qp *QP
}

// loopConfig is what pyverbs' RCResources subclasses vary: the MR's size
// and access, the QPs' remote access and queue sizes.
type loopConfig struct {
	mrSize   int
	mrAccess Access
	qpAccess Access
	caps     QPCaps // zero: 8 WRs and one SGE each way
	// cqEx makes the CQs extended (CreateCQEx) with wcFlags.
	cqEx    bool
	wcFlags WCFlags
	// sendOps makes the QPs extended, posting through ibv_wr_*.
	sendOps SendOps
}

// rcLoop makes two sides on ctx and connects their RC QPs to each other
// through port 1 and the GID pyverbs would pick (trafficGID: it skips the
// test where there is none, on siw, whose QPs connect through iWARP's
// connection manager only), both in RTS; they close when the test ends.
func rcLoop(t *testing.T, ctx *Context, cfg loopConfig) (client, server *loopSide) {
	t.Helper()
	gidIndex, gid, _ := trafficGID(t, ctx)
	a, b := newLoopSide(t, ctx, cfg), newLoopSide(t, ctx, cfg)
	for _, p := range [][2]*loopSide{{a, b}, {b, a}} {
		self, peer := p[0], p[1]
		if err := self.qp.Init(InitAttr{Port: 1, Access: cfg.qpAccess}); err != nil {
			t.Fatal(err)
		}
		rtr := RTRAttr{PathMTU: MTU1024, DestQPN: peer.qp.Num(), RQPSN: 0x100, MaxDestRdAtomic: 1, MinRNRTimer: 12,
			GRH: &GRH{DGID: gid, SGIDIndex: gidIndex, HopLimit: 1}}
		if err := self.qp.ReadyToReceive(rtr); err != nil {
			t.Fatal(err)
		}
		if err := self.qp.ReadyToSend(RTSAttr{SQPSN: 0x100, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1}); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

func newLoopSide(t *testing.T, ctx *Context, cfg loopConfig) *loopSide {
	t.Helper()
	if cfg.caps == (QPCaps{}) {
		cfg.caps = QPCaps{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1}
	}
	s := &loopSide{}
	var err error
	if s.pd, err = ctx.AllocPD(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOrFail(t, s.pd.Close) })
	if cfg.cqEx {
		s.cq, err = ctx.CreateCQEx(16, nil, cfg.wcFlags)
	} else {
		s.cq, err = ctx.CreateCQ(16, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOrFail(t, s.cq.Close) })
	if s.mr, err = s.pd.AllocMR(cfg.mrSize, cfg.mrAccess); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOrFail(t, s.mr.Close) })
	s.qp, err = s.pd.CreateQP(QPConfig{SendCQ: s.cq, RecvCQ: s.cq, Caps: cfg.caps, SendOps: cfg.sendOps})
	if cfg.sendOps != 0 && errors.Is(err, syscall.EOPNOTSUPP) {
		t.Skipf("%s: no extended QPs with send ops %#x: %v", ctx.Name(), uint64(cfg.sendOps), err)
	}
	if err != nil {
		t.Fatal(err)
	}
	qp := s.qp // a test may put another QP in s.qp
	t.Cleanup(func() { closeOrFail(t, qp.Close) })
	return s
}

func closeOrFail(t *testing.T, close func() error) {
	if err := close(); err != nil {
		t.Error(err)
	}
}

// next waits up to 10 seconds for the side's next completion; one with
// an error status comes back with its CompletionError.
func (s *loopSide) next(t *testing.T) (WorkCompletion, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.cq.Next(ctx)
}
