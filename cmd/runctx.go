package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// A tool runs under one context that ends for one of two causes: SIGINT or
// SIGTERM (an *InterruptedError once the tool returns), or the MAD
// transport failing for good (the simulator gone, the device removed).
// The second ends every query of a fabric-wide tool at once, so the tool
// reports the one cause instead of one failed query per node.

// signalCause is the cause of a run context a signal ended.
type signalCause struct{ sig os.Signal }

func (s *signalCause) Error() string { return "received " + s.sig.String() }

// goneKey is the context key of the func that ends a run because its
// transport has failed for good.
type goneKey struct{}

// runContext returns the context a tool runs under and what releases it.
func runContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(&signalCause{sig: s})
		case <-done:
		}
	}()
	gone := func(err error) { cancel(&transportGoneError{Err: err}) }
	return context.WithValue(ctx, goneKey{}, gone), func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

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

// withCause turns what a tool returned into what it should report, given
// why its run context ended: after a signal, an *InterruptedError; after
// the transport failed, that failure (even where the tool, seeing its
// context end, returned nil or only "context canceled").
func withCause(ctx context.Context, err error) error {
	switch c := context.Cause(ctx).(type) {
	case *signalCause:
		// Even a tool that finished reports the signal: a script that
		// was interrupted learns so from the exit code, as from the C
		// tools the signal ends.
		return &InterruptedError{Err: err, Signal: c.sig}
	case *transportGoneError:
		switch {
		case err == nil, errors.Is(err, context.Canceled):
			return c.Err
		case errors.Is(err, c.Err):
			return err // the failure itself, with what the tool was doing
		}
		return fmt.Errorf("%w (and %v)", c.Err, err)
	}
	return err
}
