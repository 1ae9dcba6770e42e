//go:build cgo && !noverbs

package verbs

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
)

// The extended QP tests are rdma-core's tests/test_qpex.py: traffic
// posted through the ibv_wr_* ops (QPConfig.SendOps) on RC QPs, and UD
// SENDs.

const qpexSize = 1024

// exLoop is rcLoop with extended QPs allowed ops.
func exLoop(t *testing.T, access Access, ops ...Opcode) (client, server *loopSide) {
	ctx := integrationContext(t)
	return rcLoop(t, ctx, loopConfig{mrSize: qpexSize, mrAccess: access, qpAccess: access, sendOps: SendOpsOf(ops...)})
}

// exTraffic is pyverbs' traffic with new_send: ten times each way, the
// receiver posts a receive and the sender sends (op SEND, SEND_WITH_IMM
// or RDMA_WRITE_WITH_IMM into the receiver's MR); the receiver's bytes
// and completion say what arrived.
func exTraffic(t *testing.T, client, server *loopSide, op Opcode) {
	t.Helper()
	for i := range 10 {
		for _, p := range [][2]*loopSide{{client, server}, {server, client}} {
			from, to := p[0], p[1]
			Pattern(uint64(i)).Fill(from.mr.Bytes())
			clear(to.mr.Bytes())
			if err := to.qp.PostRecv(RecvWR{ID: uint64(i), MR: to.mr, Length: qpexSize}); err != nil {
				t.Fatal(err)
			}
			wr := SendWR{ID: uint64(i), Op: op, MR: from.mr, Length: qpexSize, Imm: uint32(0x1000 + i), Signaled: true}
			if op == OpRDMAWriteImm {
				wr.RemoteAddr, wr.RKey = to.mr.Addr(), to.mr.RKey()
			}
			if err := from.qp.PostSend(wr); err != nil {
				t.Fatal(err)
			}
			if _, err := from.next(t); err != nil {
				t.Fatal(err)
			}
			wc, err := to.next(t)
			if err != nil {
				t.Fatal(err)
			}
			if op != OpSend && (!wc.HasImm || wc.Imm != uint32(0x1000+i)) {
				t.Errorf("iteration %d: immediate %v %#x, want %#x", i, wc.HasImm, wc.Imm, 0x1000+i)
			}
			if !bytes.Equal(from.mr.Bytes(), to.mr.Bytes()) {
				t.Errorf("iteration %d: the received bytes differ from the sent ones", i)
			}
		}
	}
}

// exRDMA is rdma_traffic with new_send: each side in turn writes its MR
// into the peer's, or reads the peer's into its own.
func exRDMA(t *testing.T, client, server *loopSide, op Opcode, n int) {
	t.Helper()
	for i := range 10 {
		for _, p := range [][2]*loopSide{{client, server}, {server, client}} {
			from, to := p[0], p[1]
			src, dst := from, to
			if op == OpRDMARead {
				src, dst = to, from
			}
			Pattern(uint64(i)).Fill(src.mr.Bytes())
			clear(dst.mr.Bytes())
			wr := SendWR{ID: uint64(i), Op: op, RemoteAddr: to.mr.Addr(), RKey: to.mr.RKey(), Signaled: true}
			if n > 0 {
				wr.MR, wr.Length = from.mr, n
			}
			if err := from.qp.PostSend(wr); err != nil {
				t.Fatal(err)
			}
			if _, err := from.next(t); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(src.mr.Bytes()[:n], dst.mr.Bytes()[:n]) {
				t.Errorf("iteration %d: %s moved other bytes", i, op)
			}
		}
	}
}

// TestIntegrationQPExRCSend is test_qp_ex_rc_send.
func TestIntegrationQPExRCSend(t *testing.T) {
	client, server := exLoop(t, AccessLocalWrite, OpSend)
	exTraffic(t, client, server, OpSend)
}

// TestIntegrationQPExRCSendImm is test_qp_ex_rc_send_imm.
func TestIntegrationQPExRCSendImm(t *testing.T) {
	client, server := exLoop(t, AccessLocalWrite, OpSendImm)
	exTraffic(t, client, server, OpSendImm)
}

// TestIntegrationQPExRCRDMAWriteImm is test_qp_ex_rc_rdma_write_imm.
func TestIntegrationQPExRCRDMAWriteImm(t *testing.T) {
	client, server := exLoop(t, AccessLocalWrite|AccessRemoteWrite, OpRDMAWriteImm)
	exTraffic(t, client, server, OpRDMAWriteImm)
}

// TestIntegrationQPExRCRDMAWrite is test_qp_ex_rc_rdma_write.
func TestIntegrationQPExRCRDMAWrite(t *testing.T) {
	client, server := exLoop(t, AccessLocalWrite|AccessRemoteWrite, OpRDMAWrite)
	exRDMA(t, client, server, OpRDMAWrite, qpexSize)
}

// TestIntegrationQPExRCRDMAWriteZeroSize is test_qp_ex_rc_rdma_write_zero_size.
func TestIntegrationQPExRCRDMAWriteZeroSize(t *testing.T) {
	client, server := exLoop(t, AccessLocalWrite|AccessRemoteWrite, OpRDMAWrite)
	exRDMA(t, client, server, OpRDMAWrite, 0)
}

// TestIntegrationQPExRCRDMARead is test_qp_ex_rc_rdma_read.
func TestIntegrationQPExRCRDMARead(t *testing.T) {
	client, server := exLoop(t, AccessLocalWrite|AccessRemoteRead, OpRDMARead)
	exRDMA(t, client, server, OpRDMARead, qpexSize)
}

// TestIntegrationQPExRCRDMAReadZeroSize is test_qp_ex_rc_rdma_read_zero_size.
func TestIntegrationQPExRCRDMAReadZeroSize(t *testing.T) {
	client, server := exLoop(t, AccessLocalWrite|AccessRemoteRead, OpRDMARead)
	exRDMA(t, client, server, OpRDMARead, 0)
}

// TestIntegrationQPExRCAtomicCmpSwp is test_qp_ex_rc_atomic_cmp_swp.
func TestIntegrationQPExRCAtomicCmpSwp(t *testing.T) {
	atomicContext(t)
	client, server := exLoop(t, atomicAccess, OpAtomicCmpAndSwp)
	atomicTraffic(t, client, server, OpAtomicCmpAndSwp, 1, 2, 0)
	atomicTraffic(t, client, server, OpAtomicCmpAndSwp, 1, 1, 0)
}

// TestIntegrationQPExRCAtomicFetchAdd is test_qp_ex_rc_atomic_fetch_add.
func TestIntegrationQPExRCAtomicFetchAdd(t *testing.T) {
	atomicContext(t)
	client, server := exLoop(t, atomicAccess, OpAtomicFetchAndAdd)
	atomicTraffic(t, client, server, OpAtomicFetchAndAdd, 1, 2, 0)
}

// TestIntegrationQPExRCBindMW is test_qp_ex_rc_bind_mw: a type 2 window
// bound through ibv_wr_bind_mw takes an RDMA WRITE; with its key bumped
// past the bound one, the write fails.
func TestIntegrationQPExRCBindMW(t *testing.T) {
	ctx := integrationContext(t)
	access := AccessLocalWrite | AccessRemoteWrite
	client, server := rcLoop(t, ctx, loopConfig{mrSize: qpexSize, mrAccess: access | AccessMWBind, qpAccess: access,
		sendOps: SendOpsOf(OpBindMW, OpRDMAWrite)})
	mw, err := server.pd.AllocMW(MWType2)
	if err != nil {
		t.Skipf("%s: no type 2 windows: %v", ctx.Name(), err)
	}
	t.Cleanup(func() { closeOrFail(t, mw.Close) })
	err = server.qp.PostSend(SendWR{ID: 1, Op: OpBindMW, MW: mw, Bind: MWBind{MR: server.mr, Length: qpexSize, Access: AccessRemoteWrite}, Signaled: true})
	if err != nil {
		t.Fatal(err)
	}
	if wc, err := server.next(t); err != nil || wc.Opcode != WCBindMW {
		t.Fatalf("bind completion %+v, error %v", wc, err)
	}
	Pattern(5).Fill(client.mr.Bytes())
	if err := client.qp.PostSend(SendWR{ID: 2, Op: OpRDMAWrite, MR: client.mr, Length: qpexSize, RemoteAddr: server.mr.Addr(), RKey: mw.RKey(), Signaled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.next(t); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(client.mr.Bytes(), server.mr.Bytes()) {
		t.Errorf("the bytes written through %s differ", mw)
	}
	if err := client.qp.PostSend(SendWR{ID: 3, Op: OpRDMAWrite, MR: client.mr, Length: qpexSize, RemoteAddr: server.mr.Addr(), RKey: incRKey(mw.RKey()), Signaled: true}); err != nil {
		t.Fatal(err)
	}
	if wc, err := client.next(t); err == nil || wc.Status != WCRemAccessErr {
		t.Errorf("write with a key the window does not have: %+v, %v; want a remote access error", wc, err)
	}
}

// udGRH is the room a UD receive leaves for the GRH before the data.
const udGRH = 40

// udQKey is the Q_Key the UD tests' QPs take.
const udQKey = 0x11111111

// udPair makes two sides with UD QPs (extended with ops when given, on
// extended CQs with cqEx) in RTS, MRs of qpexSize bytes and the GRH's
// room, and an AH on each to the GID pyverbs would pick (trafficGID);
// iWARP devices, which have no UD, skip.
func udPair(t *testing.T, cfg loopConfig, ops ...Opcode) (a, b *loopSide, ahs [2]*AH) {
	ctx := integrationContext(t)
	if deviceTransport(t, ctx) == TransportIWARP {
		t.Skipf("%s is iWARP: no UD QPs", ctx.Name())
	}
	gidIndex, gid, _ := trafficGID(t, ctx)
	cfg.mrSize, cfg.mrAccess = qpexSize+udGRH, AccessLocalWrite
	cfg.caps = QPCaps{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}
	var sides [2]*loopSide
	for i := range sides {
		s := newLoopSide(t, ctx, cfg) // its RC QP stays unused
		qp, err := s.pd.CreateQP(QPConfig{Type: QPTypeUD, SendCQ: s.cq, RecvCQ: s.cq, SendOps: SendOpsOf(ops...), Caps: cfg.caps})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeOrFail(t, qp.Close) })
		if err := qp.Init(InitAttr{Port: 1, QKey: udQKey}); err != nil {
			t.Fatal(err)
		}
		if err := qp.ReadyToReceive(RTRAttr{}); err != nil {
			t.Fatal(err)
		}
		if err := qp.ReadyToSend(RTSAttr{}); err != nil {
			t.Fatal(err)
		}
		ah, err := s.pd.CreateAH(AHAttr{Port: 1, GRH: &GRH{DGID: gid, SGIDIndex: gidIndex, HopLimit: 1}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeOrFail(t, ah.Close) })
		s.qp, ahs[i] = qp, ah
		sides[i] = s
	}
	return sides[0], sides[1], ahs
}

// udTraffic is pyverbs' traffic on UD: ten times each way a datagram of
// n bytes (op SEND or SEND_WITH_IMM), which lands after the GRH's room.
func udTraffic(t *testing.T, a, b *loopSide, ahs [2]*AH, op Opcode, n int) {
	t.Helper()
	for i := range 10 {
		for k, p := range [][2]*loopSide{{a, b}, {b, a}} {
			from, to := p[0], p[1]
			Pattern(uint64(i)).Fill(from.mr.Bytes())
			if err := to.qp.PostRecv(RecvWR{ID: uint64(i), MR: to.mr, Length: qpexSize + udGRH}); err != nil {
				t.Fatal(err)
			}
			wr := SendWR{ID: uint64(i), Op: op, Signaled: true, Imm: uint32(0x2000 + i), AH: ahs[k], RemoteQPN: to.qp.Num(), RemoteQKey: udQKey}
			if n > 0 {
				wr.MR, wr.Length = from.mr, n
			}
			if err := from.qp.PostSend(wr); err != nil {
				t.Fatal(err)
			}
			if _, err := from.next(t); err != nil {
				t.Fatal(err)
			}
			wc, err := to.next(t)
			if err != nil {
				t.Fatal(err)
			}
			if wc.ByteLen != uint32(n+udGRH) || !bytes.Equal(from.mr.Bytes()[:n], to.mr.Bytes()[udGRH:udGRH+n]) {
				t.Errorf("iteration %d: received %d bytes that differ from the %d sent", i, wc.ByteLen, n)
			}
			if op == OpSendImm && (!wc.HasImm || wc.Imm != uint32(0x2000+i)) {
				t.Errorf("iteration %d: immediate %v %#x, want %#x", i, wc.HasImm, wc.Imm, 0x2000+i)
			}
		}
	}
}

// TestIntegrationQPExUDSend is test_qp_ex_ud_send: datagrams through
// ibv_wr_send with the address set by ibv_wr_set_ud_addr.
func TestIntegrationQPExUDSend(t *testing.T) {
	a, b, ahs := udPair(t, loopConfig{}, OpSend)
	udTraffic(t, a, b, ahs, OpSend, qpexSize)
}

// TestIntegrationQPExUDSendImm is test_qp_ex_ud_send_imm.
func TestIntegrationQPExUDSendImm(t *testing.T) {
	a, b, ahs := udPair(t, loopConfig{}, OpSendImm)
	udTraffic(t, a, b, ahs, OpSendImm, qpexSize)
}

// TestIntegrationQPExUDZeroSize is test_qp_ex_ud_zero_size: datagrams
// without data.
func TestIntegrationQPExUDZeroSize(t *testing.T) {
	a, b, ahs := udPair(t, loopConfig{}, OpSend)
	udTraffic(t, a, b, ahs, OpSend, 0)
}

// TestIntegrationUDTrafficCQEx is test_cqex.py's test_ud_traffic_cq_ex.
func TestIntegrationUDTrafficCQEx(t *testing.T) {
	a, b, ahs := udPair(t, loopConfig{cqEx: true, wcFlags: WCStandardFlags})
	udTraffic(t, a, b, ahs, OpSend, qpexSize)
}

// TestIntegrationQPExPostStateBadFlow is test_qpex.py's
// test_post_send_qp_state_bad_flow and test_post_receive_qp_state_bad_flow:
// after a move to RESET, posting is refused. pkg/verbs refuses it before
// the device (a post on a QP that is not ready is a bug, so it panics);
// the device's own view is that the QP is in RESET.
func TestIntegrationQPExPostStateBadFlow(t *testing.T) {
	a, b, ahs := udPair(t, loopConfig{}, OpSend)
	for _, s := range []*loopSide{a, b} {
		if err := s.qp.SetState(QPStateReset); err != nil {
			t.Fatal(err)
		}
		if attr, err := s.qp.Query(); err != nil || attr.State != QPStateReset {
			t.Fatalf("after RESET the device says %s (%v)", attr.State, err)
		}
	}
	panics := func(what string, f func()) {
		defer func() {
			if recover() == nil {
				t.Errorf("%s on a QP in RESET did not panic", what)
			}
		}()
		f()
	}
	panics("PostSend", func() {
		_ = a.qp.PostSend(SendWR{Op: OpSend, AH: ahs[0], RemoteQPN: b.qp.Num(), RemoteQKey: udQKey})
	})
	panics("PostRecv", func() { _ = b.qp.PostRecv(RecvWR{MR: b.mr, Length: 8}) })
}

// TestIntegrationQPExFullRQBadFlow is test_full_rq_bad_flow: one receive
// more than the queue holds is refused with ENOMEM.
func TestIntegrationQPExFullRQBadFlow(t *testing.T) {
	_, b, _ := udPair(t, loopConfig{}, OpSend)
	attr, err := b.qp.Query()
	if err != nil {
		t.Fatal(err)
	}
	for i := range attr.Caps.MaxRecvWR + 1 {
		err = b.qp.PostRecv(RecvWR{ID: uint64(i), MR: b.mr, Length: 64})
		if err != nil {
			break
		}
	}
	if !errors.Is(err, syscall.ENOMEM) {
		t.Errorf("%d receives on a queue of %d: %v, want ENOMEM", attr.Caps.MaxRecvWR+1, attr.Caps.MaxRecvWR, err)
	}
}

// TestIntegrationQPExRQLargerSGLBadFlow is
// test_rq_with_larger_sgl_bad_flow: a receive of one SGE more than the
// queue takes is refused with EINVAL (ErrTooManySGEs).
func TestIntegrationQPExRQLargerSGLBadFlow(t *testing.T) {
	_, b, _ := udPair(t, loopConfig{}, OpSend)
	attr, err := b.qp.Query()
	if err != nil {
		t.Fatal(err)
	}
	n := attr.Caps.MaxRecvSGE + 1
	sgl := make([]SGE, n)
	for i := range sgl {
		sgl[i] = SGE{MR: b.mr, Offset: i * (qpexSize / n), Length: qpexSize / n}
	}
	err = b.qp.PostRecv(RecvWR{SGL: sgl})
	if !errors.Is(err, syscall.EINVAL) || !errors.Is(err, ErrTooManySGEs) {
		t.Errorf("a receive of %d SGEs on a queue of %d: %v, want EINVAL", n, attr.Caps.MaxRecvSGE, err)
	}
}

// TestIntegrationCreateQPEx is test_qp.py's test_create_{rc,uc,ud}_qp_ex_*:
// QPs of each type as ibv_create_qp_ex makes them, with no send ops
// (for which ibv_create_qp_ex's inline calls ibv_create_qp, as CreateQP
// does) and, where the provider has the ibv_wr_* ops, with them; their
// queues at least as asked, their state RESET (or INIT on iWARP).
func TestIntegrationCreateQPEx(t *testing.T) {
	ctx := integrationContext(t)
	types := []QPType{QPTypeRC, QPTypeUC, QPTypeUD}
	if deviceTransport(t, ctx) == TransportIWARP {
		types = types[:1]
	}
	side := newLoopSide(t, ctx, loopConfig{mrSize: 8})
	caps := QPCaps{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}
	for _, typ := range types {
		for _, ops := range []SendOps{0, SendOpsOf(OpSend)} {
			qp, err := side.pd.CreateQP(QPConfig{Type: typ, SendCQ: side.cq, RecvCQ: side.cq, Caps: caps, SendOps: ops})
			if ops != 0 && errors.Is(err, syscall.EOPNOTSUPP) {
				t.Logf("%s with send ops: %v", typ, err)
				continue
			}
			if err != nil {
				t.Fatalf("%s, send ops %#x: %v", typ, uint64(ops), err)
			}
			if g := qp.Caps(); g.MaxSendWR < caps.MaxSendWR || g.MaxRecvWR < caps.MaxRecvWR {
				t.Errorf("%s QP's queues %+v, want at least %+v", typ, g, caps)
			}
			if a, err := qp.Query(); err != nil || (a.State != QPStateReset && a.State != QPStateInit) {
				t.Errorf("new %s QP in state %s (%v)", typ, a.State, err)
			}
			closeOrFail(t, qp.Close)
		}
	}
}
