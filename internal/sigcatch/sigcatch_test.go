package sigcatch

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// raise sends sig to the calling thread, which runs the handler before
// tgkill returns (Go's threads have signals unblocked); kill would send it
// to the main thread, to be handled whenever that runs.
func raise(t *testing.T, sig syscall.Signal) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), sig); err != nil {
		t.Fatal(err)
	}
}

// received returns what c holds within wait, in order.
func received(c chan os.Signal, wait time.Duration) []os.Signal {
	var got []os.Signal
	timeout := time.After(wait)
	for {
		select {
		case s := <-c:
			got = append(got, s)
		case <-timeout:
			return got
		}
	}
}

// SIGUSR1 and SIGUSR2 are safe to raise: without a handler of
// os/signal's, the runtime ignores them.
func TestNotify(t *testing.T) {
	tests := []struct {
		name  string
		catch []os.Signal
		raise []syscall.Signal
		want  []os.Signal
	}{
		{"one", []os.Signal{syscall.SIGUSR1}, []syscall.Signal{syscall.SIGUSR1}, []os.Signal{syscall.SIGUSR1}},
		{"another not asked for", []os.Signal{syscall.SIGUSR1}, []syscall.Signal{syscall.SIGUSR2}, nil},
		{"two", []os.Signal{syscall.SIGUSR1, syscall.SIGUSR2}, []syscall.Signal{syscall.SIGUSR2}, []os.Signal{syscall.SIGUSR2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := make(chan os.Signal, 4)
			Notify(c, tt.catch...)
			defer Stop(c)
			for _, s := range tt.raise {
				raise(t, s)
			}
			if diff := cmp.Diff(tt.want, received(c, 200*time.Millisecond)); diff != "" {
				t.Errorf("unexpected signals (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEveryChannelGetsIt(t *testing.T) {
	a, b := make(chan os.Signal, 1), make(chan os.Signal, 1)
	Notify(a, syscall.SIGUSR1)
	Notify(b, syscall.SIGUSR1, syscall.SIGUSR2)
	defer Stop(b)
	raise(t, syscall.SIGUSR1)
	for name, c := range map[string]chan os.Signal{"a": a, "b": b} {
		if diff := cmp.Diff([]os.Signal{syscall.SIGUSR1}, received(c, 200*time.Millisecond)); diff != "" {
			t.Errorf("unexpected signals on %s (-want +got):\n%s", name, diff)
		}
	}
	// b still holds SIGUSR1's handler after a lets go.
	Stop(a)
	raise(t, syscall.SIGUSR1)
	if diff := cmp.Diff([]os.Signal{syscall.SIGUSR1}, received(b, 200*time.Millisecond)); diff != "" {
		t.Errorf("unexpected signals on b after a stopped (-want +got):\n%s", diff)
	}
}

// A signal caught just before Stop is on the channel when Stop returns,
// whether or not the reader got to it.
func TestStopDelivers(t *testing.T) {
	for range 20 {
		c := make(chan os.Signal, 1)
		Notify(c, syscall.SIGUSR1)
		raise(t, syscall.SIGUSR1)
		Stop(c)
		select {
		case s := <-c:
			if s != syscall.SIGUSR1 {
				t.Fatalf("got %v, want SIGUSR1", s)
			}
		default:
			t.Fatal("a signal caught before Stop is not on the channel")
		}
	}
}

// After Stop the runtime's handler is back: os/signal gets the signal,
// and the stopped channel does not.
func TestStopRestores(t *testing.T) {
	c := make(chan os.Signal, 1)
	Notify(c, syscall.SIGUSR2)
	Stop(c)
	g := make(chan os.Signal, 1)
	signal.Notify(g, syscall.SIGUSR2)
	defer signal.Stop(g)
	raise(t, syscall.SIGUSR2)
	if diff := cmp.Diff([]os.Signal{syscall.SIGUSR2}, received(g, 200*time.Millisecond)); diff != "" {
		t.Errorf("unexpected signals on os/signal's channel (-want +got):\n%s", diff)
	}
	if got := received(c, 50*time.Millisecond); got != nil {
		t.Errorf("the stopped channel got %v", got)
	}
}

type notASignal struct{}

func (notASignal) String() string { return "not a signal" }
func (notASignal) Signal()        {}

func TestNotifyMisuse(t *testing.T) {
	tests := []struct {
		name string
		c    chan os.Signal
		sig  os.Signal
	}{
		{"nil channel", nil, syscall.SIGUSR1},
		{"not a syscall.Signal", make(chan os.Signal), notASignal{}},
		{"out of range", make(chan os.Signal), syscall.Signal(65)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("Notify did not panic")
				}
			}()
			Notify(tt.c, tt.sig)
		})
	}
}
