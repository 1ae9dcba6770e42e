package verbs

import (
	"context"
	"errors"
	"syscall"
	"testing"
)

func TestNextAsyncEvent(t *testing.T) {
	r := newRig(t)
	r.f.asyncEvents = []AsyncEvent{{Type: EventPortErr, Port: 1}, {Type: EventPortActive, Port: 1}}
	for _, want := range []AsyncEvent{{EventPortErr, 1}, {EventPortActive, 1}} {
		got, err := r.ctx.NextAsyncEvent(context.Background())
		if err != nil || got != want {
			t.Fatalf("NextAsyncEvent = %+v, %v, want %+v", got, err, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.ctx.NextAsyncEvent(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("NextAsyncEvent with no event and an ended context: %v", err)
	}
	r.f.asyncEvents = []AsyncEvent{{}}
	r.f.fail["getAsyncEvent"] = syscall.EIO
	if _, err := r.ctx.NextAsyncEvent(context.Background()); !errors.Is(err, syscall.EIO) {
		t.Errorf("NextAsyncEvent error %v, want EIO", err)
	}
	if got := r.ctx.AsyncFD(); got != 7 {
		t.Errorf("AsyncFD = %d, want 7", got)
	}
}

func TestEventType(t *testing.T) {
	for _, tt := range []struct {
		e    EventType
		name string
		port bool
	}{
		{EventPortErr, "IBV_EVENT_PORT_ERR", true}, {EventGIDChange, "IBV_EVENT_GID_CHANGE", true},
		{EventQPFatal, "IBV_EVENT_QP_FATAL", false}, {EventWQFatal, "IBV_EVENT_WQ_FATAL", false}, {99, "event type 99", false},
	} {
		if tt.e.String() != tt.name || tt.e.PortEvent() != tt.port {
			t.Errorf("%d: %q, port %v; want %q, %v", int(tt.e), tt.e.String(), tt.e.PortEvent(), tt.name, tt.port)
		}
	}
}
