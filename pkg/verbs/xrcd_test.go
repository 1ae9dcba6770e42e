package verbs

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestXRC: an XRC domain with an SRQ and a pair of XRC QPs, the sends
// naming the peer's SRQ, and the order things must close in.
func TestXRC(t *testing.T) {
	r := newRig(t)
	x := must(r.ctx.OpenXRCD(-1))
	srq := must(r.pd.CreateXRCSRQ(x, r.cq, 4, 1))
	if srq.Num() != 0x42 {
		t.Errorf("Num() = %#x, want the driver's 0x42", srq.Num())
	}
	recv := must(r.pd.CreateQP(QPConfig{Type: QPTypeXRCRecv, XRCD: x}))
	send := must(r.pd.CreateQP(QPConfig{Type: QPTypeXRCSend, SendCQ: r.cq, Caps: QPCaps{MaxSendWR: 1, MaxSendSGE: 1}}))
	check(send.Init(InitAttr{Port: 1}))
	check(send.ReadyToReceive(RTRAttr{PathMTU: MTU1024, DestQPN: 5}))
	check(send.ReadyToSend(RTSAttr{Timeout: 14, RetryCnt: 7, RNRRetry: 7}))
	check(send.PostSend(SendWR{ID: 1, Op: OpSend, MR: r.mr, Length: 8, RemoteSRQN: 0x43}))
	want := []sendWork{{id: 1, op: OpSend, addr: r.mr.Addr(), length: 8, lkey: 0x100, srqn: 0x43}}
	if diff := cmp.Diff(want, r.f.sends[0], cmp.AllowUnexported(sendWork{}, mwBindWork{})); diff != "" {
		t.Errorf("unexpected work request (-want +got):\n%s", diff)
	}
	if got := recv.Type().String(); got != "XRC_RECV" {
		t.Errorf("Type() = %s", got)
	}
	closed := func() (msg any) {
		defer func() { msg = recover() }()
		_ = x.Close()
		return nil
	}()
	if closed == nil {
		t.Error("Close of an XRCD with an SRQ and a QP in it did not panic")
	}
	check(send.Close())
	check(recv.Close())
	check(srq.Close())
	check(x.Close())
}

func TestXRCErrors(t *testing.T) {
	r := newRig(t)
	r.f.fail["openXRCD"] = syscall.EOPNOTSUPP
	if _, err := r.ctx.OpenXRCD(3); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("OpenXRCD error %v, want EOPNOTSUPP", err)
	}
	wantPanic(t, "verbs: CreateQP on rxe0 PD 1 of XRC_RECV wants an XRCD and no CQs", func(r *rig) {
		_, _ = r.pd.CreateQP(QPConfig{Type: QPTypeXRCRecv})
	})
}
