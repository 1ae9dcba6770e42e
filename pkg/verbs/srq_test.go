package verbs

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSRQ: QPs made with an SRQ take their receives from it, the SRQ's
// receives reach the driver, and it closes only once its QPs did.
func TestSRQ(t *testing.T) {
	r := newRig(t)
	srq := must(r.pd.CreateSRQ(8, 1))
	qp := must(r.pd.CreateQP(QPConfig{SRQ: srq, SendCQ: r.cq, RecvCQ: r.cq, Caps: QPCaps{MaxSendWR: 1, MaxSendSGE: 1}}))
	check(srq.PostRecv(RecvWR{ID: 1, MR: r.mr, Length: 64}, RecvWR{ID: 1, MR: r.mr, Offset: 64, Length: 64}))
	base := r.mr.Addr()
	want := [][]recvWork{{{id: 1, addr: base, length: 64, lkey: 0x100}, {id: 1, addr: base + 64, length: 64, lkey: 0x100}}}
	if diff := cmp.Diff(want, r.f.recvs, cmp.AllowUnexported(recvWork{})); diff != "" {
		t.Errorf("unexpected receives (-want +got):\n%s", diff)
	}
	check(qp.Init(InitAttr{Port: 1}))
	got := func() (msg any) {
		defer func() { msg = recover() }()
		_ = qp.PostRecv(RecvWR{MR: r.mr, Length: 1})
		return nil
	}()
	if got == nil {
		t.Error("PostRecv on a QP with an SRQ did not panic")
	}
	closed := func() (msg any) {
		defer func() { msg = recover() }()
		_ = srq.Close()
		return nil
	}()
	if closed == nil {
		t.Error("Close of an SRQ a QP uses did not panic")
	}
	check(qp.Close())
	check(srq.Close())
}

func TestSRQErrors(t *testing.T) {
	r := newRig(t)
	r.f.fail["createSRQ"] = syscall.ENOMEM
	if _, err := r.pd.CreateSRQ(8, 1); !errors.Is(err, syscall.ENOMEM) {
		t.Errorf("CreateSRQ error %v, want ENOMEM", err)
	}
	delete(r.f.fail, "createSRQ")
	srq := must(r.pd.CreateSRQ(8, 1))
	r.f.fail["postSRQRecv"] = syscall.ENOMEM
	if err := srq.PostRecv(RecvWR{MR: r.mr, Length: 1}); !errors.Is(err, syscall.ENOMEM) {
		t.Errorf("PostRecv error %v, want ENOMEM", err)
	}
}
