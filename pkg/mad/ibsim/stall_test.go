package ibsim

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
)

// fillUntilError sends frames to a stopped fake until Send fails, and
// returns that error and how long the failing Send took.
func fillUntilError(t *testing.T, ctx context.Context, c *Client, timeout time.Duration) (error, time.Duration) {
	t.Helper()
	for i := range 100000 {
		p := drNodeInfo(uint64(i), 0)
		p.Timeout = timeout
		start := time.Now()
		if err := c.Send(ctx, p); err != nil {
			return err, time.Since(start)
		}
	}
	t.Fatal("100,000 frames went to a stopped ibsim")
	return nil, 0
}

// TestSendGivesUpOnStoppedIBSim: a Send that finds ibsim's socket full
// (ibsim stopped) waits its packet's timeout, not forever, and says so
// with os.ErrDeadlineExceeded; a stalled client then closes quickly.
func TestSendGivesUpOnStoppedIBSim(t *testing.T) {
	f := newFakeSim(t)
	c := dialFake(t, f)
	f.stopped.Store(true)
	defer f.stopped.Store(false)
	err, took := fillUntilError(t, context.Background(), c, 100*time.Millisecond)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Send to a stopped ibsim: %v, want os.ErrDeadlineExceeded", err)
	}
	if took < 90*time.Millisecond || took > 2*time.Second {
		t.Errorf("Send gave up after %v, want its 100ms timeout", took)
	}
	f.mute.Store(true) // no answer to DISCONNECT either
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > quitWait+200*time.Millisecond {
		t.Errorf("Close of a stalled client took %v, want at most about %v", d, quitWait)
	}
}

// TestSendEndsWithContext: with no timeout, a blocked Send ends when its
// context does.
func TestSendEndsWithContext(t *testing.T) {
	f := newFakeSim(t)
	c := dialFake(t, f)
	f.stopped.Store(true)
	defer f.stopped.Store(false)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	err, took := fillUntilError(t, ctx, c, 0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Send after its context ended: %v, want context.Canceled", err)
	}
	if took > 2*time.Second {
		t.Errorf("Send ended %v after it began, want about 100ms", took)
	}
	// Frames dropped with the stalled batch do not poison later sends.
	f.stopped.Store(false)
	query(t, c, drNodeInfo(999999, 0))
}

// TestSendSaysIBSimGone: a socket ibsim closed fails with mad.ErrGone.
func TestSendSaysIBSimGone(t *testing.T) {
	f := newFakeSim(t)
	c := dialFake(t, f)
	f.mu.Lock()
	f.outs[0].Close()
	f.mu.Unlock()
	if err := c.Send(context.Background(), drNodeInfo(2, 0)); !errors.Is(err, mad.ErrGone) {
		t.Fatalf("Send to a closed ibsim socket: %v, want mad.ErrGone", err)
	}
}

// TestDialInterruptedDuringConnect: a context that ends while CONNECT
// waits for its answer still gets the answer and disconnects, so ibsim
// never meets a client socket that is gone.
func TestDialInterruptedDuringConnect(t *testing.T) {
	f := newFakeSim(t)
	f.stopped.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	time.AfterFunc(100*time.Millisecond, func() { f.stopped.Store(false) })
	start := time.Now()
	c, err := Dial(ctx, f.config())
	if !errors.Is(err, context.Canceled) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("Dial = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Dial returned after %v, want within about %v", d, 100*time.Millisecond+quitWait)
	}
	waitFor(t, "the DISCONNECT", func() bool { return f.disconnects.Load() == 1 })
	if n := f.lostClients.Load(); n != 0 {
		t.Errorf("%d CONNECTs found their client gone", n)
	}
}

// TestDialAbandonedConnectIsKept: when ibsim does not answer CONNECT
// within the grace after ctx ends (stopped), Dial returns at once and a
// keeper, a goroutine or this program started again, holds the client's
// sockets until ibsim answers, then disconnects.
func TestDialAbandonedConnectIsKept(t *testing.T) {
	for _, process := range []bool{false, true} {
		name := map[bool]string{false: "goroutine", true: "process"}[process]
		t.Run(name, func(t *testing.T) {
			was := reexec.Load()
			reexec.Store(process)
			defer reexec.Store(was)
			f := newFakeSim(t)
			f.stopped.Store(true)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			start := time.Now()
			if _, err := Dial(ctx, f.config()); !errors.Is(err, context.Canceled) {
				t.Fatalf("Dial = %v, want context.Canceled", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Dial returned after %v, want within about %v", d, connectGrace)
			}
			time.Sleep(100 * time.Millisecond) // this end has closed its sockets
			f.stopped.Store(false)
			waitFor(t, "the keeper's DISCONNECT", func() bool { return f.disconnects.Load() == 1 })
			if n := f.lostClients.Load(); n != 0 {
				t.Errorf("%d CONNECTs found their client gone", n)
			}
		})
	}
}

// TestKeeperEndsWhenIBSimGoes: a keeper whose ibsim disappears without
// answering stops waiting.
func TestKeeperEndsWhenIBSimGoes(t *testing.T) {
	f := newFakeSim(t)
	f.stopped.Store(true)
	cfg := f.config()
	s, err := openSockets(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	var buf [ctlMsgLen]byte
	(&ctlMsg{Type: ctlConnect, Len: clientInfoLen}).marshal(buf[:])
	if _, err := s.ctl.Write(buf[:]); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- keep(cfg, s.ctl) }()
	f.ctl.Close()
	select {
	case err := <-done:
		if !errors.Is(err, errIBSimGone) {
			t.Errorf("keep = %v, want errIBSimGone", err)
		}
	case <-time.After(3 * keeperPoll):
		t.Fatal("the keeper still waits for an ibsim that has gone")
	}
}

// TestDialSeesIBSimDie: an attach whose ibsim dies before it answers
// fails as soon as ibsim's socket is gone, not after the whole timeout.
func TestDialSeesIBSimDie(t *testing.T) {
	f := newFakeSim(t)
	f.mute.Store(true)
	cfg := f.config()
	cfg.Timeout = 10 * time.Second
	time.AfterFunc(50*time.Millisecond, func() { f.ctl.Close() })
	start := time.Now()
	_, err := Dial(context.Background(), cfg)
	if !errors.Is(err, mad.ErrGone) {
		t.Fatalf("Dial = %v, want mad.ErrGone", err)
	}
	if d := time.Since(start); d > 2*alivePoll+time.Second {
		t.Errorf("Dial failed after %v, want within about %v", d, alivePoll)
	}
}
