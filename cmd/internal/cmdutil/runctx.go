package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/sigrelay"
)

// A tool runs under one context that ends for one of two causes: SIGINT or
// SIGTERM (an *InterruptedError once the tool returns), or the MAD
// transport failing for good (the simulator gone or stopped, the device
// removed). The second ends every query of a fabric-wide tool at once, so
// the tool reports the one cause instead of one failed query per node.

// Run is one invocation of ibtool: the context its tool runs under, and
// the streams as they were, for the final message.
type Run struct {
	ctx    context.Context
	f      *Factory
	errOut io.Writer
	// settle ends the run's share of the signals caught: one caught
	// before is the context's cause, one after kills the process; Stop
	// also releases the context.
	settle func()
	// caught is closed once the process catches SIGINT and SIGTERM.
	caught <-chan struct{}
	// Stop ends the run: call it when the invocation is over.
	Stop func()
}

// NewRun starts a run for one invocation on f's streams: SIGINT and
// SIGTERM end its context from the time the process catches them
// (sigrelay).
func NewRun(f *Factory) *Run {
	ctx, cancel := context.WithCancelCause(context.Background())
	remove := sigrelay.Add(func(s os.Signal) { cancel(&signalCause{sig: s}) })
	var once sync.Once
	settle := func() { once.Do(remove) }
	gone := func(err error) { cancel(&transportGoneError{Err: err}) }
	return &Run{
		ctx:    context.WithValue(ctx, goneKey{}, gone),
		f:      f,
		errOut: f.IO.ErrOut,
		settle: settle,
		caught: sigrelay.Start(),
		Stop: func() {
			settle()
			cancel(nil)
		},
	}
}

// FactoryFor returns the run's Factory for tool t, its output streams
// muted once the run ends early: after the transport failed, what the
// tool goes on to print comes from queries that failed for that one
// reason; after a signal, the C tool would have died. A tool whose normal
// end is a signal (Tool.SignalIsEnd) keeps what it prints after one.
func (r *Run) FactoryFor(t Tool) *Factory {
	f := *r.f
	f.fabric = &fabricAccess{}
	f.signalsCaught = r.caught
	f.names = &fieldNamer{w: r.f.plainOut()}
	f.IO.Out = &mutedAfterEnd{ctx: r.ctx, w: f.names, keepOnSignal: t.SignalIsEnd}
	f.IO.ErrOut = &mutedAfterEnd{ctx: r.ctx, w: r.f.IO.ErrOut, keepOnSignal: t.SignalIsEnd}
	return &f
}

// mutedAfterEnd passes writes to w until ctx ends, then drops them
// (reporting them written), except after a signal when keepOnSignal.
type mutedAfterEnd struct {
	ctx          context.Context
	w            io.Writer
	keepOnSignal bool
}

func (m *mutedAfterEnd) Write(p []byte) (int, error) {
	if m.ctx.Err() != nil {
		if _, ok := context.Cause(m.ctx).(*signalCause); !ok || !m.keepOnSignal {
			return len(p), nil
		}
	}
	return m.w.Write(p)
}

// signalCause is the cause of a run context a signal ended.
type signalCause struct{ sig os.Signal }

func (s *signalCause) Error() string { return "received " + s.sig.String() }

// goneKey is the context key of the func that ends a run because its
// transport has failed for good.
type goneKey struct{}

// transportGone returns what ends ctx's run because its transport has
// failed for good, or nil when ctx is not a run context (tests).
func transportGone(ctx context.Context) func(error) {
	f, _ := ctx.Value(goneKey{}).(func(error))
	return f
}

// transportGoneError is the cause of a run ended by its transport.
type transportGoneError struct{ Err error }

func (e *transportGoneError) Error() string { return e.Err.Error() }

// Unwrap returns the transport's error.
func (e *transportGoneError) Unwrap() error { return e.Err }

// withCause turns what a tool returned into what it reports, given why its
// run context ended: after a signal, an *InterruptedError, even where the
// tool finished (its output was muted), unless a signal is the tool's
// normal end; after the transport failed, that failure, even where the
// tool, seeing its context end, returned nil or only "context canceled".
func withCause(ctx context.Context, err error, signalIsEnd bool) error {
	switch c := context.Cause(ctx).(type) {
	case *signalCause:
		if signalIsEnd && err == nil {
			return nil
		}
		return &InterruptedError{Err: err, Signal: c.sig}
	case *transportGoneError:
		if err != nil && errors.Is(err, c.Err) {
			return err // the failure itself, with what the tool was doing
		}
		// Whatever else the tool says (context canceled, or findings
		// from queries that failed) follows from the failure.
		return c.Err
	}
	return err
}

// Execute runs c with args and turns its error into a message and exit
// code, written to the unfiltered error stream: f's streams may be muted by
// then (see Run).
func (r *Run) Execute(f *Factory, t Tool, name string, c *cobra.Command, args []string) int {
	f.SetProcs(t)
	c.SetArgs(args)
	c.SetIn(f.IO.In)
	c.SetOut(f.IO.Out)
	c.SetErr(f.IO.ErrOut)
	ran, err := c.ExecuteContextC(r.ctx)
	if f.names != nil {
		f.names.flush()
	}
	f.closeMAD()
	r.settle()
	err = withCause(r.ctx, err, t.SignalIsEnd)
	if err == nil {
		return ExitOK
	}
	verbosity := 0
	if ran != nil {
		v, _ := ran.Flags().GetCount("verbose")
		verbosity = v + extraVerbosity(ran.Flags())
		if ran != c {
			name = ran.Name()
		}
	}
	RenderError(r.errOut, name, err, verbosity)
	var usage *UsageError
	if errors.As(err, &usage) && usage.Syntax && ran != nil {
		fmt.Fprintf(r.errOut, "Run '%s --help' for usage.\n", ran.CommandPath())
	}
	return ExitCode(err)
}

// RunTool runs the tool args[0] names (as a symlink to ibtool would) with
// args[1:] under a run of its own, and returns the exit code.
func RunTool(args []string, f *Factory) int {
	t, err := Lookup(filepath.Base(args[0]))
	if err != nil {
		RenderError(f.IO.ErrOut, "ibtool", err, 0)
		return ExitCode(err)
	}
	r := NewRun(f)
	defer r.Stop()
	tf := r.FactoryFor(t)
	return r.Execute(tf, t, t.Name, ToolCommand(tf, t), args[1:])
}
