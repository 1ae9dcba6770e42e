package verbs

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAtomics checks what reaches the driver for the atomics: the
// operands and the remote address and key, the local 8 bytes.
func TestAtomics(t *testing.T) {
	r := newRig(t)
	r.connect()
	base := r.mr.Addr()
	err := r.qp.PostSend(
		SendWR{ID: 1, Op: OpAtomicCmpAndSwp, MR: r.mr, Offset: 8, Length: 8, RemoteAddr: 0x7000, RKey: 5, CompareAdd: 2, Swap: 3, Signaled: true},
		SendWR{ID: 2, Op: OpAtomicFetchAndAdd, SGL: []SGE{{MR: r.mr, Offset: 16, Length: 8}}, RemoteAddr: 0x7008, RKey: 5, CompareAdd: 1},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]sendWork{{
		{id: 1, op: OpAtomicCmpAndSwp, flags: sendSignaled, addr: base + 8, length: 8, lkey: 0x100, raddr: 0x7000, rkey: 5, compareAdd: 2, swap: 3},
		{id: 2, op: OpAtomicFetchAndAdd, addr: base + 16, length: 8, lkey: 0x100, raddr: 0x7008, rkey: 5, compareAdd: 1},
	}}
	if diff := cmp.Diff(want, r.f.sends, cmp.AllowUnexported(sendWork{}, sgeWork{}, mwBindWork{})); diff != "" {
		t.Errorf("unexpected work requests (-want +got):\n%s", diff)
	}
}

// TestAtomicUnaligned: a remote address that is not 8-byte aligned is an
// error wrapping ErrUnalignedAtomic and EINVAL; the requests before it
// are posted.
func TestAtomicUnaligned(t *testing.T) {
	r := newRig(t)
	r.connect()
	err := r.qp.PostSend(SendWR{ID: 1, Op: OpSend},
		SendWR{ID: 2, Op: OpAtomicFetchAndAdd, MR: r.mr, Length: 8, RemoteAddr: 0x7004, RKey: 5})
	if !errors.Is(err, ErrUnalignedAtomic) || !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("error %v, want ErrUnalignedAtomic and EINVAL", err)
	}
	want := "rxe0 QP 0x11: ibv_post_send: atomic remote address is not 8-byte aligned (invalid argument): 0x7004"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("unexpected message (-want +got):\n%s", diff)
	}
	if len(r.f.sends) != 1 || len(r.f.sends[0]) != 1 || r.f.sends[0][0].id != 1 {
		t.Errorf("posted %+v, want request 1 alone", r.f.sends)
	}
}

// TestAtomicMisuse: atomics on QPs that cannot carry them, or into local
// memory other than 8 bytes, panic.
func TestAtomicMisuse(t *testing.T) {
	tests := []struct {
		name string
		f    func(r *rig)
		want string
	}{
		{"UC QP", func(r *rig) {
			qp := must(r.pd.CreateQP(QPConfig{Type: QPTypeUC, SendCQ: r.cq, RecvCQ: r.cq, Caps: QPCaps{MaxSendWR: 1, MaxSendSGE: 1}}))
			r.qp = qp
			r.connect()
			_ = qp.PostSend(SendWR{Op: OpAtomicFetchAndAdd, MR: r.mr, Length: 8})
		}, "verbs: PostSend on rxe0 QP 0x11 (UC): ATOMIC_FETCH_AND_ADD needs an RC or XRC_SEND QP"},
		{"4 bytes", func(r *rig) { r.connect(); _ = r.qp.PostSend(SendWR{Op: OpAtomicCmpAndSwp, MR: r.mr, Length: 4}) },
			"verbs: PostSend on rxe0 QP 0x11: ATOMIC_CMP_AND_SWP into 4 bytes in 1 SGEs, want one SGE of 8 bytes"},
		{"no memory", func(r *rig) { r.connect(); _ = r.qp.PostSend(SendWR{Op: OpAtomicCmpAndSwp}) },
			"verbs: PostSend on rxe0 QP 0x11: ATOMIC_CMP_AND_SWP into 0 bytes in 1 SGEs, want one SGE of 8 bytes"},
		{"two SGEs", func(r *rig) {
			check(r.qp.Close())
			r.qp = must(r.pd.CreateQP(QPConfig{SendCQ: r.cq, RecvCQ: r.cq, Caps: QPCaps{MaxSendWR: 1, MaxSendSGE: 2}}))
			r.connect()
			_ = r.qp.PostSend(SendWR{Op: OpAtomicFetchAndAdd, SGL: []SGE{{MR: r.mr, Length: 4}, {MR: r.mr, Offset: 4, Length: 4}}})
		}, "verbs: PostSend on rxe0 QP 0x11: ATOMIC_FETCH_AND_ADD into 8 bytes in 2 SGEs, want one SGE of 8 bytes"},
		{"stream", func(r *rig) {
			r.connect()
			_, _ = r.qp.Stream(t.Context(), Stream{WR: SendWR{Op: OpAtomicFetchAndAdd, MR: r.mr, Length: 8}, Count: 1, Depth: 1, SignalEvery: 1})
		}, "verbs: Stream on rxe0 QP 0x11 of ATOMIC_FETCH_AND_ADD: Stream sends, writes and reads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantPanic(t, tt.want, tt.f) })
	}
}

// TestAtomicStrings names the atomics' opcodes and completions as
// verbs.h does.
func TestAtomicStrings(t *testing.T) {
	got := []string{OpAtomicCmpAndSwp.String(), OpAtomicFetchAndAdd.String(), WCCompSwap.String(), WCFetchAdd.String()}
	want := []string{"ATOMIC_CMP_AND_SWP", "ATOMIC_FETCH_AND_ADD", "COMP_SWAP", "FETCH_ADD"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected names (-want +got):\n%s", diff)
	}
}
