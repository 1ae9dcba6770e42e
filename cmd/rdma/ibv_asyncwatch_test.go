package rdma

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func TestIbvAsyncwatchArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    string
		wantErr string
	}{
		{"default device", nil, "", ""},
		{"-d", []string{"-d", "rxe0"}, "rxe0", ""},
		{"--ib-dev", []string{"--ib-dev=mlx5_0"}, "mlx5_0", ""},
		{"no arguments", []string{"x"}, "", "expected at most 0 argument(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o *asyncwatchOptions
			err := cmdtest.ParseToolArgs(t, "ibv_asyncwatch", func(f *cmdutil.Factory) *cobra.Command {
				return newIbvAsyncwatchCmd(f, func(opts *asyncwatchOptions) error { o = opts; return nil })
			}, tt.args)
			if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
				return
			}
			if o.Device != tt.want {
				t.Errorf("device %q, want %q", o.Device, tt.want)
			}
		})
	}
}

func TestAsyncwatchLine(t *testing.T) {
	tests := []struct {
		e    verbs.AsyncEvent
		want string
	}{
		{verbs.AsyncEvent{Type: verbs.EventPortErr, Port: 1}, "  event_type IBV_EVENT_PORT_ERR (10), port 1\n"},
		{verbs.AsyncEvent{Type: verbs.EventPortActive, Port: 1}, "  event_type IBV_EVENT_PORT_ACTIVE (9), port 1\n"},
		{verbs.AsyncEvent{Type: verbs.EventGIDChange, Port: 2}, "  event_type IBV_EVENT_GID_CHANGE (18), port 2\n"},
		{verbs.AsyncEvent{Type: verbs.EventQPFatal, Port: 0}, "  event_type unexpected (1), port 0\n"},
		{verbs.AsyncEvent{Type: verbs.EventWQFatal}, "  event_type unexpected (19), port 0\n"},
	}
	for _, tt := range tests {
		if got := asyncwatchLine(tt.e); got != tt.want {
			t.Errorf("asyncwatchLine(%+v) = %q, want %q", tt.e, got, tt.want)
		}
	}
}

func TestAsyncwatchDeviceErrors(t *testing.T) {
	for _, tt := range []struct {
		dev     string
		err     error
		wantMsg string
		code    int
	}{
		{"nosuch", fmt.Errorf("nosuch: %w", verbs.ErrDeviceNotFound), "IB device nosuch not found", cmdutil.ExitUsage},
		{"", verbs.ErrNoVerbs, verbs.ErrNoVerbs.Error(), cmdutil.ExitFailure},
	} {
		o := &asyncwatchOptions{Device: tt.dev, open: func(string) (*verbs.Context, error) { return nil, tt.err }}
		err := asyncwatchRun(o)
		if err == nil || !strings.Contains(err.Error(), tt.wantMsg) || cmdutil.ExitCode(err) != tt.code {
			t.Errorf("device %q: error %v (exit %d), want %q (exit %d)", tt.dev, err, cmdutil.ExitCode(err), tt.wantMsg, tt.code)
		}
	}
}
