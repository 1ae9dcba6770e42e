package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/mad"
)

// runTool runs body as tool t's command in a run of its own, as Main
// does, and returns the exit code and what reached the streams.
func runTool(t *testing.T, tool Tool, body func(ctx context.Context, out, errOut io.Writer) error) (int, string, string) {
	t.Helper()
	f, out, errOut := NewTestFactory(nil)
	r := NewRun(f)
	defer r.Stop()
	<-r.caught // the bodies signal the process
	tf := r.FactoryFor(tool)
	c := &cobra.Command{Use: "t", SilenceErrors: true, SilenceUsage: true,
		RunE: func(c *cobra.Command, _ []string) error { return body(c.Context(), tf.IO.Out, tf.IO.ErrOut) }}
	code := r.Execute(tf, tool, "t", c, nil)
	return code, out.String(), errOut.String()
}

// waitEnd waits for ctx's end, for at most 5 s.
func waitEnd(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the run's context did not end")
	}
}

func TestRunEnds(t *testing.T) {
	gone := fmt.Errorf("sending SubnGet(NodeInfo) to DR path 0,1: %w", mad.ErrGone)
	tests := []struct {
		name             string
		tool             Tool
		end              func(ctx context.Context) // ends the run
		ret              error                     // what the tool returns afterwards
		wantCode         int
		wantOut, wantErr string
	}{
		{"transport gone", Tool{}, func(ctx context.Context) { transportGone(ctx)(gone) }, context.Canceled,
			ExitFailure, "before\n", "t: " + gone.Error() + "\n"},
		{"transport gone, findings after", Tool{}, func(ctx context.Context) { transportGone(ctx)(gone) },
			&StatusError{Code: 7, Summary: "1,618 problems found"}, ExitFailure, "before\n", "t: " + gone.Error() + "\n"},
		{"transport gone, the failure returned", Tool{}, func(ctx context.Context) { transportGone(ctx)(gone) },
			WithContext(gone, "discovery"), ExitFailure, "before\n", "t: discovery: " + gone.Error() + "\n"},
		{"SIGTERM", Tool{}, func(context.Context) { syscall.Kill(syscall.Getpid(), syscall.SIGTERM) }, nil,
			143, "before\n", "t: interrupted by SIGTERM\n"},
		{"SIGINT", Tool{}, func(context.Context) { syscall.Kill(syscall.Getpid(), syscall.SIGINT) }, context.Canceled,
			ExitInterrupted, "before\n", "t: interrupted by SIGINT\n"},
		{"SIGINT ends ibping", Tool{SignalIsEnd: true}, func(context.Context) { syscall.Kill(syscall.Getpid(), syscall.SIGINT) }, nil,
			ExitOK, "before\nafter\n", "warning after\n"},
		{"transport gone under ibping", Tool{SignalIsEnd: true}, func(ctx context.Context) { transportGone(ctx)(gone) }, nil,
			ExitFailure, "before\n", "t: " + gone.Error() + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runTool(t, tt.tool, func(ctx context.Context, out, errOut io.Writer) error {
				fmt.Fprint(out, "before\n")
				tt.end(ctx)
				waitEnd(t, ctx)
				fmt.Fprint(out, "after\n")
				fmt.Fprint(errOut, "warning after\n")
				return tt.ret
			})
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
			if diff := cmp.Diff(tt.wantOut, out); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantErr, errOut); diff != "" {
				t.Errorf("unexpected error output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInterruptedErrorRendering(t *testing.T) {
	tests := []struct {
		err       *InterruptedError
		verbosity int
		wantCode  int
		want      string
	}{
		{&InterruptedError{Signal: syscall.SIGINT}, 0, 130, "x: interrupted by SIGINT\n"},
		{&InterruptedError{Signal: syscall.SIGTERM, Err: errors.New("3 reads failed")}, 0, 143, "x: interrupted by SIGTERM\n"},
		{&InterruptedError{Signal: syscall.SIGTERM, Err: errors.New("3 reads failed")}, 1, 143,
			"x: interrupted by SIGTERM\n  the tool returned: 3 reads failed\n"},
		{&InterruptedError{Err: context.Canceled}, 1, 130, "x: interrupted\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		RenderError(&b, "x", tt.err, tt.verbosity)
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("unexpected rendering of %#v (-want +got):\n%s", tt.err, diff)
		}
		if code := ExitCode(fmt.Errorf("wrapped: %w", tt.err)); code != tt.wantCode {
			t.Errorf("exit code %d, want %d", code, tt.wantCode)
		}
	}
}
