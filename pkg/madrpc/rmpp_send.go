package madrpc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// rmppSendRetries is how many times a sender resends a window the
// receiver does not acknowledge before it gives up, as the kernel's
// sender (which then aborts the transfer).
const rmppSendRetries = 10

// RMPPSender is the sending side of one RMPP transfer (IBA 13.6.4), for a
// transport that leaves RMPP to user space: it sends the first segment,
// then as many as each ACK's window grants, resends the unacknowledged
// part of the window when Timeout is called, and is done when the
// receiver has acknowledged the last segment. It only computes what to
// send; the caller sends it and calls Timeout after RRespTime passes
// without an ACK.
type RMPPSender struct {
	segs    [][]byte
	lastAck uint32 // the last segment acknowledged, 0 before any
	winLast uint32 // the last segment the receiver's window allows
	sent    uint32 // the last segment sent
	tries   int    // resends since the last progress
	done    bool
}

// NewRMPPSender returns the sender of msg: the MAD, RMPP and class
// headers (hdrLen bytes, the MAD header already a response's or a
// request's as it should go), then the data. A msg whose data fits one
// segment still goes as one RMPP segment, First and Last.
func NewRMPPSender(msg []byte, hdrLen int) (*RMPPSender, error) {
	if hdrLen < mad.RMPPDataStart || hdrLen >= mad.Size || len(msg) < hdrLen {
		return nil, fmt.Errorf("an RMPP message needs its %d header bytes (at least %d, less than %d), it has %d", hdrLen, mad.RMPPDataStart, mad.Size, len(msg))
	}
	if len(msg)-hdrLen > rmppMaxMessage {
		return nil, fmt.Errorf("an RMPP message of %d bytes is longer than %d", len(msg)-hdrLen, rmppMaxMessage)
	}
	return &RMPPSender{segs: RMPPSegments(msg, hdrLen), winLast: 1}, nil
}

// Segments returns how many DATA segments the message takes.
func (s *RMPPSender) Segments() int { return len(s.segs) }

// Done reports whether the receiver acknowledged every segment.
func (s *RMPPSender) Done() bool { return s.done }

// Start returns the first window to send: segment 1 alone, the window a
// sender may assume before the first ACK.
func (s *RMPPSender) Start() [][]byte { return s.more() }

// more returns the segments after the last sent up to the window's end.
func (s *RMPPSender) more() [][]byte {
	var out [][]byte
	for s.sent < s.winLast && int(s.sent) < len(s.segs) {
		out = append(out, s.segs[s.sent])
		s.sent++
	}
	return out
}

// Handle takes one MAD of the transfer from the receiver. An ACK moves the
// window and returns the segments it lets go; a STOP or ABORT ends the
// transfer with an *RMPPError; an ACK that breaks the protocol returns an
// *RMPPError with Sent set and the status to ABORT with (the caller sends
// the ABORT: see RMPPAbort).
func (s *RMPPSender) Handle(m []byte) ([][]byte, error) {
	var h mad.RMPPHeader
	if err := h.UnmarshalBinary(m); err != nil {
		return nil, &RMPPError{Type: mad.RMPPTypeAbort, Sent: true, Status: mad.RMPPStatusUnspecified, Detail: err.Error()}
	}
	if h.Version != mad.RMPPVersion {
		return nil, &RMPPError{Type: mad.RMPPTypeAbort, Sent: true, Status: mad.RMPPStatusBadVersion, Detail: fmt.Sprintf("RMPP version %d", h.Version)}
	}
	switch h.Type {
	case mad.RMPPTypeAck:
	case mad.RMPPTypeStop, mad.RMPPTypeAbort:
		s.done = true
		return nil, &RMPPError{Type: h.Type, Status: h.Status}
	case mad.RMPPTypeData:
		return nil, nil // DATA to a sender: not this transfer's
	default:
		return nil, &RMPPError{Type: mad.RMPPTypeAbort, Sent: true, Status: mad.RMPPStatusBadType, Detail: fmt.Sprintf("RMPP type %d", h.Type)}
	}
	seg, win := h.SegmentNumber, h.PayloadLength
	switch {
	case int(seg) > len(s.segs) || seg > s.sent:
		return nil, &RMPPError{Type: mad.RMPPTypeAbort, Sent: true, Status: mad.RMPPStatusSegTooBig, Detail: fmt.Sprintf("ACK of segment %d; %d sent of %d", seg, s.sent, len(s.segs))}
	case win < seg:
		return nil, &RMPPError{Type: mad.RMPPTypeAbort, Sent: true, Status: mad.RMPPStatusWindowSmall, Detail: fmt.Sprintf("ACK of segment %d with NewWindowLast %d", seg, win)}
	case seg < s.lastAck:
		return nil, nil // an old ACK, overtaken
	}
	if seg > s.lastAck {
		s.lastAck, s.tries = seg, 0
	}
	if int(s.lastAck) == len(s.segs) {
		s.done = true
		return nil, nil
	}
	if win > s.winLast {
		s.winLast = win
	}
	return s.more(), nil
}

// Timeout returns the segments to send again when no ACK came in time:
// the window from the first segment not acknowledged. After
// rmppSendRetries resends without progress it returns an *RMPPError
// (Sent, status "too many retries") and the caller aborts the transfer.
func (s *RMPPSender) Timeout() ([][]byte, error) {
	if s.done {
		return nil, nil
	}
	s.tries++
	if s.tries > rmppSendRetries {
		s.done = true
		return nil, &RMPPError{Type: mad.RMPPTypeAbort, Sent: true, Status: mad.RMPPStatusRetries, Detail: fmt.Sprintf("no ACK after %d resends of segment %d", rmppSendRetries, s.lastAck+1)}
	}
	s.sent = s.lastAck
	return s.more(), nil
}

// RMPPAbort builds the ABORT (or STOP) a side sends to end the transfer
// of segment m: m's first hdrLen bytes with the RMPP header replaced.
func RMPPAbort(m []byte, hdrLen int, status uint8) []byte {
	out := make([]byte, mad.Size)
	copy(out, m[:min(hdrLen, len(m))])
	(&mad.RMPPHeader{Version: mad.RMPPVersion, Type: mad.RMPPTypeAbort, Flags: mad.RMPPActive, RespTime: rmppRespTimeDefault, Status: status}).MarshalTo(out)
	return out
}

// RMPPSends runs the RMPP transfers of a server's long responses over a
// transport that leaves RMPP to user space (ibsim): Send starts one, Take
// feeds it the receiver's ACKs (and STOPs, ABORTs) as the server's receive
// loop reads them, and Expire resends what was not acknowledged in time.
// It is not safe for concurrent use; one receive loop drives it.
type RMPPSends struct {
	tr      mad.Transport
	timeout time.Duration // how long a window waits for its ACK
	sends   map[rmppKey]*rmppOut
}

// rmppKey identifies a transfer: the receiver and the TID.
type rmppKey struct {
	lid rdma.LID
	qpn uint32
	tid uint64
}

type rmppOut struct {
	s        *RMPPSender
	addr     mad.Address
	hdrLen   int
	deadline time.Time
}

// NewRMPPSends returns the transfers of a server sending on tr, waiting
// timeout for each window's ACK.
func NewRMPPSends(tr mad.Transport, timeout time.Duration) *RMPPSends {
	return &RMPPSends{tr: tr, timeout: timeout, sends: make(map[rmppKey]*rmppOut)}
}

// Send starts sending msg (the MAD, RMPP and class headers, hdrLen bytes,
// then the data) to addr: the first segment goes now. A transfer to the
// same receiver with the same TID (the request came again) starts over.
func (r *RMPPSends) Send(ctx context.Context, msg []byte, hdrLen int, addr mad.Address) error {
	s, err := NewRMPPSender(msg, hdrLen)
	if err != nil {
		return err
	}
	k := rmppKey{addr.LID, addr.QPN, binary.BigEndian.Uint64(msg[8:])}
	o := &rmppOut{s: s, addr: addr, hdrLen: hdrLen}
	r.sends[k] = o
	return r.send(ctx, k, o, s.Start())
}

func (r *RMPPSends) send(ctx context.Context, k rmppKey, o *rmppOut, segs [][]byte) error {
	o.deadline = time.Now().Add(r.timeout)
	for _, m := range segs {
		if err := r.tr.Send(ctx, &mad.Packet{MAD: m, Addr: o.addr, Timeout: r.timeout}); err != nil {
			delete(r.sends, k)
			return err
		}
	}
	return nil
}

// Take reports whether p belongs to one of the transfers (an ACK, STOP
// or ABORT from its receiver), and if so moves the transfer on. A
// transfer that ends badly returns its *RMPPError (an ABORT the
// receiver's ACK called for has been sent).
func (r *RMPPSends) Take(ctx context.Context, p *mad.Packet) (bool, error) {
	if len(p.MAD) < mad.RMPPDataStart || !mad.IsRMPPActive(mad.Class(p.MAD[1]), p.MAD) || mad.RMPPType(p.MAD[mad.RMPPHeaderOffset+1]) == mad.RMPPTypeData {
		return false, nil
	}
	k := rmppKey{p.Addr.LID, p.Addr.QPN, binary.BigEndian.Uint64(p.MAD[8:])}
	o := r.sends[k]
	if o == nil {
		return false, nil
	}
	segs, err := o.s.Handle(p.MAD)
	if err != nil {
		delete(r.sends, k)
		var re *RMPPError
		if errors.As(err, &re) && re.Sent {
			r.tr.Send(ctx, &mad.Packet{MAD: RMPPAbort(o.s.segs[0], o.hdrLen, re.Status), Addr: o.addr, Timeout: r.timeout})
		}
		return true, err
	}
	if o.s.Done() {
		delete(r.sends, k)
		return true, nil
	}
	if len(segs) > 0 {
		return true, r.send(ctx, k, o, segs)
	}
	return true, nil
}

// Expire resends the windows whose time ran out at now, and ends (with
// an ABORT) the transfers that ran out of resends, returning their errors.
func (r *RMPPSends) Expire(ctx context.Context, now time.Time) []error {
	var errs []error
	for k, o := range r.sends {
		if now.Before(o.deadline) {
			continue
		}
		segs, err := o.s.Timeout()
		if err != nil {
			delete(r.sends, k)
			var re *RMPPError
			if errors.As(err, &re) {
				r.tr.Send(ctx, &mad.Packet{MAD: RMPPAbort(o.s.segs[0], o.hdrLen, re.Status), Addr: o.addr, Timeout: r.timeout})
			}
			errs = append(errs, err)
			continue
		}
		if err := r.send(ctx, k, o, segs); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Next returns when the earliest window runs out, or false when no
// transfer is under way.
func (r *RMPPSends) Next() (time.Time, bool) {
	var t time.Time
	for _, o := range r.sends {
		if t.IsZero() || o.deadline.Before(t) {
			t = o.deadline
		}
	}
	return t, !t.IsZero()
}

// Len returns how many transfers are under way.
func (r *RMPPSends) Len() int { return len(r.sends) }
