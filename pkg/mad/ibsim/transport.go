package ibsim

import (
	"context"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

var framePool = sync.Pool{New: func() any { return new([requestLen]byte) }}

// Send sends one MAD to p.Addr.LID and p.Addr.QPN from the attach port.
// The source QP is 0 for SMPs and 1 otherwise; the source LID is left to
// ibsim (the attach port's LID), except for a directed-route SMP sent to
// the permissive LID, whose source is permissive too, as the shim sends it.
//
// ibsim has no Q_Keys, service levels, partitions or GRHs, so the rest of
// p.Addr is ignored, and p.Timeout only bounds the wait for room in ibsim's
// socket. ibsim silently discards MADs it cannot parse; Send rejects those
// up front (see checkSendable) so the caller does not wait for a timeout.
func (c *Client) Send(ctx context.Context, p *mad.Packet) error {
	if c.closed.Load() {
		return fmt.Errorf("ibsim client %d: %w", c.info.ClientID, mad.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(p.MAD) < mad.HeaderLen || len(p.MAD) > mad.Size {
		return fmt.Errorf("ibsim takes MADs of %d to %d bytes, not %d", mad.HeaderLen, mad.Size, len(p.MAD))
	}
	r := request{
		DLID:   p.Addr.LID,
		DQP:    p.Addr.QPN,
		SQP:    mad.Class(p.MAD[1]).QP(),
		Length: uint64(len(p.MAD)),
	}
	if r.DLID == rdma.PermissiveLID {
		r.SLID = rdma.PermissiveLID
	}
	copy(r.MAD[:], p.MAD)
	if err := checkSendable(&r.MAD); err != nil {
		return err
	}
	frame := framePool.Get().(*[requestLen]byte)
	defer framePool.Put(frame)
	r.marshal(frame[:])
	if err := c.write(ctx, frame, p.Timeout); err != nil {
		if c.closed.Load() {
			return fmt.Errorf("ibsim client %d: %w", c.info.ClientID, mad.ErrClosed)
		}
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("sending to ibsim client %d's data socket: %w", c.info.ClientID, err)
	}
	return nil
}

// Recv returns the next frame ibsim sends this client: a response, a MAD
// forwarded from another client (to an SM client), or the client's own
// request with Status ETIMEDOUT when ibsim dropped it (no route, a link
// down, an injected error). p.MAD always gets the whole 256-byte MAD;
// p.Addr gets the source LID and QP. Frames of the wrong size are skipped,
// as the shim skips them.
func (c *Client) Recv(ctx context.Context, p *mad.Packet) error {
	c.recvMu.Lock()
	defer c.recvMu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx != c.watchCtx {
		// The end of ctx wakes the read. The watch stays for the next
		// Recv with the same ctx (the transactor's reader passes one
		// for its life): registering it for every frame cost as much
		// as the read. A past deadline an earlier ctx's end left is
		// cleared, then Close looked for again, which may have set one
		// just before.
		if c.watchStop != nil {
			c.watchStop()
		}
		c.data.SetReadDeadline(time.Time{})
		if c.closed.Load() {
			return fmt.Errorf("ibsim client %d: %w", c.info.ClientID, mad.ErrClosed)
		}
		c.watchCtx, c.watchStop = ctx, wakeOnDone(ctx, c.data.SetReadDeadline)
	}
	for {
		frame, err := c.readFrame(c.recvBuf[:])
		if err != nil {
			switch {
			case c.closed.Load():
				return fmt.Errorf("ibsim client %d: %w", c.info.ClientID, mad.ErrClosed)
			case ctx.Err() != nil:
				return ctx.Err()
			}
			return fmt.Errorf("receiving from ibsim: %w", err)
		}
		var r request
		if r.unmarshal(frame) != nil {
			continue
		}
		p.MAD = append(p.MAD[:0], r.MAD[:]...)
		p.Addr = mad.Address{LID: r.SLID, QPN: r.SQP}
		p.Status = syscall.Errno(r.Status)
		p.Timeout = 0
		return nil
	}
}

// checkSendable rejects what ibsim 0.10's decode_sim_MAD would discard
// without an answer: a base version other than 1, a class version over 2,
// and directed-route SMPs with a non-zero hop pointer, a D bit that
// disagrees with the R bit, or DrSLID/DrDLID other than the permissive LID
// (ibsim has no LID-routed parts in DR paths).
func checkSendable(m *[mad.Size]byte) error {
	var h mad.Header
	h.UnmarshalBinary(m[:])
	if h.BaseVersion != mad.BaseVersion || h.ClassVersion > 2 {
		return fmt.Errorf("ibsim drops MADs with base version %d or class version %d (it takes base 1, class 1-2)", h.BaseVersion, h.ClassVersion)
	}
	if h.MgmtClass != mad.ClassSMIDirect {
		return nil
	}
	var dr mad.DRSMPHeader
	dr.UnmarshalBinary(m[:])
	switch {
	case dr.HopPointer != 0:
		return fmt.Errorf("ibsim drops directed-route SMPs with hop pointer %d (it takes 0)", dr.HopPointer)
	case dr.Direction != h.Method.IsResponse():
		return fmt.Errorf("ibsim drops directed-route SMPs whose D bit differs from the R bit")
	case dr.DrSLID != rdma.PermissiveLID || dr.DrDLID != rdma.PermissiveLID:
		return fmt.Errorf("ibsim drops directed-route SMPs with DrSLID %d, DrDLID %d (it takes only the permissive LID)", dr.DrSLID, dr.DrDLID)
	}
	return nil
}

// write sends one frame to ibsim: on the connected socket, with the frames
// other goroutines send at the same time (sendQueue); otherwise by
// ibsim's address. Only a Unix socket waits for ibsim to read (a UDP
// send waits for nothing but the local interface), so only that wait is
// bounded by timeout and ctx.
func (c *Client) write(ctx context.Context, frame *[requestLen]byte, timeout time.Duration) error {
	if c.connected {
		return c.send(ctx, frame, timeout)
	}
	if !c.cfg.inet() {
		c.writeMu.Lock()
		defer c.writeMu.Unlock()
		defer c.armWrite(ctx, timeout)()
	}
	_, err := c.data.WriteTo(frame[:], c.out)
	if err != nil {
		return c.writeError(ctx, err, timeout)
	}
	return nil
}

// read reads one frame. Where the socket can (Unix and UDP sockets both
// can) it reads without the sender's address, which ReadFrom would turn
// into two allocations a frame: ibsim's address is known, and what the
// frame says (its source LID and QP) is in the frame.
func (c *Client) read(b []byte) (int, error) {
	if r, ok := c.data.(io.Reader); ok {
		return r.Read(b)
	}
	n, _, err := c.data.ReadFrom(b)
	return n, err
}
