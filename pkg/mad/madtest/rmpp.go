package madtest

import (
	"encoding/binary"
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"
)

// RMPPResponder is a Handler side that answers requests the way an SA
// sends long responses: in RMPP DATA segments, segment 1 first and then
// window by window as the requester's ACKs grant, through mad.RMPPSender
// (without its resend timer: a lost segment is recovered by the requester
// resending the request). A request that itself comes in RMPP segments (a
// GetMulti) has each segment acknowledged and is answered once whole.
type RMPPResponder struct {
	// Respond returns the whole response message to a request: the MAD
	// header, RMPP and class headers (HdrLen bytes; the R bit, status and
	// RMPP Active flag set as wanted), then the data. Nil sends nothing.
	Respond func(req *mad.Packet) []byte
	// HdrLen is where the data starts: 56 for the SA.
	HdrLen int
	// Filter, when set, sees each segment about to go out (its number
	// and how many times that segment was sent before) and returns the
	// packets to send in its place: none to drop it, two to duplicate it.
	Filter func(seg uint32, resends int, p mad.Packet) []mad.Packet

	mu   sync.Mutex
	xfer map[uint64]*rmppSend
	acks []mad.RMPPHeader
	reqs map[uint64][]byte // RMPP requests being received, by TID
}

// rmppSend is one response being sent.
type rmppSend struct {
	addr  mad.Address
	s     *mad.RMPPSender
	sends map[uint32]int // how many times each segment went out
}

// Handle is the Handler: requests start a transfer, ACKs advance it.
func (r *RMPPResponder) Handle(req *mad.Packet) []mad.Packet {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.xfer == nil {
		r.xfer = make(map[uint64]*rmppSend)
	}
	tid := TID(req)
	var h mad.RMPPHeader
	h.UnmarshalBinary(req.MAD)
	if mad.IsRMPPActive(mad.Class(req.MAD[1]), req.MAD) && h.Type == mad.RMPPTypeData && req.MAD[3]&byte(mad.ResponseBit) == 0 {
		// A segment of a request sent with RMPP (a GetMulti): keep it,
		// acknowledge it, and answer the whole request after its last.
		whole, ack := r.takeRequestSegment(req, h)
		out := []mad.Packet{{MAD: ack, Addr: req.Addr}}
		if whole == nil {
			return out
		}
		req = &mad.Packet{MAD: whole, Addr: req.Addr}
		return append(out, r.respond(tid, req)...)
	}
	if mad.IsRMPPActive(mad.Class(req.MAD[1]), req.MAD) {
		r.acks = append(r.acks, h)
		x := r.xfer[tid]
		if x == nil {
			return nil
		}
		segs, err := x.s.Handle(req.MAD)
		if err != nil || x.s.Done() {
			delete(r.xfer, tid) // complete, or ended by STOP or ABORT
		}
		return r.send(x, segs)
	}
	return r.respond(tid, req)
}

// takeRequestSegment adds one DATA segment of an RMPP request (in order;
// the Transactor sends them so) and returns the ACK to send, and the
// whole request after its last segment.
func (r *RMPPResponder) takeRequestSegment(req *mad.Packet, h mad.RMPPHeader) (whole, ack []byte) {
	if r.reqs == nil {
		r.reqs = make(map[uint64][]byte)
	}
	tid := TID(req)
	per := mad.Size - r.HdrLen
	if h.SegmentNumber == 1 {
		r.reqs[tid] = append([]byte(nil), req.MAD[:r.HdrLen]...)
	}
	r.reqs[tid] = append(r.reqs[tid], req.MAD[r.HdrLen:mad.Size]...)
	ack = make([]byte, mad.Size)
	copy(ack, req.MAD[:r.HdrLen])
	win := h.SegmentNumber + 8
	last := h.Flags&mad.RMPPLast != 0
	if last {
		win = h.SegmentNumber
		n := int(h.PayloadLength) - (r.HdrLen - mad.RMPPHeaderOffset - mad.RMPPHeaderLen)
		whole = r.reqs[tid][:len(r.reqs[tid])-per+n]
		delete(r.reqs, tid)
	}
	(&mad.RMPPHeader{Version: 1, Type: mad.RMPPTypeAck, Flags: mad.RMPPActive, SegmentNumber: h.SegmentNumber, PayloadLength: win}).MarshalTo(ack)
	return whole, ack
}

// respond starts the RMPP transfer of the answer to a whole request.
func (r *RMPPResponder) respond(tid uint64, req *mad.Packet) []mad.Packet {
	msg := r.Respond(req)
	if msg == nil {
		return nil
	}
	s, err := mad.NewRMPPSender(msg, r.HdrLen)
	if err != nil {
		panic(err) // the test's Respond built a bad message
	}
	x := &rmppSend{addr: req.Addr, s: s, sends: map[uint32]int{}}
	if old := r.xfer[tid]; old != nil {
		x.sends = old.sends // a resent request: keep counting each segment's sends
	}
	r.xfer[tid] = x
	return r.send(x, s.Start())
}

// send sends segments through Filter.
func (r *RMPPResponder) send(x *rmppSend, segs [][]byte) []mad.Packet {
	var out []mad.Packet
	for _, m := range segs {
		var h mad.RMPPHeader
		h.UnmarshalBinary(m)
		seg := h.SegmentNumber
		p := mad.Packet{MAD: append([]byte(nil), m...), Addr: x.addr}
		if r.Filter != nil {
			out = append(out, r.Filter(seg, x.sends[seg], p)...)
		} else {
			out = append(out, p)
		}
		x.sends[seg]++
	}
	return out
}

// Acks returns the RMPP headers of the ACKs (and ABORTs, STOPs) received.
func (r *RMPPResponder) Acks() []mad.RMPPHeader {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]mad.RMPPHeader(nil), r.acks...)
}

// SAResponse returns an SA response message to req: req's MAD header and
// SA header with the R bit, status st, the RMPP Active flag (version 1,
// DATA) and AttributeOffset recLen/8, followed by the records.
func SAResponse(req *mad.Packet, st mad.Status, recLen int, records ...[]byte) []byte {
	const hdr = 56
	m := make([]byte, hdr, hdr+len(records)*recLen)
	copy(m, req.MAD[:hdr])
	m[3] |= byte(mad.ResponseBit)
	binary.BigEndian.PutUint16(m[4:], uint16(st))
	(&mad.RMPPHeader{Version: 1, Type: mad.RMPPTypeData, Flags: mad.RMPPActive}).MarshalTo(m)
	binary.BigEndian.PutUint16(m[44:], uint16(recLen/8))
	for _, rec := range records {
		r := make([]byte, recLen)
		copy(r, rec)
		m = append(m, r...)
	}
	return m
}
