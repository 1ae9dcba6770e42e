package ibsim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// roundTrip sends one control request with data and returns the reply's
// first len(data) bytes. ibsim answers every well-formed request, except
// that it drops requests from an out-of-range client number without a
// word, so each round trip is bounded by Config.Timeout and ctx.
func (c *Client) roundTrip(ctx context.Context, typ ctlType, data []byte) ([]byte, error) {
	return c.exchange(ctx, typ, data, c.cfg.timeout(), 0)
}

// exchange is roundTrip waiting at most timeout for the reply and, when
// grace is not zero, still grace after ctx ends: a request ibsim may act
// on after the client has gone (CONNECT) is worth its answer.
func (c *Client) exchange(ctx context.Context, typ ctlType, data []byte, timeout, grace time.Duration) ([]byte, error) {
	reqs := [1]ctlRequest{{typ: typ, data: data}}
	if err := c.exchangeAll(ctx, reqs[:], timeout, grace); err != nil {
		return nil, err
	}
	return reqs[0].reply, nil
}

// ctlRequest is one control request of exchangeAll: its type and data,
// and the first len(data) bytes of the answer.
type ctlRequest struct {
	typ   ctlType
	data  []byte
	reply []byte
}

// exchangeAll sends the requests at once and reads their answers, which
// ibsim sends in the order it got the requests (it handles its control
// socket one datagram at a time): one wake-up of ibsim for them all
// instead of one each. The limits are exchange's, for the whole batch;
// the first request refused or unanswered fails it.
func (c *Client) exchangeAll(ctx context.Context, reqs []ctlRequest, timeout, grace time.Duration) error {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()

	// The end of ctx moves the limit through wakeOnDone, after ctx.Err
	// is set, so a read error can tell the two limits apart. The wait
	// goes in slices of alivePoll, and between two ibsim's socket must
	// still be there: one that died does not answer either.
	var limit atomic.Int64
	limit.Store(time.Now().Add(timeout).UnixNano())
	cut := func(time.Time) error {
		d := aLongTimeAgo
		if grace > 0 {
			d = time.Now().Add(grace)
		}
		if d.UnixNano() < limit.Load() {
			limit.Store(d.UnixNano())
			return c.ctl.SetDeadline(d)
		}
		return nil
	}
	slice := func() error {
		return c.ctl.SetDeadline(time.Unix(0, min(limit.Load(), time.Now().Add(alivePoll).UnixNano())))
	}
	if err := slice(); err != nil {
		return err
	}
	release := wakeOnDone(ctx, cut)
	defer release()

	var buf [ctlMsgLen + 1]byte
	for i := range reqs {
		r := &reqs[i]
		req := ctlMsg{ClientID: uint32(c.info.ClientID), Type: r.typ, Len: uint32(len(r.data))}
		copy(req.Data[:], r.data)
		req.marshal(buf[:])
		if _, err := c.ctl.Write(buf[:ctlMsgLen]); err != nil {
			return c.ctlError(ctx, r.typ, err, timeout)
		}
	}
	for i := 0; i < len(reqs); {
		r := &reqs[i]
		n, err := c.ctl.Read(buf[:])
		if errors.Is(err, os.ErrDeadlineExceeded) && time.Now().UnixNano() < limit.Load() {
			if !c.cfg.alive() {
				return fmt.Errorf("%s: %w", r.typ, &goneError{where: c.cfg.where(), err: errNoSocket})
			}
			if err := slice(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return c.ctlError(ctx, r.typ, err, timeout)
		}
		var rep ctlMsg
		if err := rep.unmarshal(buf[:n]); err != nil {
			return fmt.Errorf("%s: %w", r.typ, err)
		}
		switch rep.Type {
		case ctlError:
			return fmt.Errorf("%s: %w", r.typ, ErrRefused)
		case r.typ:
			r.reply = rep.Data[:len(r.data)]
			i++
		}
		// A late answer to an earlier request that timed out: skip it.
	}
	return nil
}

// alivePoll is how long a control request waits for its answer before it
// checks that ibsim's socket is still there.
const alivePoll = 250 * time.Millisecond

// errNoSocket is why ibsim is gone when its control socket is.
var errNoSocket = errors.New("its control socket is no more")

// ctlError explains a failed control read or write.
func (c *Client) ctlError(ctx context.Context, typ ctlType, err error, timeout time.Duration) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if ctx.Err() == nil {
			c.stalled.Store(true) // Close need not wait for it either
		}
		return &unansweredError{typ: typ, cause: ctx.Err(), timeout: timeout}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", typ, ctx.Err())
	}
	err = withoutAddrs(err)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%s: %w", typ, &goneError{where: c.cfg.where(), err: err})
	}
	return fmt.Errorf("%s: %w", typ, err)
}

// unansweredError reports a control request that got no answer in time,
// or before ctx ended. ibsim may still act on it later.
type unansweredError struct {
	typ     ctlType
	cause   error // ctx.Err() when the context ended first, else nil
	timeout time.Duration
}

func (e *unansweredError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%s: %v", e.typ, e.cause)
	}
	return fmt.Sprintf("%s: no answer within %v", e.typ, e.timeout)
}

// Unwrap returns the context's error, or os.ErrDeadlineExceeded.
func (e *unansweredError) Unwrap() error {
	if e.cause != nil {
		return e.cause
	}
	return os.ErrDeadlineExceeded
}
