package madrpc

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
)

// What the RMPP engine accepts and grants.
const (
	rmppMaxMessage              = 256 << 20 // the longest message accepted
	rmppDefaultWindowSize       = 64        // segments granted per ACK, as the kernel's receiver
	rmppRespTimeDefault   uint8 = 14        // RRespTime the kernel sets in ACKs (none given)
)

// RMPPError reports an RMPP transfer that did not complete: the sender
// stopped or aborted it, or its segments broke the protocol and the
// receiver aborted it.
type RMPPError struct {
	Request string // what was asked: "SubnAdmGetTable(NodeRecord)"
	To      string // where: "Lid 1"
	// Type is RMPPTypeStop or RMPPTypeAbort; Sent tells who sent it.
	Type   mad.RMPPType
	Sent   bool // this end aborted; otherwise the sender did
	Status uint8
	Detail string // what was wrong, when this end aborted
}

func (e *RMPPError) Error() string {
	what := fmt.Sprintf("the sender sent %v", e.Type)
	if e.Sent {
		what = "aborted"
	}
	s := fmt.Sprintf("%s to %s: RMPP transfer %s, status %d (%s)", e.Request, e.To, what, e.Status, mad.RMPPStatusText(e.Status))
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// rmppProtoError is a protocol violation the receiver answers with ABORT.
type rmppProtoError struct {
	status uint8
	detail string
}

func (e *rmppProtoError) Error() string {
	return fmt.Sprintf("RMPP status %d (%s): %s", e.status, mad.RMPPStatusText(e.status), e.detail)
}

// rmppPrealloc bounds the buffer a receiver sets aside for a message
// from its first segment's announced length: 64 MiB, more than opensm's
// biggest table on a 27,648-host fabric (about 11 MB). The fuzz target
// lowers it, since every input may announce gigabytes.
var rmppPrealloc = 64 << 20

// rmppStep is what the receiver does after a segment: acknowledge (ack
// set, through seg with NewWindowLast win), and whether the message is
// complete.
type rmppStep struct {
	ack      bool
	seg, win uint32
	done     bool
	dup      bool // the ACK answers a duplicate: nothing changed since the last
}

// rmppReceiver reassembles one RMPP message from its DATA segments, as the
// receiving side of IBA 13.6.5 (and the kernel's receiver): a segment
// already received is acknowledged again, since the sender that resends it
// missed an ACK; one past a gap is kept until the gap fills, if the window
// granted takes it, and the segment that fills the gap is acknowledged at
// once, so that the sender, resending after a loss, goes on from the
// receiver's place instead of resending what came. The first segment is
// acknowledged, then one every half window, each ACK granting a window of
// rmppDefaultWindowSize segments past the one it acknowledges: the sender
// always has half a window to send while the ACK travels, where an ACK only
// at the window's end (the kernel's receiver) leaves it idle for the round
// trip, once a window, on a long table.
type rmppReceiver struct {
	hdrLen  int    // bytes repeated in every segment: MAD, RMPP and class headers
	window  uint32 // segments granted per ACK
	next    uint32 // the segment expected next, from 1
	winLast uint32 // the last segment of the window granted
	ackAt   uint32 // the segment the next ACK goes out at
	msg     []byte // the first segment's headers, then the data
	// ahead holds the segments past a gap, by number, until it fills:
	// at most a window of them.
	ahead map[uint32][]byte
	done  bool
}

// newRMPPReceiver returns a receiver for a class whose data starts at
// hdrLen (56 for the SA).
func newRMPPReceiver(hdrLen int) *rmppReceiver {
	return &rmppReceiver{hdrLen: hdrLen, window: rmppDefaultWindowSize, next: 1}
}

// add takes one MAD of the transfer. A STOP or ABORT from the sender comes
// back as an *RMPPError; a segment that breaks the protocol as an
// *rmppProtoError, which the caller answers with ABORT.
func (r *rmppReceiver) add(m []byte) (rmppStep, error) {
	var h mad.RMPPHeader
	if err := h.UnmarshalBinary(m); err != nil {
		return rmppStep{}, &rmppProtoError{mad.RMPPStatusUnspecified, err.Error()}
	}
	if h.Version != mad.RMPPVersion {
		return rmppStep{}, &rmppProtoError{mad.RMPPStatusBadVersion, fmt.Sprintf("RMPP version %d", h.Version)}
	}
	switch h.Type {
	case mad.RMPPTypeData:
	case mad.RMPPTypeStop, mad.RMPPTypeAbort:
		return rmppStep{}, &RMPPError{Type: h.Type, Status: h.Status}
	case mad.RMPPTypeAck:
		return rmppStep{}, nil // an ACK to a receiver means nothing
	default:
		return rmppStep{}, &rmppProtoError{mad.RMPPStatusBadType, fmt.Sprintf("RMPP type %d", h.Type)}
	}
	if len(m) < mad.Size {
		return rmppStep{}, &rmppProtoError{mad.RMPPStatusUnspecified, fmt.Sprintf("a %d-byte DATA segment, want %d", len(m), mad.Size)}
	}
	seg := h.SegmentNumber
	switch {
	case seg == 0:
		return rmppStep{}, &rmppProtoError{mad.RMPPStatusBadFirst, "segment number 0"}
	case r.done || seg < r.next:
		// A duplicate: the sender missed an ACK, or probes for where
		// to go on (the shim's sender resends one segment). Acknowledge
		// again.
		st := r.ackNow()
		st.dup = true
		return st, nil
	case seg > r.next:
		// Past a gap: kept if the window takes it, until the sender
		// resends the missing ones.
		if seg <= r.winLast && r.ahead[seg] == nil && len(r.ahead) < int(r.window) {
			if r.ahead == nil {
				r.ahead = make(map[uint32][]byte)
			}
			r.ahead[seg] = append([]byte(nil), m[:mad.Size]...)
		}
		return rmppStep{}, nil
	}
	gap := len(r.ahead) > 0
	if err := r.take(m, h); err != nil {
		return rmppStep{}, err
	}
	for !r.done {
		a := r.ahead[r.next]
		if a == nil {
			break
		}
		delete(r.ahead, r.next)
		h.UnmarshalBinary(a)
		if err := r.take(a, h); err != nil {
			return rmppStep{}, err
		}
	}
	last := r.next - 1
	switch {
	case r.done:
		r.ahead = nil
		r.winLast = last
		return rmppStep{ack: true, seg: last, win: last, done: true}, nil
	case last == 1 || last >= r.ackAt || gap:
		r.winLast = max(r.winLast, last+r.window)
		r.ackAt = last + max(1, r.window/2)
		return rmppStep{ack: true, seg: last, win: r.winLast}, nil
	}
	return rmppStep{}, nil
}

// take appends segment m, the next expected, to the message.
func (r *rmppReceiver) take(m []byte, h mad.RMPPHeader) error {
	seg := h.SegmentNumber
	first := h.Flags&mad.RMPPFirst != 0
	if first != (seg == 1) {
		return &rmppProtoError{mad.RMPPStatusBadFirst, fmt.Sprintf("segment %d with First %v", seg, first)}
	}
	per := mad.Size - r.hdrLen
	if seg == 1 {
		// Room for the whole message as the first segment announces it
		// (up to rmppPrealloc: a larger claim grows as the segments
		// come), so that a big table is not copied as it grows.
		r.msg = make([]byte, 0, min(int(h.PayloadLength)+r.hdrLen, rmppPrealloc))
		r.msg = append(r.msg, m[:r.hdrLen]...)
	}
	if len(r.msg)-r.hdrLen+per > rmppMaxMessage {
		return &rmppProtoError{mad.RMPPStatusSegTooBig, fmt.Sprintf("segment %d makes the message longer than %d bytes", seg, rmppMaxMessage)}
	}
	r.msg = append(r.msg, m[r.hdrLen:mad.Size]...)
	r.next++
	if h.Flags&mad.RMPPLast != 0 {
		// The last PayloadLength counts this segment's class header and
		// data: what follows the RMPP header.
		n := int(h.PayloadLength) - (r.hdrLen - mad.RMPPDataStart)
		if n < 0 || n > per {
			return &rmppProtoError{mad.RMPPStatusBadLength, fmt.Sprintf("last segment %d with payload length %d", seg, h.PayloadLength)}
		}
		r.msg = r.msg[:len(r.msg)-per+n]
		r.done = true
	}
	return nil
}

// ackNow returns the ACK that says where the receiver is: the last
// segment received in order and the window granted. It is what a
// duplicate draws, and what goes again when an ACK was lost. Before the
// first segment there is nothing to acknowledge.
func (r *rmppReceiver) ackNow() rmppStep {
	if r.next == 1 {
		return rmppStep{}
	}
	return rmppStep{ack: true, seg: r.next - 1, win: r.winLast}
}

// started reports whether the first segment came.
func (r *rmppReceiver) started() bool { return r.next > 1 }

// message returns the reassembled message: the first segment's headers
// followed by all the data.
func (r *rmppReceiver) message() []byte { return r.msg }

// rmppReply builds an ACK (or ABORT) answering DATA segment m: its first
// hdrLen bytes with the R bit cleared and the RMPP header replaced.
func rmppReply(m []byte, hdrLen int, h mad.RMPPHeader) []byte {
	out := make([]byte, mad.Size)
	copy(out, m[:min(hdrLen, len(m))])
	out[3] &^= byte(mad.ResponseBit)
	h.Version = mad.RMPPVersion
	h.Flags = mad.RMPPActive
	h.MarshalTo(out)
	return out
}

// RMPPReassembler is implemented by a Transport that runs RMPP itself, as
// the kernel does for agents registered with an RMPP version: its Recv
// returns whole messages, and a Transactor over it leaves RMPP alone.
// Over any other transport the Transactor reassembles RMPP responses in
// user space, sending the ACKs.
type RMPPReassembler interface {
	ReassemblesRMPP() bool
}

// RMPPSegments splits an RMPP message (the MAD and class headers, hdrLen
// bytes, then the data) into the DATA segments a sender sends, as the
// kernel's sender does: each repeats the headers and carries the next
// Size-hdrLen bytes of data; the first says the whole payload's length,
// the last its own. The RMPP header's RRespTime is kept from msg.
func RMPPSegments(msg []byte, hdrLen int) [][]byte {
	per := mad.Size - hdrLen
	data := msg[hdrLen:]
	n := max(1, (len(data)+per-1)/per)
	pad := n*per - len(data)
	var in mad.RMPPHeader
	in.UnmarshalBinary(msg)
	segs := make([][]byte, n)
	for i := range segs {
		seg := make([]byte, mad.Size)
		copy(seg, msg[:hdrLen])
		copy(seg[hdrLen:], data[i*per:min(len(data), (i+1)*per)])
		h := mad.RMPPHeader{Version: mad.RMPPVersion, Type: mad.RMPPTypeData, RespTime: in.RespTime, Flags: mad.RMPPActive, SegmentNumber: uint32(i + 1)}
		if i == 0 {
			h.Flags |= mad.RMPPFirst
			h.PayloadLength = uint32(n*(mad.Size-mad.RMPPDataStart) - pad)
		}
		if i == n-1 {
			h.Flags |= mad.RMPPLast
			h.PayloadLength = uint32(mad.Size - mad.RMPPDataStart - pad)
		}
		h.MarshalTo(seg)
		segs[i] = seg
	}
	return segs
}
