package verbs

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCloseTwice closes (or frees) every kind of object twice: the first
// call frees it in the driver, the second does nothing and returns nil,
// as pyverbs' close does (PDTest.test_destroy_pd_twice).
func TestCloseTwice(t *testing.T) {
	tests := []struct {
		name string
		verb string // the driver call that frees it
		make func(r *rig) func() error
	}{
		{"context", "closeDevice", func(r *rig) func() error { return must(Open("mlx5_0")).Close }},
		{"PD", "deallocPD", func(r *rig) func() error { return must(r.ctx.AllocPD()).Close }},
		{"MR", "deregMR", func(r *rig) func() error { return must(r.pd.RegMR(must(AllocBuffer(8)), 0)).Close }},
		{"buffer", "munmap", func(r *rig) func() error { return must(AllocBuffer(8)).Free }},
		{"MW", "deallocMW", func(r *rig) func() error { return must(r.pd.AllocMW(MWType1)).Close }},
		{"completion channel", "destroyCompChannel", func(r *rig) func() error { return must(r.ctx.CreateCompChannel()).Close }},
		{"CQ", "destroyCQ", func(r *rig) func() error { return must(r.ctx.CreateCQ(1, r.ch)).Close }},
		{"extended CQ", "destroyCQ", func(r *rig) func() error { return must(r.ctx.CreateCQEx(1, nil, WCStandardFlags)).Close }},
		{"QP", "destroyQP", func(r *rig) func() error { return r.qp.Close }},
		{"SRQ", "destroySRQ", func(r *rig) func() error { return must(r.pd.CreateSRQ(8, 1)).Close }},
		{"XRC SRQ", "destroySRQ", func(r *rig) func() error {
			return must(r.pd.CreateXRCSRQ(must(r.ctx.OpenXRCD(-1)), r.cq, 8, 1)).Close
		}},
		{"XRCD", "closeXRCD", func(r *rig) func() error { return must(r.ctx.OpenXRCD(-1)).Close }},
		{"AH", "destroyAH", func(r *rig) func() error { return must(r.pd.CreateAH(AHAttr{Port: 1, GRH: &GRH{HopLimit: 1}})).Close }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			closeIt := tt.make(r)
			first := fmt.Sprint(closeIt())
			second := fmt.Sprint(closeIt())
			got := []any{first, second, r.f.released[tt.verb]}
			if diff := cmp.Diff([]any{"<nil>", "<nil>", 1}, got); diff != "" {
				t.Errorf("first and second Close, driver calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCloseAfterFailure: a Close that failed leaves the object open, so
// the next Close frees it, and the one after that does nothing.
func TestCloseAfterFailure(t *testing.T) {
	r := newRig(t)
	pd := must(r.ctx.AllocPD())
	r.f.fail["deallocPD"] = syscall.EBUSY
	var got []string
	got = append(got, fmt.Sprint(pd.Close()))
	delete(r.f.fail, "deallocPD")
	got = append(got, fmt.Sprint(pd.Close()), fmt.Sprint(pd.Close()), fmt.Sprint(r.f.released["deallocPD"]))
	want := []string{"rxe0 PD 4: ibv_dealloc_pd: device or resource busy", "<nil>", "<nil>", "1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected results of three Closes and the driver's frees (-want +got):\n%s", diff)
	}
}

// TestUseAfterClose: once closed, an object is closed for good: any use
// other than Close panics, after a second Close as after the first.
func TestUseAfterClose(t *testing.T) {
	tests := []struct {
		name string
		run  func(r *rig)
		want string
	}{
		{"PD", func(r *rig) {
			pd := must(r.ctx.AllocPD())
			check(pd.Close())
			check(pd.Close())
			_, _ = pd.AllocMR(1, 0)
		}, "verbs: AllocMR on closed rxe0 PD 4"},
		{"QP", func(r *rig) { check(r.qp.Close()); check(r.qp.Close()); _ = r.qp.Init(InitAttr{Port: 1}) },
			"verbs: modify to INIT on destroyed rxe0 QP 0x11"},
		{"context", func(r *rig) { c := must(Open("mlx5_0")); check(c.Close()); check(c.Close()); _, _ = c.QueryPort(1) },
			"verbs: QueryPort on closed context mlx5_0"},
		{"SRQ", func(r *rig) {
			s := must(r.pd.CreateSRQ(8, 1))
			check(s.Close())
			_ = s.PostRecv(RecvWR{MR: r.mr, Length: 1})
		},
			"verbs: PostRecv on destroyed rxe0 SRQ 4"},
		{"XRCD", func(r *rig) {
			x := must(r.ctx.OpenXRCD(-1))
			check(x.Close())
			_, _ = r.pd.CreateXRCSRQ(x, r.cq, 8, 1)
		}, "verbs: CreateXRCSRQ on closed rxe0 XRCD 4"},
		{"AH", func(r *rig) {
			qp := must(r.pd.CreateQP(QPConfig{Type: QPTypeUD, SendCQ: r.cq, RecvCQ: r.cq, Caps: QPCaps{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}}))
			check(qp.Init(InitAttr{Port: 1}))
			check(qp.ReadyToReceive(RTRAttr{}))
			check(qp.ReadyToSend(RTSAttr{}))
			ah := must(r.pd.CreateAH(AHAttr{Port: 1, GRH: &GRH{HopLimit: 1}}))
			check(ah.Close())
			_ = qp.PostSend(SendWR{Op: OpSend, AH: ah})
		}, "verbs: PostSend on destroyed rxe0 PD 1 AH to DLID 0x0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantPanic(t, tt.want, tt.run) })
	}
}
