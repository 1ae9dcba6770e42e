package verbs

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sglRig is a rig whose QP takes three SGEs each way.
func sglRig(t *testing.T) *rig {
	t.Helper()
	r := newRig(t)
	check(r.qp.Close())
	r.qp = must(r.pd.CreateQP(QPConfig{SendCQ: r.cq, RecvCQ: r.cq, Caps: QPCaps{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 3, MaxRecvSGE: 3, MaxInlineData: 64}}))
	r.connect()
	return r
}

// TestSGL checks what reaches the driver for SGLs: one entry goes as a
// plain request, more as a list, in order; inline counts all of them.
func TestSGL(t *testing.T) {
	r := sglRig(t)
	base := r.mr.Addr()
	err := r.qp.PostSend(
		SendWR{ID: 1, Op: OpSend, SGL: []SGE{{MR: r.mr, Offset: 8, Length: 4}}},
		SendWR{ID: 2, Op: OpRDMAWrite, RemoteAddr: 0x5000, RKey: 9, Inline: true,
			SGL: []SGE{{MR: r.mr, Offset: 100, Length: 10}, {MR: r.mr, Offset: 0, Length: 20}, {MR: r.mr, Offset: 4000, Length: 30}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]sendWork{{
		{id: 1, op: OpSend, addr: base + 8, length: 4, lkey: 0x100},
		{id: 2, op: OpRDMAWrite, raddr: 0x5000, rkey: 9, flags: sendInline,
			sgl: []sgeWork{{base + 100, 10, 0x100}, {base, 20, 0x100}, {base + 4000, 30, 0x100}}},
	}}
	if diff := cmp.Diff(want, r.f.sends, cmp.AllowUnexported(sendWork{}, sgeWork{}, mwBindWork{})); diff != "" {
		t.Errorf("unexpected work requests (-want +got):\n%s", diff)
	}
	err = r.qp.PostRecv(RecvWR{ID: 3, SGL: []SGE{{MR: r.mr, Offset: 0, Length: 1}, {MR: r.mr, Offset: 1, Length: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	wantRecv := [][]recvWork{{{id: 3, sgl: []sgeWork{{base, 1, 0x100}, {base + 1, 2, 0x100}}}}}
	if diff := cmp.Diff(wantRecv, r.f.recvs, cmp.AllowUnexported(recvWork{}, sgeWork{})); diff != "" {
		t.Errorf("unexpected receive requests (-want +got):\n%s", diff)
	}
}

// TestTooManySGEs: more SGEs than the device or the queue takes is an
// error wrapping ErrTooManySGEs and EINVAL; the requests before the one
// refused are posted.
func TestTooManySGEs(t *testing.T) {
	r := sglRig(t)
	four := []SGE{{MR: r.mr}, {MR: r.mr}, {MR: r.mr}, {MR: r.mr}}
	tests := []struct {
		name string
		do   func() error
		want string
	}{
		{"send", func() error { return r.qp.PostSend(SendWR{ID: 1, Op: OpSend}, SendWR{Op: OpSend, SGL: four}) },
			"rxe0 QP 0x11: ibv_post_send: too many scatter/gather entries (invalid argument): 4, rxe0 QP 0x11's send queue takes at most 3"},
		{"recv", func() error { return r.qp.PostRecv(RecvWR{ID: 1, MR: r.mr}, RecvWR{SGL: four}) },
			"rxe0 QP 0x11: ibv_post_recv: too many scatter/gather entries (invalid argument): 4, rxe0 QP 0x11's receive queue takes at most 3"},
		{"srq", func() error {
			srq := must(r.pd.CreateSRQ(4, 2))
			return srq.PostRecv(RecvWR{ID: 1, MR: r.mr}, RecvWR{SGL: four[:3]})
		}, "rxe0 SRQ 4: ibv_post_srq_recv: too many scatter/gather entries (invalid argument): 3, rxe0 SRQ 4 takes at most 2"},
		{"QP send SGEs", func() error {
			_, err := r.pd.CreateQP(QPConfig{SendCQ: r.cq, RecvCQ: r.cq, Caps: QPCaps{MaxSendSGE: 33}})
			return err
		}, "rxe0 PD 1: ibv_create_qp: too many scatter/gather entries (invalid argument): 33, rxe0 (max_sge) takes at most 32"},
		{"QP receive SGEs", func() error {
			_, err := r.pd.CreateQP(QPConfig{SendCQ: r.cq, RecvCQ: r.cq, Caps: QPCaps{MaxRecvSGE: 40}})
			return err
		}, "rxe0 PD 1: ibv_create_qp: too many scatter/gather entries (invalid argument): 40, rxe0 (max_sge) takes at most 32"},
		{"SRQ SGEs", func() error { _, err := r.pd.CreateSRQ(4, 28); return err },
			"rxe0 PD 1: ibv_create_srq: too many scatter/gather entries (invalid argument): 28, rxe0 (max_srq_sge) takes at most 27"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.f.sends, r.f.recvs = nil, nil
			err := tt.do()
			if !errors.Is(err, ErrTooManySGEs) || !errors.Is(err, syscall.EINVAL) {
				t.Fatalf("error %v, want ErrTooManySGEs and EINVAL", err)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("unexpected message (-want +got):\n%s", diff)
			}
			if n := len(r.f.sends) + len(r.f.recvs); (tt.name == "send" || tt.name == "recv" || tt.name == "srq") && n != 1 {
				t.Errorf("%d batches posted, want the one before the refused request", n)
			}
		})
	}
}

// TestQueryDevice: the attributes are read once, their failure is a
// VerbError, and CreateQP fails with it.
func TestQueryDevice(t *testing.T) {
	f := useFake(t)
	f.fail["queryDevice"] = syscall.EIO
	ctx := must(Open("rxe0"))
	pd := must(ctx.AllocPD())
	cq := must(ctx.CreateCQ(1, nil))
	_, err := pd.CreateQP(QPConfig{SendCQ: cq, RecvCQ: cq})
	if diff := cmp.Diff("rxe0: ibv_query_device_ex: input/output error", errString(err)); diff != "" {
		t.Errorf("unexpected CreateQP error (-want +got):\n%s", diff)
	}
	delete(f.fail, "queryDevice")
	a := must(ctx.QueryDevice())
	f.attr.MaxSGE = 1
	if b := must(ctx.QueryDevice()); b != a || b.MaxSGE != 32 {
		t.Errorf("second QueryDevice %+v, want the first's %+v", b, a)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestSGLMisuse: SGLs that name memory wrongly panic.
func TestSGLMisuse(t *testing.T) {
	tests := []struct {
		name string
		f    func(r *rig)
		want string
	}{
		{"MR and SGL", func(r *rig) { _ = r.qp.PostSend(SendWR{MR: r.mr, SGL: []SGE{{MR: r.mr}}}) },
			"verbs: PostSend on rxe0 QP 0x11 with both an MR and an SGL: give one"},
		{"SGE without MR", func(r *rig) { _ = r.qp.PostSend(SendWR{SGL: []SGE{{MR: r.mr}, {Length: 1}}}) },
			"verbs: PostSend on rxe0 QP 0x11: SGE 1 has no MR"},
		{"SGE past its MR", func(r *rig) { _ = r.qp.PostRecv(RecvWR{SGL: []SGE{{MR: r.mr, Offset: 4090, Length: 7}}}) },
			"verbs: PostRecv of bytes [4090, 4097) outside rxe0 PD 1 MR lkey 0x100 (4096 bytes)"},
		{"SGE of another PD", func(r *rig) {
			mr := must(must(r.ctx.AllocPD()).AllocMR(10, 0))
			_ = r.qp.PostRecv(RecvWR{SGL: []SGE{{MR: r.mr}, {MR: mr}}})
		}, "verbs: PostRecv on rxe0 QP 0x11 with rxe0 PD 4 MR lkey 0x100 (10 bytes) of another PD"},
		{"SGL in a stream", func(r *rig) {
			_, _ = r.qp.Stream(t.Context(), Stream{WR: SendWR{Op: OpSend, SGL: []SGE{{MR: r.mr}}}, Count: 1, Depth: 1, SignalEvery: 1})
		}, "verbs: Stream on rxe0 QP 0x11 with an SGL: Stream takes an MR, Offset and Length and splits them (SGEs)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantPanic(t, tt.want, func(r *rig) {
				check(r.qp.Close())
				r.qp = must(r.pd.CreateQP(QPConfig{SendCQ: r.cq, RecvCQ: r.cq, Caps: QPCaps{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 3, MaxRecvSGE: 3}}))
				r.connect()
				tt.f(r)
			})
		})
	}
}
