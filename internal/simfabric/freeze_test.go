package simfabric

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestIntegrationFreeze(t *testing.T) {
	f := StartForTest(t, Options{NetFile: smallNet})
	ctx := ctxFor(t, time.Minute)
	if f.Frozen() {
		t.Fatal("a fresh fabric is frozen")
	}
	if err := f.Freeze(); err != nil {
		t.Fatal(err)
	}
	if !f.Frozen() {
		t.Fatal("not frozen after Freeze")
	}
	if err := f.Freeze(); err != nil {
		t.Errorf("Freeze of a frozen fabric: %v", err)
	}
	t0 := time.Now()
	if _, err := f.Console(ctx, "Attached"); !errors.Is(err, ErrFrozen) {
		t.Errorf("Console while frozen: got %v, want ErrFrozen", err)
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("Console while frozen took %v to fail", d)
	}
	if err := f.Thaw(); err != nil {
		t.Fatal(err)
	}
	if f.Frozen() {
		t.Fatal("frozen after Thaw")
	}
	if _, err := f.Console(ctx, "Attached"); err != nil {
		t.Errorf("Console after Thaw: %v", err)
	}

	// A test that freezes and fails half way leaves the fabric thawed.
	t.Run("fails while frozen", func(t *testing.T) {
		f.FreezeForTest(t)
		if !f.Frozen() {
			t.Error("not frozen after FreezeForTest")
		}
		t.SkipNow() // ends the test as FailNow does, without failing it
	})
	if f.Frozen() {
		t.Fatal("still frozen after the test that froze it ended")
	}

	// Stop works on a frozen fabric.
	if err := f.Freeze(); err != nil {
		t.Fatal(err)
	}
	ibsim, opensm := f.PIDs()
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{ibsim, opensm} {
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("pid %d still there after Stop of a frozen fabric (%v)", pid, err)
		}
	}
	if err := f.Thaw(); err != nil {
		t.Errorf("Thaw of a stopped fabric: %v", err)
	}
}

func TestIntegrationKillSimulator(t *testing.T) {
	f := StartForTest(t, Options{NetFile: smallNet})
	ibsim, opensm := f.PIDs()
	if err := f.KillSimulator(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{ibsim, opensm} {
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("pid %d still there after KillSimulator (%v)", pid, err)
		}
	}
	if _, err := f.Console(ctxFor(t, 10*time.Second), "Attached"); err == nil {
		t.Error("Console after KillSimulator: no error")
	}
	if err := f.KillSimulator(); err == nil {
		t.Error("a second KillSimulator: no error")
	}
	if err := f.Stop(); err != nil {
		t.Errorf("Stop after KillSimulator: %v", err)
	}
}

func TestSignalEvents(t *testing.T) {
	evs := SignalEvents(syscall.SIGINT, 5, 0, 20*time.Millisecond)
	var got []time.Duration
	for _, e := range evs {
		if e.Signal != syscall.SIGINT || e.String() != "interrupt" {
			t.Errorf("event %+v, want SIGINT", e)
		}
		got = append(got, e.At)
	}
	want := []time.Duration{0, 5 * time.Millisecond, 10 * time.Millisecond, 15 * time.Millisecond, 20 * time.Millisecond}
	if !slicesEqual(got, want) {
		t.Errorf("times %v, want %v", got, want)
	}
	if one := SignalEvents(syscall.SIGTERM, 1, 7*time.Millisecond, time.Second); len(one) != 1 || one[0].At != 7*time.Millisecond {
		t.Errorf("one event: %+v", one)
	}
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// standIn writes a shell script to run in place of ibtool.
func standIn(t *testing.T, body string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "stand-in")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestIntegrationRunTimed(t *testing.T) {
	f := StartForTest(t, Options{NetFile: smallNet})
	ctx := ctxFor(t, time.Minute)

	t.Run("SIGTERM handled", func(t *testing.T) {
		bin := standIn(t, "trap 'echo term; exit 7' TERM; echo start; while :; do sleep 0.01; done")
		r, err := f.RunIbtoolTimed(ctx, bin, "Hca1", []Event{{At: 100 * time.Millisecond, Signal: syscall.SIGTERM}}, "ibstat")
		if err != nil {
			t.Fatal(err)
		}
		if r.Exit != 7 || r.Signal != 0 || string(r.Stdout) != "start\nterm\n" {
			t.Errorf("exit %d, signal %v, stdout %q; want exit 7 after printing start and term", r.Exit, r.Signal, r.Stdout)
		}
		sent, ok := r.FirstSignal()
		if !ok || sent < 100*time.Millisecond || sent > 150*time.Millisecond {
			t.Errorf("SIGTERM sent at %v (%v), want just after 100ms", sent, ok)
		}
		if a := r.AfterSignal(); a < 0 || a > time.Second {
			t.Errorf("ended %v after the signal", a)
		}
		t.Logf("SIGTERM sent at %v, process ended %v later", sent, r.AfterSignal())
	})

	t.Run("killed by a signal", func(t *testing.T) {
		bin := standIn(t, "exec sleep 10")
		r, err := f.RunIbtoolTimed(ctx, bin, "Hca1", []Event{{At: 50 * time.Millisecond, Signal: syscall.SIGKILL}}, "ibstat")
		if err != nil {
			t.Fatal(err)
		}
		if r.Exit != -1 || r.Signal != syscall.SIGKILL {
			t.Errorf("exit %d, signal %v; want killed by SIGKILL", r.Exit, r.Signal)
		}
		if r.Ended < 50*time.Millisecond || r.Ended > 5*time.Second {
			t.Errorf("ended at %v, want soon after 50ms", r.Ended)
		}
	})

	t.Run("100 SIGINTs over 20 ms", func(t *testing.T) {
		// From 20 ms on: the shell ignores SIGINT once it has run the trap.
		bin := standIn(t, "trap '' INT; sleep 0.2")
		evs := SignalEvents(syscall.SIGINT, 100, 20*time.Millisecond, 40*time.Millisecond)
		r, err := f.RunIbtoolTimed(ctx, bin, "Hca1", evs, "ibstat")
		if err != nil {
			t.Fatal(err)
		}
		if r.Signal == syscall.SIGINT {
			t.Skipf("the shell took more than 20 ms to start (a loaded machine): killed by the SIGINT at %v", r.Events[0].Done)
		}
		if r.Sent() != 100 || r.Exit != 0 {
			t.Errorf("%d signals sent, exit %d; want 100 and 0", r.Sent(), r.Exit)
		}
		var late time.Duration
		for i, e := range r.Events {
			if e.Done < e.At {
				t.Errorf("event %d at %v, before its time %v", i, e.Done, e.At)
			}
			late = max(late, e.Done-e.At)
		}
		if late > 10*time.Millisecond {
			t.Errorf("an event came %v late", late)
		}
		t.Logf("100 SIGINTs: at most %v late; the last at %v", late, r.Events[99].Done)
	})

	t.Run("signals after the end are skipped", func(t *testing.T) {
		bin := standIn(t, "exit 3")
		r, err := f.RunIbtoolTimed(ctx, bin, "Hca1", []Event{{At: 300 * time.Millisecond, Signal: syscall.SIGTERM}}, "ibstat")
		if err != nil {
			t.Fatal(err)
		}
		if r.Exit != 3 || !r.Events[0].Skipped || r.Sent() != 0 || r.AfterSignal() != -1 {
			t.Errorf("exit %d, events %+v; want exit 3 and the signal skipped", r.Exit, r.Events)
		}
		if r.Ended > 200*time.Millisecond {
			t.Errorf("the run waited for a signal it skipped: ended at %v", r.Ended)
		}
	})

	t.Run("SIGTERM during a freeze", func(t *testing.T) {
		bin := standIn(t, "trap 'exit 9' TERM; while :; do sleep 0.01; done")
		evs := append(f.FreezeEvents(20*time.Millisecond, time.Hour), Event{At: 60 * time.Millisecond, Signal: syscall.SIGTERM})
		t0 := time.Now()
		r, err := f.RunIbtoolTimed(ctx, bin, "Hca1", evs, "ibstat")
		if err != nil {
			t.Fatal(err)
		}
		if r.Exit != 9 {
			t.Errorf("exit %d, signal %v; want 9", r.Exit, r.Signal)
		}
		if f.Frozen() {
			t.Error("still frozen after the run")
		}
		if d := time.Since(t0); d > 10*time.Second {
			t.Errorf("the run took %v: the thaw waited for its time", d)
		}
		var names []string
		for _, e := range r.Events {
			names = append(names, e.String())
		}
		if got := strings.Join(names, ","); got != "freeze,terminated,thaw" {
			t.Errorf("events %s, want freeze,terminated,thaw", got)
		}
	})

	t.Run("a freeze left is thawed", func(t *testing.T) {
		bin := standIn(t, "sleep 0.1")
		r, err := f.RunIbtoolTimed(ctx, bin, "Hca1", []Event{{At: 10 * time.Millisecond, Do: f.Freeze}}, "ibstat")
		if err != nil || r.Events[0].Err != nil {
			t.Fatal(err, r.Events[0].Err)
		}
		if f.Frozen() {
			t.Error("still frozen after the run")
		}
	})
}

// TestIntegrationDeadClientAcrossThaw ends a tool that attached while
// ibsim was frozen before the thaw. Its CONNECT waits in ibsim's control
// socket, and ibsim 0.10 exits when it cannot connect back to the client:
// the runners must keep the client's socket name until ibsim took it.
func TestIntegrationDeadClientAcrossThaw(t *testing.T) {
	f := StartForTest(t, Options{NetFile: smallNet})
	ctx := ctxFor(t, time.Minute)
	attached := func() int {
		t.Helper()
		reply, err := f.Console(ctx, "Attached")
		if err != nil {
			t.Fatalf("after the thaw: %v", err)
		}
		return strings.Count(reply, "Client ")
	}
	t.Run("frozen by the events", func(t *testing.T) {
		evs := append(f.FreezeEvents(0, time.Hour), Event{At: 100 * time.Millisecond, Signal: syscall.SIGTERM})
		r, err := f.RunReferenceTimed(ctx, "Hca1", evs, "ibstat")
		if err != nil {
			t.Fatal(err)
		}
		if r.Signal != syscall.SIGTERM {
			t.Errorf("ibstat: exit %d, signal %v; want killed by SIGTERM while waiting for ibsim", r.Exit, r.Signal)
		}
		if n := attached(); n != 1 {
			t.Errorf("%d clients attached after the thaw, want only opensm", n)
		}
	})
	t.Run("frozen before the run", func(t *testing.T) {
		thaw := f.FreezeForTest(t)
		r, err := f.RunReferenceTimed(ctx, "Hca1", []Event{{At: 100 * time.Millisecond, Signal: syscall.SIGKILL}}, "ibstat")
		if err != nil {
			t.Fatal(err)
		}
		if !f.Frozen() || r.Signal != syscall.SIGKILL {
			t.Fatalf("frozen %v, ibstat signal %v; want still frozen and ibstat killed", f.Frozen(), r.Signal)
		}
		if err := thaw(); err != nil {
			t.Fatal(err)
		}
		if n := attached(); n != 1 {
			t.Errorf("%d clients attached after the thaw, want only opensm", n)
		}
	})
	if out := ibstatPort(t, f, "Hca1"); !strings.Contains(out, "State: Active") {
		t.Errorf("ibstat after the thaws:\n%s", out)
	}
}
