package madtest

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// Fate is what becomes of a MAD sent to an RMPPResponder.
type Fate int

// The fates of a MAD sent to an RMPPResponder.
const (
	Take   Fate = iota // it arrives
	Lose               // it is lost without a word, as on a real fabric
	Bounce             // it comes back with status ETIMEDOUT, as ibsim returns a MAD it dropped
)

func (f Fate) String() string {
	switch f {
	case Take:
		return "take"
	case Lose:
		return "lose"
	case Bounce:
		return "bounce"
	}
	return fmt.Sprintf("fate %d", int(f))
}

// RMPPResponder is a Handler side that answers requests the way an SA
// sends long responses: in RMPP DATA segments, segment 1 first and then
// window by window as the requester's ACKs grant, through mad.RMPPSender.
// A request that itself comes in RMPP segments (a GetMulti) has its
// segments acknowledged and is answered once whole.
type RMPPResponder struct {
	// Respond returns the whole response message to a request: the MAD
	// header, RMPP and class headers (HdrLen bytes; the R bit, status and
	// RMPP Active flag set as wanted), then the data. Nil sends nothing.
	Respond func(req *mad.Packet) []byte
	// HdrLen is where the data starts: 56 for the SA.
	HdrLen int
	// Filter, when set, sees each segment about to go out (its number
	// and how many times that segment was sent before in answer to the
	// same request, a resend under another TID included) and returns the
	// packets to send in its place: none to drop it, two to duplicate it.
	Filter func(seg uint32, resends int, p mad.Packet) []mad.Packet
	// Incoming, when set, decides the fate of each MAD sent to the
	// responder (a request, a segment of one, an ACK) before it arrives:
	// h is its RMPP header (zero for a MAD not in RMPP) and seen how many
	// MADs with the same RMPP type and segment number came before it.
	Incoming func(h mad.RMPPHeader, seen int, p *mad.Packet) Fate
	// Resend, when not zero, is how long the responder waits for an ACK
	// before it sends its window again from the first segment not
	// acknowledged (mad.RMPPSender.Timeout), as opensm does; it gives up
	// silently after the sender's retries. Deliver then hands what the
	// timer sends to the requester (Transport.Deliver). With Resend zero
	// a lost segment is recovered only by the requester asking again.
	Resend  time.Duration
	Deliver func(mad.Packet)

	mu      sync.Mutex
	xfer    map[uint64]*rmppSend
	byReq   map[string]uint64 // the TID of each request's latest transfer, by the request's bytes but its TID
	acks    []mad.RMPPHeader
	reqs    map[uint64]*rmppRequest // RMPP requests being received, by TID
	seen    map[[3]uint32]int
	segSent map[uint32]int // sends of each response segment, all transfers
	bounced int
	stopped bool
}

// rmppSend is one response being sent.
type rmppSend struct {
	addr  mad.Address
	s     *madrpc.RMPPSender
	sends map[uint32]int // how many times each segment went out
	timer *time.Timer
}

// rmppRequest is a request being received in RMPP segments.
type rmppRequest struct {
	msg  []byte
	next uint32 // the segment expected next
	done bool
}

// Handle is the Handler: requests start a transfer, ACKs advance it.
func (r *RMPPResponder) Handle(req *mad.Packet) []mad.Packet {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.xfer == nil {
		r.xfer = make(map[uint64]*rmppSend)
		r.seen = make(map[[3]uint32]int)
		r.segSent = make(map[uint32]int)
	}
	tid := TID(req)
	var h mad.RMPPHeader
	active := mad.IsRMPPActive(mad.Class(req.MAD[1]), req.MAD)
	if active {
		h.UnmarshalBinary(req.MAD)
	}
	if r.Incoming != nil {
		k := [3]uint32{0, uint32(h.Type), h.SegmentNumber}
		if active {
			k[0] = 1
		}
		seen := r.seen[k]
		r.seen[k]++
		switch r.Incoming(h, seen, req) {
		case Lose:
			return nil
		case Bounce:
			r.bounced++
			return []mad.Packet{Dropped(req)}
		}
	}
	if active && h.Type == mad.RMPPTypeData && req.MAD[3]&byte(mad.ResponseBit) == 0 {
		// A segment of a request sent with RMPP (a GetMulti): keep it,
		// acknowledge it, and answer the whole request after its last.
		whole, ack := r.takeRequestSegment(req, h)
		var out []mad.Packet
		if ack != nil {
			out = append(out, mad.Packet{MAD: ack, Addr: req.Addr})
		}
		if whole == nil {
			return out
		}
		req = &mad.Packet{MAD: whole, Addr: req.Addr}
		return append(out, r.respond(tid, req)...)
	}
	if active {
		r.acks = append(r.acks, h)
		x := r.xfer[tid]
		if x == nil {
			return nil
		}
		segs, err := x.s.Handle(req.MAD)
		if err != nil || x.s.Done() {
			r.end(tid, x) // complete, or ended by STOP or ABORT
		} else if len(segs) > 0 || h.Type == mad.RMPPTypeAck {
			r.arm(tid, x)
		}
		return r.send(x, segs)
	}
	return r.respond(tid, req)
}

// takeRequestSegment adds one DATA segment of an RMPP request and returns
// the ACK to send, and the whole request after its last segment. Each
// segment in order is acknowledged, and each duplicate; one past a gap is
// dropped, to come again; a first segment starts the request over (the
// Transactor resends a request that timed out from its start).
func (r *RMPPResponder) takeRequestSegment(req *mad.Packet, h mad.RMPPHeader) (whole, ack []byte) {
	if r.reqs == nil {
		r.reqs = make(map[uint64]*rmppRequest)
	}
	tid := TID(req)
	q := r.reqs[tid]
	if h.SegmentNumber == 1 {
		q = &rmppRequest{msg: append([]byte(nil), req.MAD[:r.HdrLen]...), next: 1}
		r.reqs[tid] = q
	}
	if q == nil || h.SegmentNumber > q.next {
		return nil, nil
	}
	if h.SegmentNumber == q.next && !q.done {
		q.msg = append(q.msg, req.MAD[r.HdrLen:mad.Size]...)
		q.next++
		if h.Flags&mad.RMPPLast != 0 {
			per := mad.Size - r.HdrLen
			n := int(h.PayloadLength) - (r.HdrLen - mad.RMPPHeaderOffset - mad.RMPPHeaderLen)
			whole = q.msg[:len(q.msg)-per+n]
			q.done = true
		}
	}
	seg, win := q.next-1, q.next-1+8
	if q.done {
		win = seg
	}
	ack = make([]byte, mad.Size)
	copy(ack, req.MAD[:r.HdrLen])
	(&mad.RMPPHeader{Version: 1, Type: mad.RMPPTypeAck, Flags: mad.RMPPActive, SegmentNumber: seg, PayloadLength: win}).MarshalTo(ack)
	return whole, ack
}

// respond starts the RMPP transfer of the answer to a whole request.
func (r *RMPPResponder) respond(tid uint64, req *mad.Packet) []mad.Packet {
	msg := r.Respond(req)
	if msg == nil {
		return nil
	}
	s, err := madrpc.NewRMPPSender(msg, r.HdrLen)
	if err != nil {
		panic(err) // the test's Respond built a bad message
	}
	x := &rmppSend{addr: req.Addr, s: s, sends: map[uint32]int{}}
	if r.byReq == nil {
		r.byReq = make(map[string]uint64)
	}
	key := string(req.MAD[:8]) + string(req.MAD[16:])
	if prev, ok := r.byReq[key]; ok {
		if old := r.xfer[prev]; old != nil {
			x.sends = old.sends // a resent request: keep counting each segment's sends
			r.end(prev, old)
		}
	}
	r.byReq[key] = tid
	r.xfer[tid] = x
	r.arm(tid, x)
	return r.send(x, s.Start())
}

// arm starts, or starts over, the resend timer of transfer x.
func (r *RMPPResponder) arm(tid uint64, x *rmppSend) {
	if r.Resend == 0 || r.stopped {
		return
	}
	if x.timer == nil {
		x.timer = time.AfterFunc(r.Resend, func() { r.expire(tid, x) })
		return
	}
	x.timer.Reset(r.Resend)
}

// end forgets transfer x.
func (r *RMPPResponder) end(tid uint64, x *rmppSend) {
	if x.timer != nil {
		x.timer.Stop()
	}
	if r.xfer[tid] == x {
		delete(r.xfer, tid)
	}
}

// expire resends x's window after no ACK came in time.
func (r *RMPPResponder) expire(tid uint64, x *rmppSend) {
	r.mu.Lock()
	if r.stopped || r.xfer[tid] != x {
		r.mu.Unlock()
		return
	}
	segs, err := x.s.Timeout()
	var out []mad.Packet
	if err != nil {
		r.end(tid, x)
	} else {
		out = r.send(x, segs)
		x.timer.Reset(r.Resend)
	}
	r.mu.Unlock()
	for _, p := range out {
		r.Deliver(p)
	}
}

// Stop ends the resend timers.
func (r *RMPPResponder) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	for tid, x := range r.xfer {
		r.end(tid, x)
	}
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
		r.segSent[seg]++
	}
	return out
}

// Acks returns the RMPP headers of the ACKs (and ABORTs, STOPs) received.
func (r *RMPPResponder) Acks() []mad.RMPPHeader {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]mad.RMPPHeader(nil), r.acks...)
}

// SegmentSends returns how many times response segment seg went out, in
// every transfer (what Filter lost included).
func (r *RMPPResponder) SegmentSends(seg uint32) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.segSent[seg]
}

// Bounced returns how many MADs Incoming bounced.
func (r *RMPPResponder) Bounced() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bounced
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
