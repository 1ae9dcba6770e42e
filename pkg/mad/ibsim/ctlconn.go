package ibsim

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()

	req := ctlMsg{ClientID: uint32(c.info.ClientID), Type: typ, Len: uint32(len(data))}
	copy(req.Data[:], data)
	var buf [ctlMsgLen + 1]byte
	req.marshal(buf[:])

	// The end of ctx cuts the wait short through wakeOnDone, after
	// ctx.Err is set, so a read error can tell the two limits apart.
	deadline := time.Now().Add(timeout)
	if err := c.ctl.SetDeadline(deadline); err != nil {
		return nil, err
	}
	cut := c.ctl.SetDeadline
	if grace > 0 {
		cut = func(time.Time) error {
			if d := time.Now().Add(grace); d.Before(deadline) {
				return c.ctl.SetDeadline(d)
			}
			return nil
		}
	}
	release := wakeOnDone(ctx, cut)
	defer release()

	if _, err := c.ctl.Write(buf[:ctlMsgLen]); err != nil {
		return nil, c.ctlError(ctx, typ, err, timeout)
	}
	for {
		n, err := c.ctl.Read(buf[:])
		if err != nil {
			return nil, c.ctlError(ctx, typ, err, timeout)
		}
		var rep ctlMsg
		if err := rep.unmarshal(buf[:n]); err != nil {
			return nil, fmt.Errorf("%s: %w", typ, err)
		}
		switch rep.Type {
		case ctlError:
			return nil, fmt.Errorf("%s: %w", typ, ErrRefused)
		case typ:
			return rep.Data[:len(data)], nil
		}
		// A late answer to an earlier request that timed out: skip it.
	}
}

// ctlError explains a failed control read or write.
func (c *Client) ctlError(ctx context.Context, typ ctlType, err error, timeout time.Duration) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
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
