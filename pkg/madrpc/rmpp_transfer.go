package madrpc

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
)

// rmppTransfer is the RMPP state of one request: the receiving side of its
// response and, for a GetMulti, the sending side of the request itself.
// The reader goroutine feeds it what comes and answers at once (ACKs,
// the next window); the waiting Do runs its timers (rmppTick).
type rmppTransfer struct {
	hdrLen  int
	sl      uint8  // for the ACKs: the request's service level
	pkey    uint16 // and partition
	timeout time.Duration
	retry   time.Duration // timeout/resendDiv
	bounce  time.Duration // timeout/bounceDiv
	// kick wakes the waiting Do when a timer moved closer.
	kick chan struct{}

	mu    sync.Mutex
	recv  *rmppReceiver
	err   *RMPPError
	moved time.Time   // when the transfer last moved on: a new segment in order, the request's window acknowledged further
	heard time.Time   // when the last segment came
	acked time.Time   // when the last ACK went
	ackTo mad.Address // where ACKs go: the sender of the first segment
	// ackSeg and ackWin are what the last ACK said.
	ackSeg, ackWin uint32
	// bounced is when the last ACK, returned undelivered, goes again;
	// zero when none is waiting. resent counts the ACKs the timers sent
	// since the transfer last moved on, up to rmppSendRetries.
	bounced time.Time
	resent  int
	// out sends the request itself in segments (a GetMulti), nil for a
	// request of one MAD; addr is where they go, and winDue when its
	// window goes again.
	out    *RMPPSender
	addr   mad.Address
	winDue time.Time
	sent   int // ACKs, ABORTs and request segments sent besides the tries
	// total is the longest the answer may take from its first segment
	// (TransactorOptions.RMPPTotal); first is when that came.
	total time.Duration
	first time.Time
}

// newRMPPTransfer returns the transfer state of a request to addr whose
// tries time out after timeout.
func newRMPPTransfer(hdrLen int, addr mad.Address, timeout time.Duration) *rmppTransfer {
	x := &rmppTransfer{
		hdrLen:  hdrLen,
		sl:      addr.SL,
		pkey:    addr.PKeyIndex,
		addr:    addr,
		timeout: timeout,
		retry:   timeout / resendDiv,
		bounce:  timeout / bounceDiv,
		kick:    make(chan struct{}, 1),
	}
	x.reset()
	return x
}

// sentCount returns how many MADs the transfer sent besides the tries.
func (x *rmppTransfer) sentCount() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.sent
}

// reset starts the transfer over, for a resent request.
func (x *rmppTransfer) reset() {
	x.mu.Lock()
	x.recv = newRMPPReceiver(x.hdrLen)
	x.err = nil
	x.moved, x.heard, x.acked, x.bounced, x.first = time.Time{}, time.Time{}, time.Time{}, time.Time{}, time.Time{}
	x.ackSeg, x.ackWin, x.resent = 0, 0, 0
	x.out, x.winDue = nil, time.Time{}
	x.mu.Unlock()
}

// failed returns the error that ended the transfer, or nil.
func (x *rmppTransfer) failed() *RMPPError {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// timers returns when the transfer last moved on (zero if never) and when
// its next timer is due (zero if none).
func (x *rmppTransfer) timers() (moved, due time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.moved, earliest(earliest(x.ackDue(), x.winDue), x.totalDue())
}

// totalDue returns when the answer's total time runs out: zero before
// its first segment, once it is whole, and after the transfer failed.
func (x *rmppTransfer) totalDue() time.Time {
	if x.first.IsZero() || x.total <= 0 || x.err != nil || x.recv.done {
		return time.Time{}
	}
	return x.first.Add(x.total)
}

// ackDue returns when the receiver sends its ACK again: soon after it
// came back undelivered, or when no segment came and no ACK went for the
// retry time; zero before the first segment, after the last, and once
// the timers resent rmppSendRetries ACKs without the transfer moving on.
func (x *rmppTransfer) ackDue() time.Time {
	if x.err != nil || !x.recv.started() || x.recv.done || x.resent >= rmppSendRetries {
		return time.Time{}
	}
	idle := x.heard
	if x.acked.After(idle) {
		idle = x.acked
	}
	return earliest(x.bounced, idle.Add(x.retry))
}

// earliest returns the earlier of two times, a zero one meaning none.
func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

// ack builds the ACK of the receiver's present state (seg, win) from
// template m, a segment of the response, to the response's sender.
func (x *rmppTransfer) ack(m []byte, seg, win uint32) *mad.Packet {
	return &mad.Packet{
		MAD:     rmppReply(m, x.hdrLen, mad.RMPPHeader{Type: mad.RMPPTypeAck, RespTime: rmppRespTimeDefault, SegmentNumber: seg, PayloadLength: win}),
		Addr:    x.ackTo,
		Timeout: x.timeout,
	}
}

// takeSegment feeds one RMPP MAD of a response to its transfer and sends
// the ACK (or ABORT) it calls for. It returns the packet to hand to the
// waiter: the whole message once complete, p itself when the transfer
// failed (the waiter then finds the error), nil otherwise.
func (t *Transactor) takeSegment(ctx context.Context, x *rmppTransfer, p *mad.Packet) *mad.Packet {
	now := time.Now()
	x.mu.Lock()
	before := x.recv.next
	step, err := x.recv.add(p.MAD)
	x.heard = now
	if before == 1 && x.recv.started() {
		x.ackTo = mad.Address{LID: p.Addr.LID, QPN: p.Addr.QPN, QKey: mad.QP1QKey, SL: x.sl, PKeyIndex: x.pkey}
		x.first = now
	}
	if x.recv.next > before {
		x.moved, x.resent = now, 0
	}
	var msg []byte
	if step.done {
		msg = x.recv.message()
	}
	var reply *mad.Packet
	switch e := err.(type) {
	case *RMPPError:
		x.err = e
	case *rmppProtoError:
		x.err = &RMPPError{Type: mad.RMPPTypeAbort, Sent: true, Status: e.status, Detail: e.detail}
		reply = &mad.Packet{
			MAD:     rmppReply(p.MAD, x.hdrLen, mad.RMPPHeader{Type: mad.RMPPTypeAbort, RespTime: rmppRespTimeDefault, Status: e.status}),
			Addr:    mad.Address{LID: p.Addr.LID, QPN: p.Addr.QPN, QKey: mad.QP1QKey, SL: x.sl, PKeyIndex: x.pkey},
			Timeout: x.timeout,
		}
	default:
		// A resent window brings duplicates in a burst: the first
		// draws the ACK, the rest would only repeat it.
		if step.ack && !(step.dup && step.seg == x.ackSeg && step.win == x.ackWin && now.Sub(x.acked) < x.bounce) {
			reply = x.ack(p.MAD, step.seg, step.win)
			reply.Addr.LID, reply.Addr.QPN = p.Addr.LID, p.Addr.QPN
			x.acked, x.bounced = now, time.Time{}
			x.ackSeg, x.ackWin = step.seg, step.win
		}
	}
	if reply != nil {
		x.sent++
	}
	x.mu.Unlock()

	if reply != nil {
		// A lost ACK is resent by the timers (or drawn again by the
		// sender's resend); the reader sends it, so it waits at most a
		// timeout for room.
		t.sendRecovered(ctx, reply)
		x.wake() // the ACK's timer runs from now
	}
	switch {
	case err != nil:
		return p
	case step.done:
		return &mad.Packet{MAD: msg, Addr: p.Addr}
	}
	return nil
}

// takeAck feeds an ACK (STOP, ABORT) of the request's own segments to its
// sender and sends the segments the ACK lets go. It reports whether the
// transfer failed, so the waiter should be woken.
func (t *Transactor) takeAck(ctx context.Context, x *rmppTransfer, p *mad.Packet) bool {
	x.mu.Lock()
	if x.out == nil {
		x.mu.Unlock()
		return false
	}
	acked := x.out.lastAck
	segs, err := x.out.Handle(p.MAD)
	if e, ok := err.(*RMPPError); ok {
		x.err, x.winDue = e, time.Time{}
		if e.Sent {
			segs = [][]byte{RMPPAbort(x.out.segs[0], x.hdrLen, e.Status)}
		}
	} else {
		now := time.Now()
		if x.out.lastAck > acked {
			x.moved = now
		}
		switch {
		case x.out.Done():
			x.winDue = time.Time{}
		case x.out.lastAck > acked || len(segs) > 0:
			x.winDue = now.Add(x.retry)
		}
	}
	x.sent += len(segs)
	x.mu.Unlock()
	for _, m := range segs {
		t.sendRecovered(ctx, &mad.Packet{MAD: m, Addr: x.addr, Timeout: x.timeout}) // a lost one goes again on the window's timer
	}
	return err != nil
}

// takeBounced takes an RMPP MAD of the transfer that the transport
// returned undelivered (ibsim does at once when it drops one): one of
// the receiver's ACKs goes again after a short wait; a segment of the
// request goes again when its window's timer runs out, as after any
// loss; an ABORT is not sent again.
func (x *rmppTransfer) takeBounced(p *mad.Packet) {
	if len(p.MAD) < mad.RMPPDataStart || mad.RMPPType(p.MAD[mad.RMPPHeaderOffset+1]) != mad.RMPPTypeAck {
		return
	}
	x.mu.Lock()
	if x.bounced.IsZero() {
		x.bounced = time.Now().Add(x.bounce)
	}
	x.mu.Unlock()
	x.wake()
}

// wake tells the waiting Do that a timer moved closer.
func (x *rmppTransfer) wake() {
	select {
	case x.kick <- struct{}{}:
	default:
	}
}

// rmppTick runs the transfer's timers that are due at now: the request's
// window goes again (or the transfer aborts after rmppSendRetries resends
// of it), the receiver's ACK goes again, or the answer's total time ran
// out and the receiver aborts it.
func (t *Transactor) rmppTick(ctx context.Context, x *rmppTransfer, now time.Time) {
	var sends []*mad.Packet
	x.mu.Lock()
	if due := x.totalDue(); !due.IsZero() && !now.Before(due) {
		x.err = &RMPPError{Type: mad.RMPPTypeAbort, Sent: true, Status: mad.RMPPStatusTimeTooLong,
			Detail: fmt.Sprintf("segment %d of the answer was the last to come in %v from its first", x.recv.next-1, x.total)}
		x.winDue = time.Time{}
		abort := &mad.Packet{
			MAD:     rmppReply(x.recv.msg, x.hdrLen, mad.RMPPHeader{Type: mad.RMPPTypeAbort, RespTime: rmppRespTimeDefault, Status: mad.RMPPStatusTimeTooLong}),
			Addr:    x.ackTo,
			Timeout: x.timeout,
		}
		x.sent++
		x.mu.Unlock()
		t.sendRecovered(ctx, abort)
		return
	}
	if due := x.winDue; !due.IsZero() && !now.Before(due) && x.err == nil && x.out != nil {
		segs, err := x.out.Timeout()
		x.winDue = now.Add(x.retry)
		if e, ok := err.(*RMPPError); ok {
			x.err, x.winDue = e, time.Time{}
			segs = [][]byte{RMPPAbort(x.out.segs[0], x.hdrLen, e.Status)}
		}
		for _, m := range segs {
			sends = append(sends, &mad.Packet{MAD: m, Addr: x.addr, Timeout: x.timeout})
		}
	}
	if due := x.ackDue(); !due.IsZero() && !now.Before(due) {
		if step := x.recv.ackNow(); step.ack {
			sends = append(sends, x.ack(x.recv.msg, step.seg, step.win))
			x.ackSeg, x.ackWin = step.seg, step.win
		}
		x.acked, x.bounced = now, time.Time{}
		x.resent++
	}
	x.sent += len(sends)
	x.mu.Unlock()
	for _, p := range sends {
		t.sendRecovered(ctx, p)
	}
}
