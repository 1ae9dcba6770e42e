package verbs

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// write is the rig's Stream request: 16 bytes from offset 32 of the MR.
func (r *rig) write() SendWR {
	return SendWR{Op: OpRDMAWrite, MR: r.mr, Offset: 32, Length: 16, RemoteAddr: 0x9000, RKey: 0x77, ID: 99, Signaled: true}
}

// TestStreamCount checks a counted run: what reaches the driver (the
// request resolved, IDs in sequence, every third and the last signalled)
// and the result, with recorded times.
func TestStreamCount(t *testing.T) {
	r := newRig(t)
	r.connect()
	res, err := r.qp.Stream(context.Background(), Stream{WR: r.write(), Count: 7, Depth: 4, SignalEvery: 3, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []uint64
	var gotSignaled []uint64
	for _, b := range r.f.sends {
		w := b[0]
		gotIDs = append(gotIDs, w.id)
		if w.flags&sendSignaled != 0 {
			gotSignaled = append(gotSignaled, w.id)
		}
		w.id, w.flags = 0, w.flags&^sendSignaled
		want := sendWork{op: OpRDMAWrite, addr: r.mr.Addr() + 32, length: 16, lkey: 0x100, raddr: 0x9000, rkey: 0x77}
		if diff := cmp.Diff(want, w, cmp.AllowUnexported(sendWork{}, mwBindWork{})); diff != "" {
			t.Fatalf("unexpected request (-want +got):\n%s", diff)
		}
	}
	if diff := cmp.Diff([]uint64{0, 1, 2, 3, 4, 5, 6}, gotIDs); diff != "" {
		t.Errorf("request IDs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]uint64{2, 5, 6}, gotSignaled); diff != "" {
		t.Errorf("signalled requests (-want +got):\n%s", diff)
	}
	ms := time.Millisecond
	want := StreamResult{Posted: 7, Completed: 7, Last: 7 * ms,
		PostedAt:    []time.Duration{0, ms, 2 * ms, 3 * ms, 4 * ms, 5 * ms, 6 * ms},
		CompletedAt: []time.Duration{0, 0, 4 * ms, 0, 0, 7 * ms, 7 * ms},
		Signaled:    []int{2, 5, 6}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

// TestStreamDuration checks a timed run: the window counts the
// completions between From and To, and one last signalled request ends
// the run.
func TestStreamDuration(t *testing.T) {
	r := newRig(t)
	r.connect()
	ms := time.Millisecond
	res, err := r.qp.Stream(context.Background(), Stream{WR: r.write(), Duration: 20 * ms, From: 4 * ms, To: 16 * ms, Depth: 2, SignalEvery: 2, Events: true})
	if err != nil {
		t.Fatal(err)
	}
	// Two posts (the second signalled) per reap, a millisecond each.
	want := StreamResult{Posted: 21, Completed: 21, Last: 21 * ms, Window: 12, WindowTime: 12 * ms}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if last := r.f.sends[len(r.f.sends)-1][0]; last.flags&sendSignaled == 0 {
		t.Error("the last request is not signalled")
	}
	if r.f.acked != 11 {
		t.Errorf("%d CQ events acknowledged, want one per reap (11)", r.f.acked)
	}
}

// TestStreamErrors fails each step of the loop: the error names the verb
// and the object, and the result says how far the loop got.
func TestStreamErrors(t *testing.T) {
	tests := []struct {
		fail   string
		events bool
		want   string
	}{
		{"postSend", false, "rxe0 QP 0x11: ibv_post_send: cannot allocate memory"},
		{"pollCQ", false, "rxe0 CQ 3: ibv_poll_cq: cannot allocate memory"},
		{"reqNotifyCQ", true, "rxe0 CQ 3: ibv_req_notify_cq: cannot allocate memory"},
		{"getCQEvent", true, "rxe0 completion channel 2: ibv_get_cq_event: cannot allocate memory"},
	}
	for _, tt := range tests {
		t.Run(tt.fail, func(t *testing.T) {
			r := newRig(t)
			r.connect()
			r.f.fail[tt.fail] = errnoENOMEM
			_, err := r.qp.Stream(context.Background(), Stream{WR: r.write(), Count: 5, Depth: 2, SignalEvery: 1, Events: tt.events})
			if diff := cmp.Diff(tt.want, fmt.Sprint(err)); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			var ve *VerbError
			if !errors.As(err, &ve) || !errors.Is(err, syscall.ENOMEM) {
				t.Errorf("%v is not a *VerbError wrapping ENOMEM", err)
			}
		})
	}
	t.Run("completion", func(t *testing.T) {
		r := newRig(t)
		r.connect()
		r.f.badStatus, r.f.badID = WCRetryExcErr, 3
		res, err := r.qp.Stream(context.Background(), Stream{WR: r.write(), Count: 8, Depth: 2, SignalEvery: 2})
		var ce *CompletionError
		if !errors.As(err, &ce) || ce.WC.ID != 3 || ce.WC.Status != WCRetryExcErr || ce.Object != "rxe0 CQ 3" {
			t.Errorf("error %v, want a CompletionError for request 3", err)
		}
		if res.Posted != 4 || res.Completed != 2 {
			t.Errorf("%d posted and %d completed, want 4 and 2", res.Posted, res.Completed)
		}
	})
	t.Run("context", func(t *testing.T) {
		r := newRig(t)
		r.connect()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := r.qp.Stream(ctx, Stream{WR: r.write(), Count: 8, Depth: 2, SignalEvery: 2}); !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	})
}

// TestStreamMisuse checks the panics for a Stream that cannot run.
func TestStreamMisuse(t *testing.T) {
	tests := []struct {
		name string
		run  func(r *rig)
		want string
	}{
		{"not connected", func(r *rig) {
			_, _ = r.qp.Stream(context.Background(), Stream{WR: r.write(), Count: 1, Depth: 1, SignalEvery: 1})
		},
			"verbs: Stream on rxe0 QP 0x11 in state RESET: connect it first (RTS)"},
		{"destroyed", func(r *rig) {
			r.connect()
			check(r.qp.Close())
			_, _ = r.qp.Stream(context.Background(), Stream{WR: r.write(), Count: 1, Depth: 1, SignalEvery: 1})
		}, "verbs: Stream on destroyed rxe0 QP 0x11"},
		{"too deep", func(r *rig) {
			r.connect()
			_, _ = r.qp.Stream(context.Background(), Stream{WR: r.write(), Count: 1, Depth: 9, SignalEvery: 1})
		}, "verbs: Stream on rxe0 QP 0x11 with depth 9: the send queue takes 1 to 8"},
		{"signal past the depth", func(r *rig) {
			r.connect()
			_, _ = r.qp.Stream(context.Background(), Stream{WR: r.write(), Count: 1, Depth: 2, SignalEvery: 3})
		}, "verbs: Stream on rxe0 QP 0x11 signalling every 3 requests with depth 2: want 1 to the depth"},
		{"no count or duration", func(r *rig) {
			r.connect()
			_, _ = r.qp.Stream(context.Background(), Stream{WR: r.write(), Depth: 2, SignalEvery: 1})
		}, "verbs: Stream on rxe0 QP 0x11 with count 0 and duration 0s: want one of them"},
		{"record a duration", func(r *rig) {
			r.connect()
			_, _ = r.qp.Stream(context.Background(), Stream{WR: r.write(), Duration: time.Second, Depth: 2, SignalEvery: 1, Record: true})
		}, "verbs: Stream on rxe0 QP 0x11 records times only with a count"},
		{"events without a channel", func(r *rig) {
			cq := must(r.ctx.CreateCQ(4, nil))
			qp := must(r.pd.CreateQP(QPConfig{SendCQ: cq, RecvCQ: cq, Caps: QPCaps{MaxSendWR: 4}}))
			check(qp.Init(InitAttr{Port: 1}))
			check(qp.ReadyToReceive(RTRAttr{PathMTU: MTU256}))
			check(qp.ReadyToSend(RTSAttr{}))
			_, _ = qp.Stream(context.Background(), Stream{WR: r.write(), Count: 1, Depth: 1, SignalEvery: 1, Events: true})
		}, "verbs: Stream on rxe0 QP 0x11 with events: rxe0 CQ 4 has no completion channel"},
		{"request past the MR", func(r *rig) {
			r.connect()
			_, _ = r.qp.Stream(context.Background(), Stream{WR: SendWR{MR: r.mr, Offset: 4090, Length: 16}, Count: 1, Depth: 1, SignalEvery: 1})
		}, "verbs: PostSend of bytes [4090, 4106) outside rxe0 PD 1 MR lkey 0x100 (4096 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantPanic(t, tt.want, tt.run)
		})
	}
}
