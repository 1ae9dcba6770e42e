package verbs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rig is one of everything, made on the fake driver, the QP connected.
type rig struct {
	f   *fakeDriver
	ctx *Context
	pd  *PD
	mr  *MR
	ch  *CompChannel
	cq  *CQ
	qp  *QP
}

// must and check panic on an error: the rig's set-up cannot fail.
func must[T any](v T, err error) T {
	check(err)
	return v
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{f: useFake(t)}
	r.ctx = must(Open("rxe0"))
	r.pd = must(r.ctx.AllocPD())
	r.mr = must(r.pd.AllocMR(4096, AccessLocalWrite|AccessRemoteWrite))
	r.ch = must(r.ctx.CreateCompChannel())
	r.cq = must(r.ctx.CreateCQ(16, r.ch))
	r.qp = must(r.pd.CreateQP(QPConfig{SendCQ: r.cq, RecvCQ: r.cq, Caps: QPCaps{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 64}}))
	return r
}

// connect moves the rig's QP to RTS.
func (r *rig) connect() {
	check(r.qp.Init(InitAttr{Port: 1, Access: AccessRemoteWrite}))
	check(r.qp.ReadyToReceive(RTRAttr{PathMTU: MTU1024, DestQPN: 0x12, RQPSN: 7, GRH: &GRH{HopLimit: 255}}))
	check(r.qp.ReadyToSend(RTSAttr{SQPSN: 9, Timeout: 14, RetryCnt: 7, RNRRetry: 7}))
}

// TestRuntimeErrors fails each libibverbs call in turn: the error names
// the verb and the object and wraps the errno.
func TestRuntimeErrors(t *testing.T) {
	tests := []struct {
		fail string
		run  func(t *testing.T, r *rig) error
		want string
	}{
		{"open", func(t *testing.T, r *rig) error { _, err := Open("mlx5_0"); return err }, "mlx5_0: ibv_open_device: cannot allocate memory"},
		{"open", func(t *testing.T, r *rig) error { _, err := Open(""); return err }, "first device: ibv_open_device: cannot allocate memory"},
		{"closeDevice", func(t *testing.T, r *rig) error { return must(Open("mlx5_0")).Close() }, "mlx5_0: ibv_close_device: cannot allocate memory"},
		{"queryPort", func(t *testing.T, r *rig) error { _, err := r.ctx.QueryPort(2); return err }, "rxe0 port 2: ibv_query_port: cannot allocate memory"},
		{"queryGID", func(t *testing.T, r *rig) error { _, err := r.ctx.QueryGID(1, 3); return err }, "rxe0 port 1 GID index 3: ibv_query_gid: cannot allocate memory"},
		{"allocPD", func(t *testing.T, r *rig) error { _, err := r.ctx.AllocPD(); return err }, "rxe0: ibv_alloc_pd: cannot allocate memory"},
		{"deallocPD", func(t *testing.T, r *rig) error { return must(r.ctx.AllocPD()).Close() }, "rxe0 PD 4: ibv_dealloc_pd: cannot allocate memory"},
		{"mmap", func(t *testing.T, r *rig) error { _, err := AllocBuffer(100); return err }, "buffer of 100 bytes: mmap: cannot allocate memory"},
		{"mmap", func(t *testing.T, r *rig) error { _, err := r.pd.AllocMR(100, 0); return err }, "buffer of 100 bytes: mmap: cannot allocate memory"},
		{"munmap", func(t *testing.T, r *rig) error { return must(AllocBuffer(100)).Free() }, "buffer of 100 bytes: munmap: cannot allocate memory"},
		{"regMR", func(t *testing.T, r *rig) error { _, err := r.pd.AllocMR(100, 0); return err }, "rxe0 PD 1 (100 bytes): ibv_reg_mr: cannot allocate memory"},
		{"deregMR", func(t *testing.T, r *rig) error { return r.mr.Close() }, "rxe0 PD 1 MR lkey 0x100 (4096 bytes): ibv_dereg_mr: cannot allocate memory"},
		{"createCompChannel", func(t *testing.T, r *rig) error { _, err := r.ctx.CreateCompChannel(); return err }, "rxe0: ibv_create_comp_channel: cannot allocate memory"},
		{"destroyCompChannel", func(t *testing.T, r *rig) error { return must(r.ctx.CreateCompChannel()).Close() }, "rxe0 completion channel 4: ibv_destroy_comp_channel: cannot allocate memory"},
		{"createCQ", func(t *testing.T, r *rig) error { _, err := r.ctx.CreateCQ(10, nil); return err }, "rxe0 (10 entries, vector 0): ibv_create_cq: cannot allocate memory"},
		{"createCQ", func(t *testing.T, r *rig) error { _, err := r.ctx.CreateCQOnVector(10, nil, 3); return err }, "rxe0 (10 entries, vector 3): ibv_create_cq: cannot allocate memory"},
		{"queryGIDEx", func(t *testing.T, r *rig) error { _, err := r.ctx.QueryGIDEx(1, 3); return err }, "rxe0 port 1 GID index 3: ibv_query_gid_ex: cannot allocate memory"},
		{"queryGIDTable", func(t *testing.T, r *rig) error { _, err := r.ctx.QueryGIDTable(8); return err }, "rxe0 (8 entries): ibv_query_gid_table: cannot allocate memory"},
		{"queryDataInOrder", func(t *testing.T, r *rig) error { _, err := r.qp.QueryDataInOrder(OpSend); return err }, "rxe0 QP 0x11 (SEND): ibv_query_qp_data_in_order: cannot allocate memory"},
		{"queryPKey", func(t *testing.T, r *rig) error { _, err := r.ctx.QueryPKey(1, 0); return err }, "rxe0 port 1 P_Key index 0: ibv_query_pkey: cannot allocate memory"},
		{"destroyCQ", func(t *testing.T, r *rig) error { return must(r.ctx.CreateCQ(10, nil)).Close() }, "rxe0 CQ 4: ibv_destroy_cq: cannot allocate memory"},
		{"reqNotifyCQ", func(t *testing.T, r *rig) error { return r.cq.ReqNotify(false) }, "rxe0 CQ 3: ibv_req_notify_cq: cannot allocate memory"},
		{"getCQEvent", func(t *testing.T, r *rig) error { _, err := r.ch.Wait(); return err }, "rxe0 completion channel 2: ibv_get_cq_event: cannot allocate memory"},
		{"pollCQ", func(t *testing.T, r *rig) error { _, err := r.cq.Poll(make([]WorkCompletion, 4)); return err }, "rxe0 CQ 3: ibv_poll_cq: cannot allocate memory"},
		{"createQP", func(t *testing.T, r *rig) error {
			_, err := r.pd.CreateQP(QPConfig{SendCQ: r.cq, RecvCQ: r.cq, Caps: QPCaps{MaxSendWR: 4, MaxRecvWR: 2}})
			return err
		},
			"rxe0 PD 1 (RC, 4 send and 2 receive WRs): ibv_create_qp: cannot allocate memory"},
		{"modifyQP", func(t *testing.T, r *rig) error { return r.qp.Init(InitAttr{Port: 1}) }, "rxe0 QP 0x11 RESET->INIT: ibv_modify_qp: cannot allocate memory"},
		{"destroyQP", func(t *testing.T, r *rig) error { return r.qp.Close() }, "rxe0 QP 0x11: ibv_destroy_qp: cannot allocate memory"},
		{"postSend", func(t *testing.T, r *rig) error {
			r.f.fail = map[string]error{}
			r.connect()
			r.f.fail["postSend"] = errnoENOMEM
			return r.qp.PostSend(SendWR{Op: OpRDMAWrite, MR: r.mr, Length: 8})
		}, "rxe0 QP 0x11: ibv_post_send: cannot allocate memory"},
		{"postRecv", func(t *testing.T, r *rig) error {
			r.f.fail = map[string]error{}
			r.connect()
			r.f.fail["postRecv"] = errnoENOMEM
			return r.qp.PostRecv(RecvWR{MR: r.mr, Length: 8})
		}, "rxe0 QP 0x11: ibv_post_recv: cannot allocate memory"},
	}
	for _, tt := range tests {
		t.Run(tt.fail, func(t *testing.T) {
			r := newRig(t)
			r.f.fail[tt.fail] = errnoENOMEM
			err := tt.run(t, r)
			var got string
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			var ve *VerbError
			if !errors.As(err, &ve) || !errors.Is(err, syscall.ENOMEM) {
				t.Errorf("%v is not a *VerbError wrapping ENOMEM", err)
			}
		})
	}
}

// TestModifyRejects checks the attribute values refused before the
// driver sees them, and that the QP stays where it was.
func TestModifyRejects(t *testing.T) {
	tests := []struct {
		name string
		run  func(qp *QP) error
		want string
	}{
		{"port 0", func(qp *QP) error { return qp.Init(InitAttr{}) }, "rxe0 QP 0x11 RESET->INIT: ibv_modify_qp: invalid argument: port 0"},
		{"MTU", func(qp *QP) error { return qp.ReadyToReceive(RTRAttr{PathMTU: 6}) }, "rxe0 QP 0x11 INIT->RTR: ibv_modify_qp: invalid argument: path MTU 6"},
		{"dest QPN", func(qp *QP) error { return qp.ReadyToReceive(RTRAttr{PathMTU: MTU256, DestQPN: 1 << 24}) },
			"rxe0 QP 0x11 INIT->RTR: ibv_modify_qp: invalid argument: destination QP number 0x1000000 is wider than 24 bits"},
		{"RQ PSN", func(qp *QP) error { return qp.ReadyToReceive(RTRAttr{PathMTU: MTU256, RQPSN: 1 << 24}) },
			"rxe0 QP 0x11 INIT->RTR: ibv_modify_qp: invalid argument: receive PSN 0x1000000 is wider than 24 bits"},
		{"SL", func(qp *QP) error { return qp.ReadyToReceive(RTRAttr{PathMTU: MTU256, SL: 16}) }, "rxe0 QP 0x11 INIT->RTR: ibv_modify_qp: invalid argument: SL 16"},
		{"SGID index", func(qp *QP) error { return qp.ReadyToReceive(RTRAttr{PathMTU: MTU256, GRH: &GRH{SGIDIndex: -1}}) },
			"rxe0 QP 0x11 INIT->RTR: ibv_modify_qp: invalid argument: source GID index -1"},
		{"SQ PSN", func(qp *QP) error {
			check(qp.ReadyToReceive(RTRAttr{PathMTU: MTU256}))
			return qp.ReadyToSend(RTSAttr{SQPSN: 1 << 24})
		},
			"rxe0 QP 0x11 RTR->RTS: ibv_modify_qp: invalid argument: send PSN 0x1000000 is wider than 24 bits"},
		{"retry", func(qp *QP) error {
			check(qp.ReadyToReceive(RTRAttr{PathMTU: MTU256}))
			return qp.ReadyToSend(RTSAttr{RetryCnt: 8})
		},
			"rxe0 QP 0x11 RTR->RTS: ibv_modify_qp: invalid argument: timeout 0, retry count 8, RNR retry 0 (want at most 31, 7, 7)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			if tt.name != "port 0" {
				check(r.qp.Init(InitAttr{Port: 1}))
			}
			err := tt.run(r.qp)
			if diff := cmp.Diff(tt.want, fmt.Sprint(err)); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			if !errors.Is(err, syscall.EINVAL) {
				t.Errorf("%v does not wrap EINVAL", err)
			}
			want := QPStateInit
			switch tt.name {
			case "port 0":
				want = QPStateReset
			case "SQ PSN", "retry":
				want = QPStateRTR
			}
			if r.qp.State() != want {
				t.Errorf("state %s after a refused move, want %s", r.qp.State(), want)
			}
		})
	}
}

// TestMisuse checks that programming errors panic with a message that
// says what was misused.
func TestMisuse(t *testing.T) {
	tests := []struct {
		name string
		run  func(r *rig)
		want string
	}{
		{"post before connect", func(r *rig) { _ = r.qp.PostSend(SendWR{Op: OpSend}) }, "verbs: PostSend on rxe0 QP 0x11 in state RESET: connect it first (RTS)"},
		{"post in RTR", func(r *rig) {
			check(r.qp.Init(InitAttr{Port: 1}))
			check(r.qp.ReadyToReceive(RTRAttr{PathMTU: MTU256}))
			_ = r.qp.PostSend(SendWR{Op: OpSend})
		}, "verbs: PostSend on rxe0 QP 0x11 in state RTR: connect it first (RTS)"},
		{"recv in RESET", func(r *rig) { _ = r.qp.PostRecv(RecvWR{MR: r.mr}) }, "verbs: PostRecv on rxe0 QP 0x11 in state RESET: Init it first"},
		{"RTR before INIT", func(r *rig) { _ = r.qp.ReadyToReceive(RTRAttr{PathMTU: MTU256}) }, "verbs: modify to RTR of rxe0 QP 0x11 in state RESET: want INIT first"},
		{"INIT twice", func(r *rig) { check(r.qp.Init(InitAttr{Port: 1})); _ = r.qp.Init(InitAttr{Port: 1}) }, "verbs: modify to INIT of rxe0 QP 0x11 in state INIT: want RESET first"},
		{"post on destroyed QP", func(r *rig) { r.connect(); check(r.qp.Close()); _ = r.qp.PostSend(SendWR{Op: OpSend}) }, "verbs: PostSend on destroyed rxe0 QP 0x11"},
		{"recv on destroyed QP", func(r *rig) { check(r.qp.Close()); _ = r.qp.PostRecv(RecvWR{MR: r.mr}) }, "verbs: PostRecv on destroyed rxe0 QP 0x11"},
		{"unknown opcode", func(r *rig) { r.connect(); _ = r.qp.PostSend(SendWR{Op: 10}) }, "verbs: PostSend on rxe0 QP 0x11: unknown opcode 10"},
		{"past the MR", func(r *rig) { r.connect(); _ = r.qp.PostSend(SendWR{MR: r.mr, Offset: 4000, Length: 100}) },
			"verbs: PostSend of bytes [4000, 4100) outside rxe0 PD 1 MR lkey 0x100 (4096 bytes)"},
		{"recv past the MR", func(r *rig) { _ = r.qp.Init(InitAttr{Port: 1}); _ = r.qp.PostRecv(RecvWR{MR: r.mr, Offset: -1}) },
			"verbs: PostRecv of bytes [-1, -1) outside rxe0 PD 1 MR lkey 0x100 (4096 bytes)"},
		{"bytes without MR", func(r *rig) { r.connect(); _ = r.qp.PostSend(SendWR{Length: 1}) }, "verbs: PostSend on rxe0 QP 0x11: 1 bytes without an MR"},
		{"recv without MR", func(r *rig) { _ = r.qp.Init(InitAttr{Port: 1}); _ = r.qp.PostRecv(RecvWR{}) }, "verbs: PostRecv on rxe0 QP 0x11 without an MR"},
		{"too much inline", func(r *rig) { r.connect(); _ = r.qp.PostSend(SendWR{MR: r.mr, Length: 65, Inline: true}) },
			"verbs: PostSend on rxe0 QP 0x11: 65 bytes inline, the QP takes 64"},
		{"MR of another PD", func(r *rig) {
			r.connect()
			mr := must(must(r.ctx.AllocPD()).AllocMR(10, 0))
			_ = r.qp.PostSend(SendWR{MR: mr, Length: 1})
		}, "verbs: PostSend on rxe0 QP 0x11 with rxe0 PD 4 MR lkey 0x100 (10 bytes) of another PD"},
		{"recv MR of another PD", func(r *rig) {
			_ = r.qp.Init(InitAttr{Port: 1})
			mr := must(must(r.ctx.AllocPD()).AllocMR(10, 0))
			_ = r.qp.PostRecv(RecvWR{MR: mr, Length: 1})
		}, "verbs: PostRecv on rxe0 QP 0x11 with rxe0 PD 4 MR lkey 0x100 (10 bytes) of another PD"},
		{"closed MR", func(r *rig) { r.connect(); check(r.mr.Close()); _ = r.qp.PostSend(SendWR{MR: r.mr, Length: 1}) },
			"verbs: PostSend on closed rxe0 PD 1 MR lkey 0x100 (4096 bytes)"},
		{"MR keys after close", func(r *rig) { check(r.mr.Close()); r.mr.RKey() }, "verbs: RKey on closed rxe0 PD 1 MR lkey 0x100 (4096 bytes)"},
		{"closed PD", func(r *rig) { pd := must(r.ctx.AllocPD()); check(pd.Close()); _, _ = pd.AllocMR(1, 0) }, "verbs: AllocMR on closed rxe0 PD 4"},
		{"PD with children", func(r *rig) { _ = r.pd.Close() }, "verbs: Close of rxe0 PD 1 with 2 MRs and QPs still open"},
		{"closed CQ", func(r *rig) {
			cq := must(r.ctx.CreateCQ(1, nil))
			check(cq.Close())
			_, _ = cq.Poll(make([]WorkCompletion, 1))
		}, "verbs: Poll on closed rxe0 CQ 4"},
		{"CQ with QPs", func(r *rig) { _ = r.cq.Close() }, "verbs: Close of rxe0 CQ 3 with 2 QPs still using it"},
		{"QP on closed CQ", func(r *rig) {
			cq := must(r.ctx.CreateCQ(1, nil))
			check(cq.Close())
			_, _ = r.pd.CreateQP(QPConfig{SendCQ: cq, RecvCQ: cq})
		}, "verbs: CreateQP on closed rxe0 CQ 4"},
		{"QP without CQs", func(r *rig) { _, _ = r.pd.CreateQP(QPConfig{}) }, "verbs: CreateQP on rxe0 PD 1 without a send and a receive CQ"},
		{"notify without channel", func(r *rig) { _ = must(r.ctx.CreateCQ(1, nil)).ReqNotify(false) }, "verbs: ReqNotify on rxe0 CQ 4, which has no completion channel"},
		{"CQ of no size", func(r *rig) { _, _ = r.ctx.CreateCQ(0, nil) }, "verbs: CreateCQ(0) on rxe0: want at least one entry"},
		{"channel with CQs", func(r *rig) { _ = r.ch.Close() }, "verbs: Close of rxe0 completion channel 2 with 1 CQs still open"},
		{"closed channel", func(r *rig) { ch := must(r.ctx.CreateCompChannel()); check(ch.Close()); _, _ = ch.Wait() }, "verbs: Wait on closed rxe0 completion channel 4"},
		{"CQ on closed channel", func(r *rig) { ch := must(r.ctx.CreateCompChannel()); check(ch.Close()); _, _ = r.ctx.CreateCQ(1, ch) },
			"verbs: CreateCQ on closed rxe0 completion channel 4"},
		{"context with children", func(r *rig) { _ = r.ctx.Close() }, "verbs: Close of context rxe0 with 3 objects still open"},
		{"closed context", func(r *rig) { c := must(Open("mlx5_0")); check(c.Close()); _, _ = c.AllocPD() }, "verbs: AllocPD on closed context mlx5_0"},
		{"buffer still registered", func(r *rig) { b := must(AllocBuffer(8)); _ = must(r.pd.RegMR(b, 0)); _ = b.Free() },
			"verbs: Free of a buffer of 8 bytes still registered in 1 MRs"},
		{"freed buffer", func(r *rig) { b := must(AllocBuffer(8)); check(b.Free()); _, _ = r.pd.RegMR(b, 0) }, "verbs: RegMR on freed buffer of 8 bytes"},
		{"event for an unknown CQ", func(r *rig) { r.f.event = &fakeObj{}; _, _ = r.ch.Wait() }, "verbs: rxe0 completion channel 2 reported an event for a CQ it does not know"},
		{"buffer of no size", func(r *rig) { _, _ = AllocBuffer(0) }, "verbs: AllocBuffer(0): want a positive size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantPanic(t, tt.want, tt.run)
		})
	}
}

// TestPostSend checks what reaches the driver: addresses and keys
// resolved from the MR, flags, and long lists cut into batches.
func TestPostSend(t *testing.T) {
	r := newRig(t)
	r.connect()
	base := r.mr.Addr()
	err := r.qp.PostSend(
		SendWR{ID: 1, Op: OpRDMAWrite, MR: r.mr, Offset: 16, Length: 32, RemoteAddr: 0x1000, RKey: 0x77, Signaled: true},
		SendWR{ID: 2, Op: OpRDMAWriteImm, MR: r.mr, Length: 8, Imm: 0xabcd, Inline: true},
		SendWR{ID: 3, Op: OpSend, Solicited: true},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]sendWork{{
		{id: 1, op: OpRDMAWrite, flags: sendSignaled, addr: base + 16, length: 32, lkey: 0x100, raddr: 0x1000, rkey: 0x77},
		{id: 2, op: OpRDMAWriteImm, flags: sendInline, addr: base, length: 8, lkey: 0x100, imm: 0xabcd},
		{id: 3, op: OpSend, flags: sendSolicited},
	}}
	if diff := cmp.Diff(want, r.f.sends, cmp.AllowUnexported(sendWork{}, mwBindWork{})); diff != "" {
		t.Errorf("unexpected work requests (-want +got):\n%s", diff)
	}
	r.f.sends = nil
	wrs := make([]SendWR, maxPostBatch+3)
	if err := r.qp.PostSend(wrs...); err != nil {
		t.Fatal(err)
	}
	if got := []int{len(r.f.sends[0]), len(r.f.sends[1])}; !cmp.Equal(got, []int{maxPostBatch, 3}) {
		t.Errorf("batches of %v, want %d and 3", got, maxPostBatch)
	}
	if err := r.qp.PostRecv(RecvWR{ID: 5, MR: r.mr, Offset: 8, Length: 16}); err != nil {
		t.Fatal(err)
	}
	wantRecv := [][]recvWork{{{id: 5, addr: base + 8, length: 16, lkey: 0x100}}}
	if diff := cmp.Diff(wantRecv, r.f.recvs, cmp.AllowUnexported(recvWork{})); diff != "" {
		t.Errorf("unexpected receive requests (-want +got):\n%s", diff)
	}
	wantModify := []qpModify{
		{typ: QPTypeRC, to: QPStateInit, init: InitAttr{Port: 1, Access: AccessRemoteWrite}},
		{typ: QPTypeRC, to: QPStateRTR, init: InitAttr{Port: 1}, rtr: RTRAttr{PathMTU: MTU1024, DestQPN: 0x12, RQPSN: 7, GRH: &GRH{HopLimit: 255}}},
		{typ: QPTypeRC, to: QPStateRTS, rts: RTSAttr{SQPSN: 9, Timeout: 14, RetryCnt: 7, RNRRetry: 7}},
	}
	if diff := cmp.Diff(wantModify, r.f.modify, cmp.AllowUnexported(qpModify{})); diff != "" {
		t.Errorf("unexpected transitions (-want +got):\n%s", diff)
	}
	if r.qp.State() != QPStateRTS || r.qp.Num() != 0x11 || r.qp.Caps().MaxInlineData != 64 {
		t.Errorf("QP %s in %s with %+v", r.qp, r.qp.State(), r.qp.Caps())
	}
}

// TestSignalAll checks that a QP made with SignalAll signals every
// request.
func TestSignalAll(t *testing.T) {
	r := newRig(t)
	qp := must(r.pd.CreateQP(QPConfig{SendCQ: r.cq, RecvCQ: r.cq, SignalAll: true}))
	check(qp.Init(InitAttr{Port: 1}))
	check(qp.ReadyToReceive(RTRAttr{PathMTU: MTU4096}))
	check(qp.ReadyToSend(RTSAttr{}))
	check(qp.PostSend(SendWR{Op: OpSend}))
	if got := r.f.sends[0][0].flags; got != sendSignaled {
		t.Errorf("flags %#x, want signaled", got)
	}
}

// TestNext: Next returns the next completion, with its error when it
// failed; a failing poll is an error; with none to come it waits until
// its context ends.
func TestNext(t *testing.T) {
	r := newRig(t)
	r.f.wcs = []WorkCompletion{
		{ID: 1, Opcode: WCRDMARead, QPNum: 0x11},
		{ID: 2, Status: WCRemAccessErr, Opcode: WCRDMAWrite, QPNum: 0x11},
	}
	ctx := context.Background()
	if wc, err := r.cq.Next(ctx); err != nil || wc.ID != 1 {
		t.Errorf("first Next: %+v, %v; want work request 1", wc, err)
	}
	var ce *CompletionError
	if wc, err := r.cq.Next(ctx); !errors.As(err, &ce) || wc.ID != 2 || ce.WC.Status != WCRemAccessErr {
		t.Errorf("second Next: %+v, %v; want work request 2 with its *CompletionError", wc, err)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.cq.Next(ended); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with nothing to come and its context ended: %v, want context.Canceled", err)
	}
	r.f.fail["pollCQ"] = syscall.EIO
	if _, err := r.cq.Next(ctx); !errors.Is(err, syscall.EIO) {
		t.Errorf("Next with a failing poll: %v, want EIO", err)
	}
}

// TestPoll checks completions, the error of a failed one, and events.
func TestPoll(t *testing.T) {
	r := newRig(t)
	r.f.wcs = []WorkCompletion{
		{ID: 1, Opcode: WCRDMAWrite, QPNum: 0x11},
		{ID: 2, Status: WCRemAccessErr, Opcode: WCRDMAWrite, QPNum: 0x11, VendorErr: 0x88},
		{ID: 3, Opcode: WCRecvRDMAWithImm, Imm: 5, HasImm: true},
	}
	wc := make([]WorkCompletion, 2)
	n := must(r.cq.Poll(wc))
	if n != 2 || wc[0].Err(r.cq) != nil {
		t.Fatalf("%d completions %+v", n, wc)
	}
	err := wc[1].Err(r.cq)
	want := "rxe0 CQ 3: work request 2 (RDMA_WRITE) on QP 0x11 completed with status remote access error (10), vendor error 0x88"
	if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
		t.Errorf("unexpected error (-want +got):\n%s", diff)
	}
	if n := must(r.cq.Poll(wc)); n != 1 || wc[0].Opcode.String() != "RECV_RDMA_WITH_IMM" {
		t.Errorf("%d completions %+v", n, wc[0])
	}
	if n := must(r.cq.Poll(nil)); n != 0 {
		t.Errorf("%d completions into no room", n)
	}
	check(r.cq.ReqNotify(true))
	if cq := must(r.ch.Wait()); cq != r.cq || r.f.acked != 1 {
		t.Errorf("event for %v, %d acked", cq, r.f.acked)
	}
}

// TestOpen checks device names, the not-found and no-verbs errors, and an
// orderly teardown.
func TestOpen(t *testing.T) {
	f := useFake(t)
	c := must(Open(""))
	if c.Name() != "mlx5_0" || c.String() != "mlx5_0" {
		t.Errorf("first device %q", c.Name())
	}
	p := must(c.QueryPort(1))
	if p.Num != 1 || p.State != PortStateActive {
		t.Errorf("port %+v", p)
	}
	if g := must(c.QueryGID(1, 0)); g != f.gid {
		t.Errorf("GID %x", g)
	}
	check(c.Close())
	_, err := Open("nosuch")
	if !errors.Is(err, ErrDeviceNotFound) || !errors.Is(err, os.ErrNotExist) || err.Error() != "no such RDMA device" {
		t.Errorf("Open(nosuch): %v", err)
	}
	f.fail["open"] = ErrNoVerbs
	if _, err := Open("rxe0"); !errors.Is(err, ErrNoVerbs) {
		t.Errorf("Open without verbs: %v", err)
	}
	delete(f.fail, "open")

	r := newRig(t)
	r.connect()
	b := must(AllocBuffer(64))
	mr := must(r.pd.RegMR(b, AccessLocalWrite))
	if mr.Len() != 64 || mr.LKey() != 0x100 || mr.RKey() != 0x200 || mr.Addr() != b.Addr() || len(mr.Bytes()) != 64 || len(b.Bytes()) != 64 {
		t.Errorf("MR %s", mr)
	}
	for _, close := range []func() error{mr.Close, b.Free, r.qp.Close, r.mr.Close, r.cq.Close, r.ch.Close, r.pd.Close, r.ctx.Close} {
		if err := close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestVerbErrorIs checks the errno mapping onto the os sentinels.
func TestVerbErrorIs(t *testing.T) {
	tests := []struct {
		err    error
		target error
		want   bool
	}{
		{syscall.ENODEV, os.ErrNotExist, true},
		{syscall.ENOENT, os.ErrNotExist, true},
		{syscall.EPERM, os.ErrPermission, true},
		{syscall.EACCES, os.ErrPermission, true},
		{syscall.EINVAL, os.ErrPermission, false},
		{syscall.EINVAL, os.ErrExist, false},
		{errors.New("plain"), os.ErrNotExist, false},
	}
	for _, tt := range tests {
		err := &VerbError{Verb: "v", Object: "o", Err: tt.err}
		if got := errors.Is(err, tt.target); got != tt.want {
			t.Errorf("errors.Is(%v, %v) = %v, want %v", err, tt.target, got, tt.want)
		}
	}
	if err := verbError("v", "o", nil); !errors.Is(err, syscall.EIO) {
		t.Errorf("a failure without errno: %v", err)
	}
}

// TestStrings checks the names of enums, including values out of range.
func TestStrings(t *testing.T) {
	got := strings.Join([]string{WCSuccess.String(), WCTMRndvIncomplete.String(), WCStatus(99).String(),
		QPStateErr.String(), QPState(9).String(), OpSend.String(), OpSendImm.String(), OpRDMARead.String(), Opcode(10).String(),
		WCSend.String(), WCRDMARead.String(), WCRecv.String(), WCOpcode(7).String(),
		fmt.Sprint(MTU4096.Bytes(), MTU256.Bytes(), MTU(0).Bytes()),
		PortStateDown.String(), PortStateInit.String(), PortStateArmed.String(), PortStateActive.String(),
		PortStateNop.String(), PortStateActiveDefer.String(), PortState(9).String(),
		MTU256.String(), MTU4096.String(), MTU(6).String(),
		TransportIB.String(), TransportIWARP.String(), TransportUSNIC.String(), TransportUSNICUDP.String(),
		TransportUnspecified.String(), TransportUnknown.String(),
		LinkLayerUnspecified.String(), LinkLayerInfiniBand.String(), LinkLayerEthernet.String(), LinkLayer(3).String()}, ",")
	want := "success,TM rendezvous error,unknown,ERR,state 9,SEND,SEND_WITH_IMM,RDMA_READ,opcode 10,SEND,RDMA_READ,RECV,opcode 7,4096 256 0," +
		"PORT_DOWN,PORT_INIT,PORT_ARMED,PORT_ACTIVE,invalid state,invalid state,invalid state," +
		"256,4096,invalid MTU," +
		"InfiniBand,iWARP,usNIC,usNIC UDP,unspecified,invalid transport," +
		"Unspecified,InfiniBand,Ethernet,Unknown"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected names (-want +got):\n%s", diff)
	}
}

// wantPanic runs f on a new rig and checks that it panics with want.
func wantPanic(t *testing.T, want string, f func(r *rig)) {
	t.Helper()
	r := newRig(t)
	got := func() (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		f(r)
		return "no panic"
	}()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected panic (-want +got):\n%s", diff)
	}
}
