package rdma

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
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
	sges     int // --num-sge: scatter/gather entries a write's data is split into
	psn      uint32
}

// openBwSession opens the device and checks the port: it must be active,
// and on Ethernet (RoCE) a GID index is needed, 0 unless -x says.
func openBwSession(o *rdmaBwOptions) (*bwSession, error) {
	dev, err := o.open(o.Device)
	if err != nil {
		if o.Device != "" && errors.Is(err, os.ErrNotExist) && !errors.Is(err, verbs.ErrNoVerbs) {
			return nil, cmdutil.UsageErrorf("IB device '%s' wasn't found", o.Device)
		}
		return nil, err
	}
	return newBwSession(o, dev)
}

// newBwSession checks the port -i names on the open device dev (closed
// on an error).
func newBwSession(o *rdmaBwOptions, dev *verbs.Context) (*bwSession, error) {
	var err error
	s := &bwSession{dev: dev, gidIndex: o.GIDIndex}
	s.port, err = dev.QueryPort(o.IBPort)
	if err != nil {
		s.close()
		return nil, err
	}
	if s.port.State != verbs.PortStateActive {
		s.close()
		return nil, fmt.Errorf("%s port %d is %s (%d), not PORT_ACTIVE", dev.Name(), o.IBPort, s.port.State, int(s.port.State))
	}
	if s.port.LinkLayer == verbs.LinkLayerEthernet && s.gidIndex < 0 {
		s.gidIndex = 0
	}
	if s.gidIndex >= 0 {
		if s.gidIndex >= s.port.GIDTblLen && s.port.GIDTblLen > 0 {
			s.close()
			return nil, cmdutil.UsageErrorf("GID index %d: %s port %d has %d GIDs", s.gidIndex, dev.Name(), o.IBPort, s.port.GIDTblLen)
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
	if err := s.alloc(o, p); err != nil {
		return err
	}
	var err error
	if s.qp, err = s.createQP(p, s.pd.CreateQP); err != nil {
		return err
	}
	s.qpMade(p)
	return s.qp.Init(verbs.InitAttr{Port: o.IBPort, Access: verbs.AccessRemoteWrite | verbs.AccessLocalWrite})
}

// alloc makes the PD, the MR, the CQ (and its channel with -e): all but
// the QP.
func (s *bwSession) alloc(o *rdmaBwOptions, p bwParams) error {
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
	s.sges = max(o.NumSGE, 1)
	return nil
}

// qpConfig is the RC QP of the test.
func (s *bwSession) qpConfig(p bwParams) verbs.QPConfig {
	return verbs.QPConfig{SendCQ: s.cq, RecvCQ: s.cq,
		Caps: verbs.QPCaps{MaxSendWR: p.TxDepth, MaxRecvWR: 1, MaxSendSGE: s.sges, MaxRecvSGE: 1, MaxInlineData: p.Inline}}
}

// createQP makes the QP with create; a device that refuses the inline
// size (Soft-iWARP takes less than perftest's 220 bytes) gets a QP
// without inline data.
func (s *bwSession) createQP(p bwParams, create func(verbs.QPConfig) (*verbs.QP, error)) (*verbs.QP, error) {
	cfg := s.qpConfig(p)
	qp, err := create(cfg)
	if err != nil && cfg.Caps.MaxInlineData > 0 {
		cfg.Caps.MaxInlineData = 0
		if qp, err2 := create(cfg); err2 == nil {
			return qp, nil
		}
	}
	return qp, err
}

// qpMade notes what the new QP took and picks its first PSN.
func (s *bwSession) qpMade(p bwParams) {
	s.inline = min(p.Inline, s.qp.Caps().MaxInlineData)
	s.psn = rand.Uint32() & 0xffffff
}

// dest is what the peer needs to reach this side.
func (s *bwSession) dest() bwDest {
	return bwDest{LID: s.port.LID, QPN: s.qp.Num(), PSN: s.psn, GID: s.gid, RKey: s.mr.RKey(),
		Addr: s.mr.Addr() + uint64(s.half), MTU: int(s.port.ActiveMTU)}
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
	closeVerbs(s.qp, s.cq, s.ch, s.mr, s.pd, s.dev)
}

// runWrites sends size-byte RDMA WRITEs from the send half to the
// peer's receive half, for p.Iters iterations or p.Duration seconds, in
// one verbs Stream (perftest's run_iter_bw: at most p.TxDepth
// outstanding, every p.CQMod-th signalled), and returns what it measured.
func (s *bwSession) runWrites(ctx context.Context, p bwParams, size int, remote bwDest, events bool) (bwStats, error) {
	st := verbs.Stream{Depth: p.TxDepth, SignalEvery: p.CQMod, Events: events, SGEs: s.sges,
		WR: verbs.SendWR{Op: verbs.OpRDMAWrite, MR: s.mr, Length: size, RemoteAddr: remote.Addr, RKey: remote.RKey, Inline: size <= s.inline}}
	if p.Duration > 0 {
		// perftest's duration mode: a quarter of the time (whole
		// seconds) to warm up, the middle sampled, a quarter to cool
		// down.
		margin := time.Duration(p.Duration/4) * time.Second
		st.Duration = time.Duration(p.Duration) * time.Second
		st.From, st.To = margin, st.Duration-margin
		res, err := s.qp.Stream(ctx, st)
		if err != nil {
			return bwStats{}, err
		}
		return bwStats{Size: size, Iters: res.Window, Elapsed: res.WindowTime}, nil
	}
	st.Count = p.Iters
	st.Depth = min(st.Depth, p.Iters)
	st.SignalEvery = min(st.SignalEvery, st.Depth)
	st.Record = !p.NoPeak && p.Iters <= 20000
	res, err := s.qp.Stream(ctx, st)
	if err != nil {
		return bwStats{}, err
	}
	out := bwStats{Size: size, Iters: p.Iters, Elapsed: res.Last}
	if st.Record {
		out.Elapsed = res.Last - res.PostedAt[0]
		out.PeakPerMsg = peakPerMsg(res.PostedAt, res.CompletedAt, res.Signaled)
	}
	return out, nil
}
