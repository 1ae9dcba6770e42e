package verbs

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWaitPortDown(t *testing.T) {
	down := func(port int, e EventType) error { return &PortDownError{Device: "rxe0", Port: port, Event: e} }
	for _, tt := range []struct {
		name   string
		events []AsyncEvent
		port   int
		fail   error
		want   error
	}{
		{"port error", []AsyncEvent{{EventPortErr, 1}}, 1, nil, down(1, EventPortErr)},
		{"after other events", []AsyncEvent{{EventLIDChange, 1}, {EventQPFatal, 0}, {EventPortActive, 1}, {EventPortErr, 2}}, 2, nil, down(2, EventPortErr)},
		{"another port's error passed over", []AsyncEvent{{EventPortErr, 2}, {EventGIDChange, 1}}, 1, nil, nil},
		{"device fatal", []AsyncEvent{{EventPortActive, 1}, {EventDeviceFatal, 0}}, 1, nil, down(1, EventDeviceFatal)},
		{"no event", nil, 1, nil, nil},
		{"event unreadable", []AsyncEvent{{EventPortErr, 1}}, 1, syscall.EIO, &VerbError{Verb: "ibv_get_async_event", Object: "rxe0", Err: syscall.EIO}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.f.asyncEvents = tt.events
			if tt.fail != nil {
				r.f.fail["getAsyncEvent"] = tt.fail
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			got := r.ctx.WaitPortDown(ctx, tt.port)
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b error) bool { return a.Error() == b.Error() })); diff != "" {
				t.Errorf("unexpected WaitPortDown (-want +got):\n%s", diff)
			}
			var pd *PortDownError
			if tt.want != nil && errors.As(tt.want, &pd) != errors.As(got, &pd) {
				t.Errorf("WaitPortDown = %T, want a *PortDownError", got)
			}
		})
	}
}

func TestPortDownErrorText(t *testing.T) {
	for _, tt := range []struct {
		e    PortDownError
		want string
	}{
		{PortDownError{"rxecm0", 1, EventPortErr}, "port 1 of rxecm0 went down (IBV_EVENT_PORT_ERR)"},
		{PortDownError{"mlx5_0", 2, EventDeviceFatal}, "device mlx5_0 failed (IBV_EVENT_DEVICE_FATAL)"},
	} {
		if diff := cmp.Diff(tt.want, tt.e.Error()); diff != "" {
			t.Errorf("unexpected text (-want +got):\n%s", diff)
		}
	}
}
