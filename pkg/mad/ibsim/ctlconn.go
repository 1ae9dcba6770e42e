package ibsim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// roundTrip sends one control request with data and returns the reply's
// first len(data) bytes. ibsim answers every well-formed request, except
// that it drops requests from an out-of-range client number without a
// word, so each round trip is bounded by Config.Timeout and ctx.
func (c *Client) roundTrip(ctx context.Context, typ ctlType, data []byte) ([]byte, error) {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()

	req := ctlMsg{ClientID: uint32(c.info.ClientID), Type: typ, Len: uint32(len(data))}
	copy(req.Data[:], data)
	var buf [ctlMsgLen + 1]byte
	req.marshal(buf[:])

	// The end of ctx wakes the read through wakeOnDone, after ctx.Err is
	// set, so a read error can tell the two limits apart.
	if err := c.ctl.SetDeadline(time.Now().Add(c.cfg.timeout())); err != nil {
		return nil, err
	}
	release := wakeOnDone(ctx, c.ctl.SetDeadline)
	defer release()

	if _, err := c.ctl.Write(buf[:ctlMsgLen]); err != nil {
		return nil, c.ctlError(ctx, typ, err)
	}
	for {
		n, err := c.ctl.Read(buf[:])
		if err != nil {
			return nil, c.ctlError(ctx, typ, err)
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
func (c *Client) ctlError(ctx context.Context, typ ctlType, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", typ, ctx.Err())
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%s: no answer within %v", typ, c.cfg.timeout())
	}
	return fmt.Errorf("%s: %w", typ, err)
}
