package simfabric

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ErrFrozen is wrapped by the errors of console commands (and so of
// Dump, WaitActive and the fault helpers) sent while ibsim is frozen.
var ErrFrozen = errors.New("ibsim is frozen")

// Freeze stops ibsim with SIGSTOP, as a simulator that hangs: what a client
// sends waits in ibsim's sockets until Thaw, and console commands fail at
// once with ErrFrozen. opensm runs on. It returns once the kernel reports
// ibsim stopped; on a frozen fabric it does nothing.
//
// Only freeze a fabric of your own (StartForTest), never a shared one, and
// make sure it is thawed however the test ends: FreezeForTest does both.
// Stop works on a frozen fabric.
func (f *Fabric) Freeze() error {
	if f.ibsim.PID() == 0 {
		return errors.New("simfabric: freezing: ibsim was never started")
	}
	if err := f.ibsim.exited(); err != nil {
		return fmt.Errorf("simfabric: freezing: %w", err)
	}
	if err := syscall.Kill(f.ibsim.pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("simfabric: freezing ibsim (pid %d): %w", f.ibsim.pid, err)
	}
	return f.ibsim.waitStopped(true)
}

// Thaw resumes a frozen ibsim with SIGCONT and returns once it runs again.
// On a fabric that is not frozen, or whose ibsim is gone (a stopped
// fabric), it does nothing.
//
// A runner's tool that attached while ibsim was frozen and ended before
// the thaw left its CONNECT queued (see deadclients.go): Thaw then lets
// ibsim take it before it returns, and frees that client's slot.
func (f *Fabric) Thaw() error {
	if f.ibsim.PID() == 0 || f.ibsim.exited() != nil {
		return nil
	}
	if err := syscall.Kill(f.ibsim.pid, syscall.SIGCONT); err != nil {
		return fmt.Errorf("simfabric: thawing ibsim (pid %d): %w", f.ibsim.pid, err)
	}
	if err := f.ibsim.waitStopped(false); err != nil {
		return err
	}
	if !f.holding() {
		return nil
	}
	return f.settleClients(context.Background())
}

// Frozen reports whether ibsim is stopped, by this process or any other
// (`simfab freeze`).
func (f *Fabric) Frozen() bool {
	s, _ := f.ibsim.state()
	return s == 'T'
}

// FreezeForTest freezes the fabric and registers a clean-up that thaws it
// when tb's test ends, however it ends (a failure, a FailNow in the
// middle), so that a failing test never leaves ibsim stopped. It returns
// the thaw, for a test that thaws earlier; calling it again does nothing.
// It fails tb when ibsim cannot be frozen.
func (f *Fabric) FreezeForTest(tb testing.TB) (thaw func() error) {
	tb.Helper()
	tb.Cleanup(func() {
		if err := f.Thaw(); err != nil {
			tb.Errorf("thawing the fabric at the end of the test: %v", err)
		}
	})
	if err := f.Freeze(); err != nil {
		tb.Fatal(err)
	}
	return f.Thaw
}

// KillSimulator kills ibsim with SIGKILL, as a simulator that crashes: a
// client's sends to it fail (ECONNREFUSED) and nothing more comes to it.
// opensm is killed after it, since a subnet manager without its simulator
// has nothing to do but may spin. The fabric is then good for nothing but
// Stop. It returns once ibsim is gone.
func (f *Fabric) KillSimulator() error {
	if f.ibsim.PID() == 0 {
		return errors.New("simfabric: killing ibsim: it was never started")
	}
	if err := f.ibsim.exited(); err != nil {
		return fmt.Errorf("simfabric: killing ibsim: %w", err)
	}
	if err := f.ibsim.kill(); err != nil {
		return fmt.Errorf("simfabric: killing ibsim: %w", err)
	}
	if err := f.opensm.kill(); err != nil {
		return fmt.Errorf("simfabric: killing opensm after ibsim: %w", err)
	}
	return nil
}

// state returns the process state letter of /proc/PID/stat: R, S, D, T
// (stopped), Z, ...
func (p *proc) state() (byte, error) {
	if p == nil || p.pid == 0 {
		return 0, errors.New("no process")
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return 0, err
	}
	// The state follows the command name, which is in parentheses and
	// may hold anything, so look after the last ')'.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 || i+2 >= len(stat) {
		return 0, fmt.Errorf("/proc/%d/stat: no state", p.pid)
	}
	return stat[i+2], nil
}

// stopTimeout bounds how long Freeze and Thaw wait for the kernel to stop
// or resume ibsim, which takes microseconds unless the machine is loaded.
const stopTimeout = 5 * time.Second

// waitStopped waits until the process is stopped (or, with stopped false,
// no longer stopped).
func (p *proc) waitStopped(stopped bool) error {
	deadline := time.Now().Add(stopTimeout)
	pause := 50 * time.Microsecond
	for {
		s, err := p.state()
		if err != nil {
			return fmt.Errorf("simfabric: %s (pid %d): %w", p.name, p.pid, err)
		}
		if (s == 'T') == stopped {
			return nil
		}
		if s == 'Z' {
			return fmt.Errorf("simfabric: %s (pid %d) exited", p.name, p.pid)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("simfabric: %s (pid %d) still in state %c after %v", p.name, p.pid, s, stopTimeout)
		}
		time.Sleep(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
}
