package verbs

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUD: a UD QP's transitions carry its type (the driver sets the
// Q_Key at INIT and nothing at RTR), and its sends name the AH, the
// peer's QP number and Q_Key.
func TestUD(t *testing.T) {
	r := newRig(t)
	qp := must(r.pd.CreateQP(QPConfig{Type: QPTypeUD, SendCQ: r.cq, RecvCQ: r.cq, Caps: QPCaps{MaxSendWR: 1, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}}))
	check(qp.Init(InitAttr{Port: 1, QKey: 0x11111111}))
	check(qp.ReadyToReceive(RTRAttr{}))
	check(qp.ReadyToSend(RTSAttr{SQPSN: 5}))
	wantModify := []qpModify{
		{typ: QPTypeUD, to: QPStateInit, init: InitAttr{Port: 1, QKey: 0x11111111}},
		{typ: QPTypeUD, to: QPStateRTR, init: InitAttr{Port: 1}},
		{typ: QPTypeUD, to: QPStateRTS, rts: RTSAttr{SQPSN: 5}},
	}
	if diff := cmp.Diff(wantModify, r.f.modify, cmp.AllowUnexported(qpModify{})); diff != "" {
		t.Errorf("unexpected transitions (-want +got):\n%s", diff)
	}
	ah := must(r.pd.CreateAH(AHAttr{Port: 1, GRH: &GRH{HopLimit: 1}}))
	check(qp.PostSend(SendWR{ID: 2, Op: OpSend, MR: r.mr, Offset: 40, Length: 8, Signaled: true, AH: ah, RemoteQPN: 0x12, RemoteQKey: 0x11111111}))
	want := []sendWork{{id: 2, op: OpSend, flags: sendSignaled, addr: r.mr.Addr() + 40, length: 8, lkey: 0x100, ah: ah.h, rqpn: 0x12, rqkey: 0x11111111}}
	if diff := cmp.Diff(want, r.f.sends[0], cmp.AllowUnexported(sendWork{}, fakeObj{}, mwBindWork{})); diff != "" {
		t.Errorf("unexpected work request (-want +got):\n%s", diff)
	}
	check(ah.Close())
	check(qp.Close())
}

func TestAHErrors(t *testing.T) {
	r := newRig(t)
	r.f.fail["createAH"] = syscall.EINVAL
	_, err := r.pd.CreateAH(AHAttr{Port: 1})
	if !errors.Is(err, syscall.EINVAL) {
		t.Errorf("CreateAH error %v, want EINVAL", err)
	}
	if _, err := r.pd.CreateAH(AHAttr{Port: 0}); err == nil {
		t.Error("CreateAH on port 0: no error")
	}
}

func TestUDMisuse(t *testing.T) {
	wantPanic(t, "verbs: PostSend on rxe0 QP 0x11 (RC): an AH goes with UD QPs, and every UD send needs one", func(r *rig) {
		r.connect()
		ah := must(r.pd.CreateAH(AHAttr{Port: 1}))
		_ = r.qp.PostSend(SendWR{Op: OpSend, AH: ah})
	})
}
