package rdma

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// fakeQueue is one side of a pingpong whose peer answers at once: each
// send completes and brings the peer's message back, so the loop's
// bookkeeping runs without a device. It records the calls.
type fakeQueue struct {
	cq              []verbs.WorkCompletion
	sends, recvs    int
	posted          []int // each postRecv's n
	failRecvAt      int   // postRecv call that fails (1-based); 0: none
	failStatusAfter int   // sends after which the next completion fails; 0: never
	events, waits   int
}

func (q *fakeQueue) postRecv(n int) (int, error) {
	q.posted = append(q.posted, n)
	if len(q.posted) == q.failRecvAt {
		return n / 2, errors.New("ENOMEM")
	}
	q.recvs += n
	return n, nil
}

func (q *fakeQueue) postSend() error {
	q.sends++
	st := verbs.WCSuccess
	if q.failStatusAfter > 0 && q.sends > q.failStatusAfter {
		st = verbs.WCRetryExcErr
	}
	q.cq = append(q.cq, verbs.WorkCompletion{ID: ppSendWRID, Status: st}, verbs.WorkCompletion{ID: ppRecvWRID})
	return nil
}

func (q *fakeQueue) poll(wc []verbs.WorkCompletion) (int, error) {
	n := copy(wc, q.cq)
	q.cq = q.cq[n:]
	return n, nil
}

func (q *fakeQueue) wait() error { q.waits++; return nil }

func TestPpLoop(t *testing.T) {
	tests := []struct {
		name     string
		q        fakeQueue
		iters    int
		rxDepth  int
		events   bool
		wantSend int
		posted   []int
		wantErr  string
	}{
		{"10 round trips", fakeQueue{}, 10, 500, false, 10, nil, ""},
		// With 4 receives posted, the third completion leaves one: the
		// loop tops the queue up to 4 again, as rdma-core's does.
		{"receives topped up", fakeQueue{}, 10, 4, false, 10, []int{3, 3, 3}, ""},
		{"events", fakeQueue{}, 3, 500, true, 3, nil, ""},
		{"receive post fails", fakeQueue{failRecvAt: 1}, 10, 4, false, 0, []int{3}, "couldn't post receive (2)"},
		{"completion error", fakeQueue{failStatusAfter: 2}, 10, 500, false, 0, nil, "failed status transport retry counter exceeded (12) for wr_id 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			_, err := ppLoop(context.Background(), &q, tt.iters, tt.rxDepth, true, tt.events, tt.rxDepth)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ppLoop error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if q.sends != tt.wantSend {
				t.Errorf("%d sends, want %d", q.sends, tt.wantSend)
			}
			if diff := cmp.Diff(tt.posted, q.posted); diff != "" {
				t.Errorf("receives posted (-want +got):\n%s", diff)
			}
			if tt.events && q.waits == 0 {
				t.Error("no waits on the completion channel with events")
			}
		})
	}
}

// TestPpLoopServer: the server sends only after a message arrived.
func TestPpLoopServer(t *testing.T) {
	q := fakeQueue{cq: []verbs.WorkCompletion{{ID: ppRecvWRID}}}
	if _, err := ppLoop(context.Background(), &q, 5, 500, false, false, 500); err != nil {
		t.Fatal(err)
	}
	if q.sends != 5 {
		t.Errorf("%d sends, want 5", q.sends)
	}
}

func TestPpLoopCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q := fakeQueue{cq: nil}
	// A server whose peer never sends: the loop polls until the context
	// ends.
	if _, err := ppLoop(ctx, &q, 5, 500, false, false, 500); !errors.Is(err, context.Canceled) {
		t.Fatalf("ppLoop error %v, want context.Canceled", err)
	}
}

func TestPpMarkCheck(t *testing.T) {
	b := bytes.Repeat([]byte{0x7b}, 3*ppPageSize)
	var out bytes.Buffer
	ppCheck(&out, b)
	want := "invalid data in page 0\ninvalid data in page 1\ninvalid data in page 2\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("check of an unmarked buffer (-want +got):\n%s", diff)
	}
	ppMark(b)
	out.Reset()
	ppCheck(&out, b)
	if out.Len() != 0 {
		t.Errorf("check of a marked buffer printed %q", out.String())
	}
}
