package trace

import (
	"bytes"
	"fmt"
	"sort"
)

// EventKind names what happened to a packet that a message alone does not
// show.
type EventKind string

// The event kinds.
const (
	EventMalformed  EventKind = "malformed"    // the packet does not decode
	EventBadICRC    EventKind = "bad-icrc"     // the ICRC does not match; the packet is left out
	EventGap        EventKind = "gap"          // PSNs never captured
	EventDuplicate  EventKind = "duplicate"    // a PSN seen before: a retransmission or a duplicate
	EventOutOfOrder EventKind = "out-of-order" // a PSN below one already seen, not seen before
	EventNAK        EventKind = "nak"          // a NAK
	EventRNRNAK     EventKind = "rnr-nak"      // a receiver-not-ready NAK
	EventCNP        EventKind = "cnp"          // a RoCEv2 congestion notification
	EventPSNJump    EventKind = "psn-jump"     // the PSN jumped far: a new connection on the same QP number
	EventUnmatched  EventKind = "unmatched"    // responses with no request in the capture
)

// Event is one thing the capture shows that is not a whole message.
type Event struct {
	Frame  int       `json:"frame"`
	Kind   EventKind `json:"kind"`
	Src    string    `json:"src,omitempty"`
	Dst    string    `json:"dst,omitempty"`
	QP     uint32    `json:"qp"`
	PSN    uint32    `json:"psn"`
	Count  int       `json:"count,omitempty"` // the PSNs a gap spans
	Detail string    `json:"detail"`
	// TCPSeq is the TCP sequence number of an iWARP event, which has no
	// QP or PSN (Count is then bytes).
	TCPSeq *uint32 `json:"tcpSeq,omitempty"`
}

// QPStats sums up one queue pair and direction: the requests from Src to
// QP at Dst, and the responses and acknowledgements coming back.
type QPStats struct {
	Src       string    `json:"src"`
	Dst       string    `json:"dst"`
	QP        uint32    `json:"qp"`
	PeerQP    *uint32   `json:"peerQP,omitempty"` // the requester's QP, when responses showed it
	Transport Transport `json:"transport"`
	Packets   int       `json:"packets"`
	Messages  int       `json:"messages"`
	Sends     int       `json:"sends"`
	Writes    int       `json:"writes"`
	Reads     int       `json:"reads"`
	Atomics   int       `json:"atomics"`
	Bytes     int64     `json:"bytes"`
	// Incomplete counts messages with a problem.
	Incomplete int `json:"incomplete"`
	// Duplicates counts packets whose PSN was seen before
	// (retransmissions); OutOfOrder those below a PSN seen before;
	// Missing the PSNs never seen.
	Duplicates int `json:"duplicates"`
	OutOfOrder int `json:"outOfOrder"`
	Missing    int `json:"missing"`
	NAKs       int `json:"naks"`
	RNRNAKs    int `json:"rnrNaks"`
	BadICRC    int `json:"badIcrc"`
	CNPs       int `json:"cnps"`
	// Connection is the index in Result.Connections of the connection
	// that set this QP up; 0 when the capture does not show one.
	Connection int `json:"connection,omitempty"`
}

// Result is what a capture holds once reassembled.
type Result struct {
	Frames   int        `json:"frames"`     // frames read
	Packets  int        `json:"packets"`    // RDMA packets among them
	Messages []*Message `json:"messages"`   // in the order their first packet came
	Events   []Event    `json:"events"`     // in frame order
	QPs      []*QPStats `json:"queuePairs"` // in the order they first appeared
	// Connections are the connections whose setup the capture shows (CM
	// REQs, iWARP MPA Requests), in the order they started.
	Connections []*Connection `json:"connections,omitempty"`
}

// unknownQP stands for the QP of requests the capture does not hold.
const unknownQP = 1 << 31

// IsUnknownQP reports whether a QP number stands for one the capture did
// not show.
func IsUnknownQP(qp uint32) bool { return qp == unknownQP }

type flowKey struct {
	src, dst string
	qp       uint32
}

// flow is one requester-to-responder QP: the requests' slots by
// unwrapped PSN, and the responses' on the same PSNs.
type flow struct {
	key      flowKey
	stats    *QPStats
	ref      uint64 // the highest unwrapped PSN seen
	seen     bool
	req      map[uint64][]*Packet
	resp     map[uint64][]*Packet
	acks     map[uint64]*Packet // atomic acknowledgements
	maxReq   uint64
	maxResp  uint64
	haveResp bool
	pmtu     int
}

// Reassembler collects decoded packets and, at Finish, puts them together.
type Reassembler struct {
	frames   int
	packets  int
	flows    map[flowKey]*flow
	order    []*flow
	pairs    map[flowKey]*flow // a response direction's QP → its request flow
	messages []*Message
	events   []Event
}

// NewReassembler returns an empty reassembler.
func NewReassembler() *Reassembler {
	return &Reassembler{flows: map[flowKey]*flow{}, pairs: map[flowKey]*flow{}}
}

func (r *Reassembler) event(p *Packet, kind EventKind, format string, a ...any) *Event {
	r.events = append(r.events, Event{Frame: p.Frame, Kind: kind, Src: p.Src, Dst: p.Dst, QP: p.BTH.DestQP,
		PSN: p.BTH.PSN, Detail: fmt.Sprintf(format, a...)})
	return &r.events[len(r.events)-1]
}

func (r *Reassembler) flowFor(k flowKey, t Transport) *flow {
	f := r.flows[k]
	if f == nil {
		f = &flow{key: k, stats: &QPStats{Src: k.src, Dst: k.dst, QP: k.qp, Transport: t},
			req: map[uint64][]*Packet{}, resp: map[uint64][]*Packet{}, acks: map[uint64]*Packet{}}
		r.flows[k] = f
		r.order = append(r.order, f)
	}
	return f
}

// psnDelta is b-a in 24-bit PSN arithmetic, in [-2^23, 2^23).
func psnDelta(a, b uint32) int64 {
	d := int64((b - a) & 0xffffff)
	if d >= 1<<23 {
		d -= 1 << 24
	}
	return d
}

// jumpPSNs is how far a PSN may move from the highest seen and still
// belong to the same connection: far more than any send queue holds.
const jumpPSNs = 1 << 22

// unwrap places a 24-bit PSN on the flow's 64-bit line next to the
// highest one seen. A jump starts a new stretch far from the old one.
func (f *flow) unwrap(psn uint32) (u uint64, jumped bool) {
	if !f.seen {
		f.seen = true
		f.ref = 1<<40 | uint64(psn)
		return f.ref, false
	}
	d := psnDelta(uint32(f.ref), psn)
	if d > jumpPSNs || d < -jumpPSNs {
		f.ref = (f.ref>>24+256)<<24 | uint64(psn)
		return f.ref, true
	}
	u = uint64(int64(f.ref) + d)
	f.ref = max(f.ref, u)
	return u, false
}

// Add takes the next decoded frame of the capture.
func (r *Reassembler) Add(p *Packet) {
	r.frames++
	if !p.IsRDMA() {
		return
	}
	r.packets++
	if p.Err != nil {
		r.event(p, EventMalformed, "%v", p.Err)
		return
	}
	op := p.BTH.Opcode
	t := op.Transport()
	switch {
	case op == OpcodeCNP:
		f := r.flowFor(flowKey{p.Src, p.Dst, p.BTH.DestQP}, t)
		f.stats.CNPs++
		r.event(p, EventCNP, "congestion notification")
		return
	case t == TransportUD:
		f := r.flowFor(flowKey{p.Src, p.Dst, p.BTH.DestQP}, t)
		f.stats.Packets++
		if p.ICRCStatus == ICRCBad {
			f.stats.BadICRC++
			r.event(p, EventBadICRC, "ICRC %#08x, computed %#08x", p.ICRC, p.WantICRC)
			return
		}
		m := newMessage(p, MsgSend)
		m.add(p)
		m.MAD, m.CM = p.MAD, p.CM
		r.messages = append(r.messages, m)
		return
	case t == TransportVendor:
		return
	}
	if isRequest(op.Operation()) {
		r.addRequest(p, r.flowFor(flowKey{p.Src, p.Dst, p.BTH.DestQP}, t))
	} else {
		r.addResponse(p)
	}
}

func (r *Reassembler) addRequest(p *Packet, f *flow) {
	f.stats.Packets++
	if p.ICRCStatus == ICRCBad {
		f.stats.BadICRC++
		r.event(p, EventBadICRC, "ICRC %#08x, computed %#08x; left out", p.ICRC, p.WantICRC)
		return
	}
	before := f.ref
	u, jumped := f.unwrap(p.BTH.PSN)
	if jumped {
		r.event(p, EventPSNJump, "PSN jumped from %#06x: a new connection on this QP number?", uint32(before)&0xffffff)
	}
	f.slot(r, f.req, u, p, &f.maxReq, true)
}

// slot files a packet under its PSN, reporting duplicates and packets
// that come after higher PSNs.
func (f *flow) slot(r *Reassembler, m map[uint64][]*Packet, u uint64, p *Packet, maxU *uint64, haveMax bool) {
	prev := m[u]
	switch {
	case len(prev) > 0:
		f.stats.Duplicates++
		same := "a retransmission"
		if !bytes.Equal(prev[0].Payload, p.Payload) || prev[0].BTH.Opcode != p.BTH.Opcode {
			same = "different contents from frame " + fmt.Sprint(prev[0].Frame)
		}
		r.event(p, EventDuplicate, "%v PSN %#06x seen before in frame %d: %s", p.BTH.Opcode, p.BTH.PSN, prev[0].Frame, same)
	case haveMax && u < *maxU:
		f.stats.OutOfOrder++
		r.event(p, EventOutOfOrder, "%v PSN %#06x after PSN %#06x (late, or a retransmission of a lost packet)",
			p.BTH.Opcode, p.BTH.PSN, uint32(*maxU)&0xffffff)
	}
	if !haveMax || u > *maxU {
		*maxU = u
	}
	m[u] = append(prev, p)
}

// addResponse files an RDMA READ response or acknowledgement under the
// request flow it answers: the other direction's flow whose PSNs it is
// nearest to, remembered once found.
func (r *Reassembler) addResponse(p *Packet) {
	rk := flowKey{p.Src, p.Dst, p.BTH.DestQP}
	f := r.pairs[rk]
	if f == nil {
		best := int64(jumpPSNs)
		for _, c := range r.order {
			if c.key.src != p.Dst || c.key.dst != p.Src || !c.seen || c.key.qp == unknownQP {
				continue
			}
			if d := psnDelta(uint32(c.ref), p.BTH.PSN); abs(d) < best {
				best, f = abs(d), c
			}
		}
		if f == nil {
			f = r.flowFor(flowKey{p.Dst, p.Src, unknownQP}, p.BTH.Opcode.Transport())
		}
		if f.key.qp != unknownQP {
			r.pairs[rk] = f
			q := p.BTH.DestQP
			f.stats.PeerQP = &q
		}
	}
	f.stats.Packets++
	if p.ICRCStatus == ICRCBad {
		f.stats.BadICRC++
		r.event(p, EventBadICRC, "ICRC %#08x, computed %#08x; left out", p.ICRC, p.WantICRC)
		return
	}
	if a := p.AETH; a != nil {
		switch a.Kind() {
		case AckNAK:
			f.stats.NAKs++
			r.event(p, EventNAK, "%v for PSN %#06x", a, p.BTH.PSN)
		case AckRNRNAK:
			f.stats.RNRNAKs++
			r.event(p, EventRNRNAK, "%v for PSN %#06x", a, p.BTH.PSN)
		}
	}
	op := p.BTH.Opcode.Operation()
	if op == OpAcknowledge {
		return
	}
	u, _ := f.unwrap(p.BTH.PSN)
	if op == OpAtomicAcknowledge {
		f.acks[u] = p
		return
	}
	f.slot(r, f.resp, u, p, &f.maxResp, f.haveResp)
	f.haveResp = true
}

func abs(d int64) int64 {
	if d < 0 {
		return -d
	}
	return d
}

// Finish reassembles the messages of every flow and returns the result.
func (r *Reassembler) Finish() *Result {
	for _, f := range r.order {
		r.walk(f)
	}
	sort.SliceStable(r.messages, func(i, j int) bool { return r.messages[i].Frame < r.messages[j].Frame })
	sort.SliceStable(r.events, func(i, j int) bool { return r.events[i].Frame < r.events[j].Frame })
	res := &Result{Frames: r.frames, Packets: r.packets, Messages: r.messages, Events: r.events}
	for i, m := range r.messages {
		m.Index = i + 1
		k := flowKey{m.Src, m.Dst, m.QP}
		if r.flows[k] == nil {
			continue
		}
		r.flows[k].stats.count(m)
	}
	for _, f := range r.order {
		res.QPs = append(res.QPs, f.stats)
	}
	res.linkCM()
	return res
}

// count adds a message to the statistics of its queue pair (or, for
// iWARP, its connection's direction).
func (s *QPStats) count(m *Message) {
	s.Messages++
	s.Bytes += int64(m.Length)
	if !m.Complete {
		s.Incomplete++
	}
	switch m.Op {
	case MsgSend:
		s.Sends++
	case MsgWrite:
		s.Writes++
	case MsgRead:
		s.Reads++
	case MsgCompareSwap, MsgFetchAdd, MsgAtomicWrite:
		s.Atomics++
	}
}
