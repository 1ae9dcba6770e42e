package simfabric

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"time"
)

// Event is something a timed run does while its process runs, at a time
// after the process started: send it a signal, or call Do (a Freeze, a
// Thaw, a KillSimulator, a console command).
type Event struct {
	// At is the time after the process started.
	At time.Duration
	// Signal, when not 0, is sent to the process (not to its group).
	Signal syscall.Signal
	// Do, when not nil, is called (after the signal, if any).
	Do func() error
	// Name names the event in results; "" means the signal's name.
	Name string
}

// String returns the event's name.
func (e Event) String() string {
	switch {
	case e.Name != "":
		return e.Name
	case e.Signal != 0:
		return e.Signal.String()
	}
	return "action"
}

// SignalEvents returns n events that send sig, spread evenly from first to
// last (both included; with n 1, at first): SignalEvents(syscall.SIGINT,
// 100, 0, 20*time.Millisecond) is 100 SIGINTs over the first 20 ms.
func SignalEvents(sig syscall.Signal, n int, first, last time.Duration) []Event {
	evs := make([]Event, n)
	for i := range evs {
		at := first
		if n > 1 {
			at += (last - first) * time.Duration(i) / time.Duration(n-1)
		}
		evs[i] = Event{At: at, Signal: sig}
	}
	return evs
}

// FreezeEvents returns the events that freeze the fabric at time at and
// thaw it d later.
func (f *Fabric) FreezeEvents(at, d time.Duration) []Event {
	return []Event{
		{At: at, Do: f.Freeze, Name: "freeze"},
		{At: at + d, Do: f.Thaw, Name: "thaw"},
	}
}

// EventResult is what became of an Event.
type EventResult struct {
	Event
	// Done is when the event was carried out, after the process started;
	// 0 when it was skipped.
	Done time.Duration
	// Skipped is set for a signal whose time came after the process had
	// ended (or the run's context was done): it was not sent. A Do is
	// never skipped: once the process has ended, the Do events left run
	// at once, in order, so that a Thaw always comes.
	Skipped bool
	// Err is Do's error, or the signal's.
	Err error
}

// TimedResult is the outcome of a timed run.
type TimedResult struct {
	Stdout, Stderr []byte
	// Exit is the exit code; -1 when a signal ended the process.
	Exit int
	// Signal is the signal that ended the process; 0 when it exited.
	Signal syscall.Signal
	// Ended is the time from the process's start to its end.
	Ended time.Duration
	// Events are the run's events in the order carried out (by At).
	Events []EventResult
}

// FirstSignal returns when the first signal was sent, and false when none
// was.
func (r *TimedResult) FirstSignal() (time.Duration, bool) {
	for _, e := range r.Events {
		if e.Signal != 0 && !e.Skipped && e.Err == nil {
			return e.Done, true
		}
	}
	return 0, false
}

// AfterSignal returns how long the process took to end after the first
// signal it was sent; -1 when it was sent none.
func (r *TimedResult) AfterSignal() time.Duration {
	at, ok := r.FirstSignal()
	if !ok {
		return -1
	}
	return r.Ended - at
}

// Sent returns how many signals were sent.
func (r *TimedResult) Sent() int {
	n := 0
	for _, e := range r.Events {
		if e.Signal != 0 && !e.Skipped && e.Err == nil {
			n++
		}
	}
	return n
}

// RunIbtoolTimed runs `bin tool args...` as RunIbtool does, and carries out
// events while it runs, each at its time after the process started (when
// cmd.Start returned: the program has been executed). Signals are sent
// with a pidfd, so never to another process that took the PID; the timer
// spins for the last millisecond before each event, so an event comes
// within some tens of microseconds of its time (EventResult.Done says when
// it came). It returns once the process has ended and every Do has run. A
// fabric that the events froze and did not thaw is thawed then; a tool
// that a signal killed, or that ended during a freeze, has its socket
// names kept until ibsim took its attach, and its ibsim slot released
// (see deadclients.go). err is set only when the process could not run or ctx
// ended first (then it is killed); an exit code or a death by signal is in
// the result.
func (f *Fabric) RunIbtoolTimed(ctx context.Context, bin, simHost string, events []Event, tool string, args ...string) (*TimedResult, error) {
	return f.runTimed(ctx, f.Env(simHost), events, bin, append([]string{tool}, args...)...)
}

// RunReferenceTimed runs an infiniband-diags tool as RunReference does,
// with events as RunIbtoolTimed carries them out.
func (f *Fabric) RunReferenceTimed(ctx context.Context, simHost string, events []Event, tool string, args ...string) (*TimedResult, error) {
	path, err := lookPath(tool)
	if err != nil {
		return nil, fmt.Errorf("simfabric: reference tool: %w", err)
	}
	env, err := f.referenceEnv(simHost)
	if err != nil {
		return nil, err
	}
	return f.runTimed(ctx, env, events, path, args...)
}

// runTimed runs bin as run does, carrying out events.
func (f *Fabric) runTimed(ctx context.Context, env []string, events []Event, bin string, args ...string) (_ *TimedResult, err error) {
	dir, release, err := f.claimRun(ctx, bin)
	if err != nil {
		return nil, err
	}
	defer release()
	// Files, not pipes: Wait then returns when the process ends, not when
	// a copying goroutine has drained a pipe.
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		return nil, err
	}
	defer stderr.Close()

	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	wasFrozen := f.Frozen()

	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = childEnv(env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = procAttr(false)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("simfabric: running %s: %w", bin, err)
	}
	start := time.Now()
	ended := make(chan struct{})
	res := &TimedResult{Exit: -1}
	settle := false
	var signaled atomic.Bool
	go func() {
		cmd.Wait()
		res.Ended = time.Since(start)
		// Before any thaw the events have left. A tool that a signal
		// made give up its attach half way exits as it likes.
		settle = f.toolEnded(cmd.Process.Pid, killed(cmd.ProcessState) || signaled.Load())
		close(ended)
	}()
	res.Events = runEvents(ctx, cmd.Process, start, evs, ended, &signaled)

	select {
	case <-ended:
	case <-ctx.Done():
		killGroup(cmd)
		<-ended
		err = fmt.Errorf("simfabric: running %s: %w", bin, ctx.Err())
	}
	if !wasFrozen && f.Frozen() {
		err = errors.Join(err, f.Thaw())
	}
	st := cmd.ProcessState
	res.Exit = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal()
	}
	if settle && !f.Frozen() {
		err = errors.Join(err, f.settleClients(context.WithoutCancel(ctx)))
	}
	var rerr error
	res.Stdout, rerr = os.ReadFile(stdout.Name())
	err = errors.Join(err, rerr)
	res.Stderr, rerr = os.ReadFile(stderr.Name())
	return res, errors.Join(err, rerr)
}

// runEvents carries out evs (sorted by At) on p, which started at start,
// until ended is closed or ctx is done; then it runs the Do events left at
// once and skips the signals. It runs on a thread of its own, spinning
// for the last spinWindow before each event. It sets signaled before it
// sends the first signal.
func runEvents(ctx context.Context, p *os.Process, start time.Time, evs []Event, ended <-chan struct{}, signaled *atomic.Bool) []EventResult {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	res := make([]EventResult, len(evs))
	over := false
	for i, ev := range evs {
		res[i].Event = ev
		if !over {
			over = waitUntil(ctx, start.Add(ev.At), ended)
		}
		if ev.Signal != 0 {
			if !over {
				signaled.Store(true)
			}
			if over {
				res[i].Skipped = true
			} else if err := p.Signal(ev.Signal); errors.Is(err, os.ErrProcessDone) {
				res[i].Skipped = true
			} else {
				res[i].Err = err
			}
		}
		if ev.Do != nil {
			res[i].Err = errors.Join(res[i].Err, ev.Do())
		}
		if !res[i].Skipped {
			res[i].Done = time.Since(start)
		}
	}
	return res
}

// spinWindow is how long before an event the timer stops sleeping and
// spins: Go's timers wake late, by up to a millisecond when the machine is
// loaded.
const spinWindow = time.Millisecond

// waitUntil waits until t, and reports true when ended was closed or ctx
// done first.
func waitUntil(ctx context.Context, t time.Time, ended <-chan struct{}) bool {
	for {
		d := time.Until(t)
		if d > spinWindow {
			timer := time.NewTimer(d - spinWindow)
			select {
			case <-ended:
				timer.Stop()
				return true
			case <-ctx.Done():
				timer.Stop()
				return true
			case <-timer.C:
			}
			continue
		}
		select {
		case <-ended:
			return true
		case <-ctx.Done():
			return true
		default:
		}
		if d <= 0 {
			return false
		}
	}
}
