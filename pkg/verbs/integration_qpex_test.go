//go:build cgo && !noverbs

package verbs

import (
	"bytes"
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

// TestIntegrationQPExUDSend is test_qp_ex_ud_send: datagrams through
// ibv_wr_send with the address set by ibv_wr_set_ud_addr.
func TestIntegrationQPExUDSend(t *testing.T) {
	ctx := integrationContext(t)
	if deviceTransport(t, ctx) == TransportIWARP {
		t.Skipf("%s is iWARP: no UD QPs", ctx.Name())
	}
	const qkey, grh = 0x11111111, 40
	gid, err := ctx.QueryGID(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sides [2]*loopSide
	for i := range sides {
		s := newLoopSide(t, ctx, loopConfig{mrSize: qpexSize + grh, mrAccess: AccessLocalWrite,
			caps: QPCaps{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
		qp, err := s.pd.CreateQP(QPConfig{Type: QPTypeUD, SendCQ: s.cq, RecvCQ: s.cq, SendOps: SendOpsOf(OpSend),
			Caps: QPCaps{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeOrFail(t, qp.Close) })
		if err := qp.Init(InitAttr{Port: 1, QKey: qkey}); err != nil {
			t.Fatal(err)
		}
		if err := qp.ReadyToReceive(RTRAttr{}); err != nil {
			t.Fatal(err)
		}
		if err := qp.ReadyToSend(RTSAttr{}); err != nil {
			t.Fatal(err)
		}
		s.qp = qp // the side's RC QP stays unused
		sides[i] = s
	}
	for i := range 10 {
		for _, p := range [][2]*loopSide{{sides[0], sides[1]}, {sides[1], sides[0]}} {
			from, to := p[0], p[1]
			ah, err := from.pd.CreateAH(AHAttr{Port: 1, GRH: &GRH{DGID: gid, HopLimit: 1}})
			if err != nil {
				t.Fatal(err)
			}
			Pattern(uint64(i)).Fill(from.mr.Bytes())
			if err := to.qp.PostRecv(RecvWR{ID: uint64(i), MR: to.mr, Length: qpexSize + grh}); err != nil {
				t.Fatal(err)
			}
			err = from.qp.PostSend(SendWR{ID: uint64(i), Op: OpSend, MR: from.mr, Length: qpexSize, Signaled: true,
				AH: ah, RemoteQPN: to.qp.Num(), RemoteQKey: qkey})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := from.next(t); err != nil {
				t.Fatal(err)
			}
			wc, err := to.next(t)
			if err != nil {
				t.Fatal(err)
			}
			if wc.ByteLen != qpexSize+grh || !bytes.Equal(from.mr.Bytes()[:qpexSize], to.mr.Bytes()[grh:]) {
				t.Errorf("iteration %d: received %d bytes that differ from the sent ones", i, wc.ByteLen)
			}
			closeOrFail(t, ah.Close)
		}
	}
}
