package rdma

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func TestIbvAsyncwatchArgs(t *testing.T) {
	tests := []argsCase[asyncwatchOptions]{
		{"default device", nil, asyncwatchOptions{}, ""},
		{"-d", []string{"-d", "rxe0"}, asyncwatchOptions{Device: "rxe0"}, ""},
		{"--ib-dev", []string{"--ib-dev=mlx5_0"}, asyncwatchOptions{Device: "mlx5_0"}, ""},
		{"no arguments", []string{"x"}, asyncwatchOptions{}, "expected at most 0 argument(s)"},
	}
	testArgs(t, "ibv_asyncwatch", newIbvAsyncwatchCmd, tests, cmpopts.IgnoreUnexported(asyncwatchOptions{}), cmpopts.IgnoreFields(asyncwatchOptions{}, "IO"))
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
