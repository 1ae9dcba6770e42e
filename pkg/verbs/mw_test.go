package verbs

import (
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMW: allocating, binding (type 1 through BindMW, type 2 through a
// BIND_MW request that gives the window the next key), invalidating and
// closing a window, as the driver sees them.
func TestMW(t *testing.T) {
	r := newRig(t)
	r.connect()
	base := r.mr.Addr()
	mw1 := must(r.pd.AllocMW(MWType1))
	if mw1.RKey() != 0x300 || mw1.Type() != MWType1 {
		t.Errorf("new window %s", mw1)
	}
	check(r.qp.BindMW(mw1, 9, MWBind{MR: r.mr, Offset: 64, Length: 128, Access: AccessRemoteRead}, true))
	if mw1.RKey() != 0x301 {
		t.Errorf("after BindMW the key is %#x, want the driver's 0x301", mw1.RKey())
	}
	mw2 := must(r.pd.AllocMW(MWType2))
	check(r.qp.PostSend(
		SendWR{ID: 10, Op: OpBindMW, MW: mw2, Bind: MWBind{MR: r.mr, Length: 4096, Access: AccessRemoteWrite}},
		SendWR{ID: 11, Op: OpLocalInv, InvalidateRKey: 0x301},
		SendWR{ID: 12, Op: OpSendInv, InvalidateRKey: 0x4401},
	))
	if mw2.RKey() != 0x301 {
		t.Errorf("after BIND_MW the key is %#x, want 0x301", mw2.RKey())
	}
	want := [][]sendWork{
		{{id: 9, op: OpBindMW, flags: sendSignaled, bind: mwBindWork{mr: r.mr.h, addr: base + 64, length: 128, access: AccessRemoteRead}}},
		{
			{id: 10, op: OpBindMW, mw: mw2.h, bound: mw2, bindRKey: 0x301, bind: mwBindWork{mr: r.mr.h, addr: base, length: 4096, access: AccessRemoteWrite}},
			{id: 11, op: OpLocalInv, invRKey: 0x301},
			{id: 12, op: OpSendInv, invRKey: 0x4401},
		},
	}
	if diff := cmp.Diff(want, r.f.sends, cmp.AllowUnexported(sendWork{}, mwBindWork{}, fakeObj{}), cmp.Comparer(func(a, b *MW) bool { return a == b })); diff != "" {
		t.Errorf("unexpected work requests (-want +got):\n%s", diff)
	}
	wantPanic(t, "verbs: Close of rxe0 PD 1 with 3 MRs and QPs still open", func(r *rig) {
		_ = must(r.pd.AllocMW(MWType1))
		_ = r.pd.Close()
	})
	check(mw1.Close())
	check(mw2.Close())
}

// TestIncRKey is ibv_inc_rkey: the low byte counts, wrapping.
func TestIncRKey(t *testing.T) {
	got := []uint32{incRKey(0x1200), incRKey(0x12fe), incRKey(0x12ff)}
	if diff := cmp.Diff([]uint32{0x1201, 0x12ff, 0x1200}, got); diff != "" {
		t.Errorf("unexpected keys (-want +got):\n%s", diff)
	}
}

// TestMWErrors: the window calls' failures name the verb and window.
func TestMWErrors(t *testing.T) {
	r := newRig(t)
	r.connect()
	r.f.fail["allocMW"] = syscall.EOPNOTSUPP
	_, err := r.pd.AllocMW(MWType2)
	if diff := cmp.Diff("rxe0 PD 1 (type 2): ibv_alloc_mw: operation not supported", errString(err)); diff != "" {
		t.Errorf("unexpected error (-want +got):\n%s", diff)
	}
	delete(r.f.fail, "allocMW")
	mw := must(r.pd.AllocMW(MWType1))
	r.f.fail["bindMW"] = syscall.EINVAL
	err = r.qp.BindMW(mw, 1, MWBind{MR: r.mr}, false)
	if diff := cmp.Diff("rxe0 PD 1 MW type 1 rkey 0x300 on rxe0 QP 0x11: ibv_bind_mw: invalid argument", errString(err)); diff != "" {
		t.Errorf("unexpected error (-want +got):\n%s", diff)
	}
	r.f.fail["deallocMW"] = syscall.EBUSY
	if err := mw.Close(); err == nil || mw.closed {
		t.Errorf("failed Close: error %v, closed %v", err, mw.closed)
	}
}

// TestMWMisuse: binding the wrong kind of window, or without an RTS QP,
// or memory outside the MR, panics.
func TestMWMisuse(t *testing.T) {
	tests := []struct {
		name string
		f    func(r *rig)
		want string
	}{
		{"type 2 through BindMW", func(r *rig) { r.connect(); _ = r.qp.BindMW(must(r.pd.AllocMW(MWType2)), 1, MWBind{MR: r.mr}, false) },
			"verbs: BindMW on rxe0 QP 0x11 of rxe0 PD 1 MW type 2 rkey 0x300: a type 2 window is bound with an OpBindMW request"},
		{"type 1 through BIND_MW", func(r *rig) {
			r.connect()
			_ = r.qp.PostSend(SendWR{Op: OpBindMW, MW: must(r.pd.AllocMW(MWType1))})
		}, "verbs: PostSend on rxe0 QP 0x11: BIND_MW of rxe0 PD 1 MW type 1 rkey 0x300: want a type 2 window of the QP's PD (type 1: BindMW)"},
		{"BIND_MW without MW", func(r *rig) { r.connect(); _ = r.qp.PostSend(SendWR{Op: OpBindMW}) },
			"verbs: PostSend on rxe0 QP 0x11: an MW goes with BIND_MW, and every BIND_MW needs one"},
		{"bind before RTS", func(r *rig) { _ = r.qp.BindMW(must(r.pd.AllocMW(MWType1)), 1, MWBind{MR: r.mr}, false) },
			"verbs: BindMW on rxe0 QP 0x11 in state RESET: connect it first (RTS)"},
		{"bind past the MR", func(r *rig) {
			r.connect()
			_ = r.qp.BindMW(must(r.pd.AllocMW(MWType1)), 1, MWBind{MR: r.mr, Offset: 4000, Length: 200}, false)
		}, "verbs: BindMW of bytes [4000, 4200) outside rxe0 PD 1 MR lkey 0x100 (4096 bytes)"},
		{"bind without MR", func(r *rig) { r.connect(); _ = r.qp.BindMW(must(r.pd.AllocMW(MWType1)), 1, MWBind{}, false) },
			"verbs: BindMW without an MR (to unbind, bind zero bytes of one)"},
		{"window of another PD", func(r *rig) {
			r.connect()
			_ = r.qp.BindMW(must(must(r.ctx.AllocPD()).AllocMW(MWType1)), 1, MWBind{MR: r.mr}, false)
		}, "verbs: BindMW on rxe0 QP 0x11 of rxe0 PD 4 MW type 1 rkey 0x300 of another PD"},
		{"closed window", func(r *rig) {
			mw := must(r.pd.AllocMW(MWType1))
			check(mw.Close())
			mw.RKey()
		}, "verbs: RKey on deallocated rxe0 PD 1 MW type 1 rkey 0x300"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantPanic(t, tt.want, tt.f) })
	}
}
