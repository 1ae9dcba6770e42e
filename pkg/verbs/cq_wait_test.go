package verbs

import (
	"context"
	"errors"
	"testing"
)

func TestWaitContext(t *testing.T) {
	r := newRig(t)
	r.f.event = nil // no event pending: the fake's CQ creation left one
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.ch.WaitContext(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitContext with no event and an ended context: %v", err)
	}
	r.f.event = r.cq.h
	cq, err := r.ch.WaitContext(context.Background())
	if err != nil || cq != r.cq {
		t.Errorf("WaitContext = %v, %v, want the rig's CQ", cq, err)
	}
	if r.f.acked != 1 {
		t.Errorf("%d events acknowledged, want 1", r.f.acked)
	}
}
