package verbs

import (
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCreateCQEx: the flags reach the driver, the CQ works as any, and a
// refusal names the verb, the size and the flags.
func TestCreateCQEx(t *testing.T) {
	r := newRig(t)
	cq := must(r.ctx.CreateCQEx(8, r.ch, WCStandardFlags|WCWithCompletionTimestamp))
	if r.f.cqFlags != 0xff {
		t.Errorf("flags %#x reached the driver, want 0xff", uint64(r.f.cqFlags))
	}
	check(cq.ReqNotify(false))
	if got, err := r.ch.Wait(); err != nil || got != cq {
		t.Errorf("event on %v (%v), want %s", got, err, cq)
	}
	check(cq.Close())
	r.f.fail["createCQEx"] = syscall.EOPNOTSUPP
	_, err := r.ctx.CreateCQEx(8, nil, WCWithCompletionTimestamp)
	if diff := cmp.Diff("rxe0 (8 entries, flags 0x80): ibv_create_cq_ex: operation not supported", errString(err)); diff != "" {
		t.Errorf("unexpected error (-want +got):\n%s", diff)
	}
	wantPanic(t, "verbs: CreateCQEx(0) on rxe0: want at least one entry", func(r *rig) { _, _ = r.ctx.CreateCQEx(0, nil, 0) })
}

// TestSendOps: an extended QP gets its send ops at creation and takes
// only those opcodes.
func TestSendOps(t *testing.T) {
	if got := SendOpsOf(OpRDMAWrite, OpSend, OpBindMW); got != 0x105 || !got.Has(OpBindMW) || got.Has(OpRDMARead) {
		t.Errorf("SendOpsOf(WRITE, SEND, BIND_MW) = %#x", uint64(got))
	}
	wantPanic(t, "verbs: PostSend on rxe0 QP 0x11 of RDMA_READ: the QP was made for send ops 0x4", func(r *rig) {
		check(r.qp.Close())
		r.qp = must(r.pd.CreateQP(QPConfig{SendCQ: r.cq, RecvCQ: r.cq, SendOps: SendOpsOf(OpSend), Caps: QPCaps{MaxSendWR: 1, MaxSendSGE: 1}}))
		r.connect()
		check(r.qp.PostSend(SendWR{Op: OpSend}))
		_ = r.qp.PostSend(SendWR{Op: OpRDMARead})
	})
}
