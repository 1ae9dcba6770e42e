package rdma

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// cmPortWatch ends an rdma_cm tool's waits when the port one of its CM
// IDs is on goes down: a link that goes down sends no CM event to a
// side that waits for its peer (a reply, a request, a datagram, the
// disconnect), and fails no completion there, so without it the tool
// waits forever. Its ctx is the tool's context for every wait; it ends
// with the *verbs.PortDownError as its cause.
type cmPortWatch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	// wait waits for port of device dev to go down (cmWaitPortDown).
	wait func(ctx context.Context, dev string, port int) error
	mu   sync.Mutex
	seen map[string]bool
	wg   sync.WaitGroup
}

func newCMPortWatch(parent context.Context) *cmPortWatch {
	ctx, cancel := context.WithCancelCause(parent)
	return &cmPortWatch{ctx: ctx, cancel: cancel, wait: cmWaitPortDown, seen: map[string]bool{}}
}

// add watches id's port, once for each device and port; an ID on no
// device yet (a listener on any address) is passed over. The ID is read
// here, in the tool's goroutine, and not by the watch.
func (w *cmPortWatch) add(id *rdmacm.ID) {
	d, err := id.Device()
	if err != nil || d.Name == "" {
		return
	}
	port := id.Addr().Port
	w.watch(fmt.Sprintf("%s/%d", d.Name, port), func(ctx context.Context) error { return w.wait(ctx, d.Name, port) })
}

// watch runs wait, keyed by key, until the watch stops; what it returns
// (a *verbs.PortDownError) ends ctx.
func (w *cmPortWatch) watch(key string, wait func(context.Context) error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen[key] || w.ctx.Err() != nil {
		return
	}
	w.seen[key] = true
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var pd *verbs.PortDownError
		if err := wait(w.ctx); errors.As(err, &pd) {
			w.cancel(pd)
		}
	}()
}

// stop ends the watches and waits for them.
func (w *cmPortWatch) stop() {
	w.cancel(context.Canceled)
	w.wg.Wait()
}

// why is err, or the port's going down when that is what ended it
// (cmWhy).
func (w *cmPortWatch) why(err error) error { return cmWhy(w.ctx, err) }

// cmWaitPortDown opens device name for its async events (a context of
// the watch's own: the tool's may close first) and waits for port to go
// down. A device that does not open is not watched (nil): the CM and the
// completions still end the tool then.
func cmWaitPortDown(ctx context.Context, name string, port int) error {
	dev, err := verbs.Open(name)
	if err != nil {
		return nil
	}
	defer dev.Close()
	return dev.WaitPortDown(ctx, port)
}

// cmWhy is err, or the port gone down when that is why err came
// (cmPortGone), with a failed work request said after it; nil stays nil.
func cmWhy(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	pd := cmPortGone(ctx, err)
	if pd == nil {
		return err
	}
	var ce *verbs.CompletionError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w; %v", pd, ce)
	}
	return pd
}

// cmPortGone returns the port's going down when that ended ctx, or when
// err is a failed work request and the port's word comes within
// cmFlushWait: a send on a device whose link just went down fails at
// once ("local QP operation error" on Soft-RoCE), a moment before
// IBV_EVENT_PORT_ERR says why. Otherwise nil.
func cmPortGone(ctx context.Context, err error) *verbs.PortDownError {
	var pd *verbs.PortDownError
	if errors.As(context.Cause(ctx), &pd) {
		return pd
	}
	var ce *verbs.CompletionError
	if !errors.As(err, &ce) {
		return nil
	}
	if errors.As(cmCauseWithin(ctx), &pd) {
		return pd
	}
	return nil
}

// cmCauseWithin waits up to cmFlushWait for ctx to end, and returns its
// cause then (nil if it has not ended): a work request that fails as
// the port goes down or the peer leaves comes a moment before the event
// that says why.
func cmCauseWithin(ctx context.Context) error {
	t := time.NewTimer(cmFlushWait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return context.Cause(ctx)
}

// cmFlushWait is how long a failed work request waits for the word of
// why it failed (cmCauseWithin): the port's event, or rping's peer's
// disconnect.
var cmFlushWait = 2 * time.Second
