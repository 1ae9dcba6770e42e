package sigrelay

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// caught collects what a run's end is called with.
type caught chan os.Signal

func (c caught) end(s os.Signal) { c <- s }

// next returns the next signal c took, or fails after 5 s.
func (c caught) next(t *testing.T) os.Signal {
	t.Helper()
	select {
	case s := <-c:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("no signal reached the run")
		return nil
	}
}

// TestRelay: every run in progress gets each signal; one removed gets
// none after.
func TestRelay(t *testing.T) {
	<-Start()
	a, b := make(caught, 4), make(caught, 4)
	removeA := Add(a.end)
	removeB := Add(b.end)
	defer removeB()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		got := []os.Signal{a.next(t), b.next(t)}
		if diff := cmp.Diff([]os.Signal{sig, sig}, got); diff != "" {
			t.Errorf("runs took (-want +got):\n%s", diff)
		}
	}
	removeA()
	syscall.Kill(syscall.Getpid(), syscall.SIGINT)
	if s := b.next(t); s != syscall.SIGINT {
		t.Errorf("the run left took %v, want SIGINT", s)
	}
	select {
	case s := <-a:
		t.Errorf("a removed run took %v", s)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestNoRunKills: a signal caught when no run is in progress kills the
// process as it would have uncaught (in a child: this test binary again).
func TestNoRunKills(t *testing.T) {
	if os.Getenv("SIGRELAY_CHILD") == "1" {
		<-Start()
		Add(func(os.Signal) {})() // one run, over
		syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
		time.Sleep(5 * time.Second)
		os.Exit(0) // not killed: the parent fails
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoRunKills$")
	cmd.Env = append(os.Environ(), "SIGRELAY_CHILD=1")
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child: %v, want death by SIGTERM", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("child ended %v, want death by SIGTERM", ee)
	}
}

// TestExit: after a run took a signal, Exit with the shell's status for it
// kills the process with the signal itself; with another status it exits
// with the status. A signal the process was started with ignored is not
// caught: it reaches no run and kills nothing.
func TestExit(t *testing.T) {
	if s := os.Getenv("SIGRELAY_EXIT"); s != "" {
		<-Start()
		got := make(caught, 1)
		remove := Add(got.end)
		syscall.Kill(syscall.Getpid(), syscall.SIGINT)
		if s == "ignored" {
			select {
			case <-got:
				os.Exit(4) // caught: the parent fails
			case <-time.After(200 * time.Millisecond):
				os.Exit(0)
			}
		}
		got.next(t)
		remove()
		code := 130
		if s == "3" {
			code = 3
		}
		Exit(code)
	}
	tests := []struct {
		name    string
		env     string
		ignored bool // SIGINT ignored when the child starts
		signal  syscall.Signal
		status  int
	}{
		{"130 after SIGINT: death by SIGINT", "130", false, syscall.SIGINT, 0},
		{"3 after SIGINT: exit 3", "3", false, 0, 3},
		{"SIGINT ignored at start: not caught, not killed", "ignored", true, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestExit$")
			cmd.Env = append(os.Environ(), "SIGRELAY_EXIT="+tt.env)
			if tt.ignored {
				// Ignored here, SIGINT is ignored in the child from its
				// start, as in a command a script runs with &.
				signal.Ignore(syscall.SIGINT)
				defer signal.Reset(syscall.SIGINT)
			}
			err := cmd.Run()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if tt.signal != 0 {
				if !ws.Signaled() || ws.Signal() != tt.signal {
					t.Errorf("child ended %v, want death by %v", err, tt.signal)
				}
			} else if ws.Signaled() || ws.ExitStatus() != tt.status {
				t.Errorf("child ended %v, want exit status %d", err, tt.status)
			}
		})
	}
}
