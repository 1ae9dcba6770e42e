package rdma

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// TestCMPortWatch: a watch whose port goes down ends the tool's context
// with the *verbs.PortDownError; one that cannot read its events, or
// that sees its context end, leaves it be; a device and port is watched
// once.
func TestCMPortWatch(t *testing.T) {
	down := &verbs.PortDownError{Device: "rxecm0", Port: 1, Event: verbs.EventPortErr}
	for _, tt := range []struct {
		name  string
		waits []error // what each watch returns; nil: it waits for the end
		want  string  // the context's cause, "" when it did not end
	}{
		{"port down", []error{down}, down.Error()},
		{"events unreadable", []error{errors.New("poll: EBADF")}, ""},
		{"nothing happens", []error{nil}, ""},
		{"second port down", []error{nil, down}, down.Error()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newCMPortWatch(context.Background())
			for i, e := range tt.waits {
				w.watch(fmt.Sprintf("rxecm%d/1", i), func(ctx context.Context) error {
					if e == nil {
						<-ctx.Done()
					}
					return e
				})
			}
			select {
			case <-w.ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
			got := ""
			if w.ctx.Err() != nil {
				got = context.Cause(w.ctx).Error()
			}
			w.stop()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected cause (-want +got):\n%s", diff)
			}
		})
	}

	w := newCMPortWatch(context.Background())
	n := 0
	for range 3 {
		w.watch("rxecm0/1", func(ctx context.Context) error { n++; <-ctx.Done(); return nil })
	}
	w.stop()
	w.watch("rxecm0/2", func(context.Context) error { n++; return nil }) // after stop: not started
	if n != 1 {
		t.Errorf("%d watches of one port, want 1", n)
	}
}

// TestCMWhy: the error a tool ends with when its port went down is the
// port's, with a failed work request said after it (the port's word
// coming a moment after the request failed); other errors stay theirs.
func TestCMWhy(t *testing.T) {
	old := cmFlushWait
	t.Cleanup(func() { cmFlushWait = old })
	cmFlushWait = 200 * time.Millisecond
	down := &verbs.PortDownError{Device: "rxecm1", Port: 1, Event: verbs.EventPortErr}
	flushed := &verbs.CompletionError{Object: "rxecm1 CQ 3", WC: verbs.WorkCompletion{ID: 1, Opcode: verbs.WCRecv, Status: verbs.WCWRFlushErr}}
	for _, tt := range []struct {
		name  string
		err   error
		down  bool          // the port goes down
		after time.Duration // that long after the error
		want  string
	}{
		{"no error", nil, true, 0, "<nil>"},
		{"port down ends the wait", fmt.Errorf("waiting for the reply: %w", context.Canceled), true, 0, down.Error()},
		{"request failed, then the port's word", fmt.Errorf("connection 0: %w", flushed), true, 20 * time.Millisecond, down.Error() + "; " + flushed.Error()},
		{"request failed, no word", flushed, false, 0, flushed.Error()},
		{"another error", errors.New("rdma_connect: rejected"), false, 0, "rdma_connect: rejected"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if tt.down {
				time.AfterFunc(tt.after, func() { cancel(down) })
				if tt.after == 0 {
					<-ctx.Done()
				}
			}
			got := cmWhy(ctx, tt.err)
			if diff := cmp.Diff(tt.want, fmt.Sprint(got)); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			var pd *verbs.PortDownError
			if tt.down && tt.err != nil && !errors.As(got, &pd) {
				t.Errorf("%v is not a *verbs.PortDownError", got)
			}
		})
	}
}

// TestCMPortDownExit: each rdma_cm tool's way from its error to its exit
// gives a port gone down exit 3 and its one line (the status line's 3
// where the tool prints one).
func TestCMPortDownExit(t *testing.T) {
	pd := &verbs.PortDownError{Device: "rxecf0", Port: 1, Event: verbs.EventPortErr}
	flushed := fmt.Errorf("%w; rxecf0 CQ 2: work request 0 (RECV) ...", pd)
	for _, tt := range []struct {
		tool   string
		exit   func(error) (int, error) // the status the tool prints, the error it returns
		err    error
		status int
	}{
		{"ucmatose", func(err error) (int, error) { s := ucmaStatus(err); return s, ucmaExit(s, err) }, pd, 3},
		{"udaddy", func(err error) (int, error) { s := ucmaStatus(err); return s, ucmaExit(s, err) }, flushed, 3},
		{"mckey", func(err error) (int, error) {
			s := ucmaStatus(err)
			if mckeyLeaveDecides(err) {
				s = -1
			}
			return s, ucmaExit(s, err)
		}, pd, 3},
		{"cmtime", func(err error) (int, error) { s := syncStatus(err); return s, ucmaExit(s, err) }, pd, 3},
		{"rdma_client", func(err error) (int, error) { s := syncStatus(err); return s, ucmaExit(s, err) }, flushed, 3},
		{"rping", func(err error) (int, error) { return 0, err }, pd, 0},
		{"rdma_bw", func(err error) (int, error) { return 0, err }, flushed, 0},
	} {
		status, err := tt.exit(tt.err)
		got := []any{status, cmdutil.ExitCode(err), fmt.Sprint(err)}
		if diff := cmp.Diff([]any{tt.status, cmdutil.ExitFailure, tt.err.Error()}, got); diff != "" {
			t.Errorf("%s: unexpected status, exit code, line (-want +got):\n%s", tt.tool, diff)
		}
	}
}
