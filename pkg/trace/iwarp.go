package trace

import (
	"fmt"
	"sort"
	"time"
)

// EventBadCRC marks an MPA FPDU whose CRC32c does not match.
const EventBadCRC EventKind = "bad-crc"

// IWARPReassembler collects the TCP segments of a capture and, at Finish,
// finds the iWARP connections among them (by their MPA start frames, or
// segments that are exactly one FPDU) and puts their RDMAP messages
// together: every Send, RDMA Write and RDMA Read (the request matched with
// its responses), as Messages like the RoCE and InfiniBand ones.
type IWARPReassembler struct {
	frames  int
	streams map[[2]string]*tcpStream
	order   []*tcpStream
	// tries counts a direction's data segments that did not look like
	// iWARP; after maxTries it is passed over for good.
	tries map[[2]string]int
}

// maxTries is how many data segments of a TCP direction may fail to look
// like iWARP (a capture that starts in the middle of an FPDU) before the
// direction is passed over.
const maxTries = 16

// NewIWARPReassembler returns an empty reassembler.
func NewIWARPReassembler() *IWARPReassembler {
	return &IWARPReassembler{streams: map[[2]string]*tcpStream{}, tries: map[[2]string]int{}}
}

// Add takes the next frame of the capture.
func (r *IWARPReassembler) Add(f Frame) {
	r.frames++
	g, ok := DecodeTCP(f)
	if !ok {
		return
	}
	k := [2]string{g.Src, g.Dst}
	s := r.streams[k]
	if s == nil {
		if r.tries[k] >= maxTries {
			return
		}
		if g.Len == 0 && !g.SYN {
			return
		}
		// Keep a direction once its first data looks like MPA, or the
		// other direction is kept; a SYN is kept for its sequence number.
		if g.Len > 0 && !r.keep(k, g) {
			r.tries[k]++
			return
		}
		s = &tcpStream{src: g.Src, dst: g.Dst}
		r.streams[k] = s
		r.order = append(r.order, s)
	}
	if g.SYN {
		s.isn, s.haveISN = g.Seq+1, true
	}
	if (g.FIN || g.RST) && s.closed == 0 {
		s.closed = g.Frame
	}
	if g.Len > 0 || g.SYN {
		s.segs = append(s.segs, g)
	}
}

func (r *IWARPReassembler) keep(k [2]string, g *TCPSegment) bool {
	if r.streams[[2]string{k[1], k[0]}] != nil && len(r.streams[[2]string{k[1], k[0]}].segs) > 0 {
		return true
	}
	if isMPAStart(g.Payload) {
		return true
	}
	_, ok := looksLikeFPDU(g.Payload)
	return ok
}

// iwDir is one direction of an iWARP connection: its TCP bytes, the MPA
// start frame it sent, the markers and CRCs it uses, its DDP segments.
type iwDir struct {
	s        *tcpStream
	start    *MPAStartFrame
	segs     []*iwSeg
	markers  bool
	crc      bool
	isIWARP  bool
	pieces   []*streamPiece
	fpduBase uint64 // stream offset of the first FPDU byte
	stats    *QPStats
	// startFrame and startLast are the frames the MPA start frame came in.
	startFrame, startLast int
	startTime             time.Time
}

// iwSeg is a DDP segment with the frames its FPDU came in.
type iwSeg struct {
	*DDPSegment
	frame, lastFrame int
	time             time.Time
	seq              uint32 // the TCP sequence number of its FPDU
}

// Finish frames every iWARP direction's FPDUs and returns its messages,
// events and per-direction statistics.
func (r *IWARPReassembler) Finish() *Result {
	res := &Result{Frames: r.frames}
	dirs := map[[2]string]*iwDir{}
	var order []*iwDir
	for _, s := range r.order {
		d := &iwDir{s: s, pieces: s.assemble(&res.Events)}
		d.stats = &QPStats{Src: s.src, Dst: s.dst, Transport: TransportIWARP}
		for _, g := range s.segs {
			if g.Len > 0 {
				d.stats.Packets++
			}
		}
		dirs[[2]string{s.src, s.dst}] = d
		order = append(order, d)
		if len(d.pieces) > 0 && d.pieces[0].off == 0 {
			if f, n, err := DecodeMPAStart(d.pieces[0].data); err == nil {
				d.start, d.fpduBase, d.isIWARP = f, uint64(n), true
				first := d.pieces[0].frameAt(0)
				d.startFrame, d.startTime = first.frame, first.time
				d.startLast = d.pieces[0].frameAt(uint64(n - 1)).frame
			}
		}
	}
	// Markers and CRC as the start frames negotiated: each side's M says
	// it wants markers in what it receives; either side's C turns CRCs on.
	for _, d := range order {
		peer := dirs[[2]string{d.s.dst, d.s.src}]
		switch {
		case d.start != nil && peer != nil && peer.start != nil:
			d.markers = peer.start.Markers
			d.crc = d.start.CRC || peer.start.CRC
		case d.start != nil:
			d.crc = d.start.CRC
		case len(d.pieces) > 0:
			if peer != nil && peer.start != nil {
				d.isIWARP = true
				d.fpduBase = 0
			}
			first := d.pieces[0]
			end := first.off + uint64(len(first.data))
			if len(first.frames) > 1 {
				end = first.frames[1].off
			}
			if crc, ok := looksLikeFPDU(first.data[:end-first.off]); ok {
				d.isIWARP, d.crc, d.fpduBase = true, crc, first.off
			}
		}
	}
	for _, d := range order {
		if !d.isIWARP {
			continue
		}
		d.frame(res)
		res.Packets += d.stats.Packets
		res.QPs = append(res.QPs, d.stats)
	}
	for _, d := range order {
		if d.isIWARP {
			d.messages(res, dirs[[2]string{d.s.dst, d.s.src}])
		}
	}
	r.startFrames(res, order, dirs)
	sort.SliceStable(res.Messages, func(i, j int) bool { return res.Messages[i].Frame < res.Messages[j].Frame })
	sort.SliceStable(res.Events, func(i, j int) bool { return res.Events[i].Frame < res.Events[j].Frame })
	var kept []Event
	for _, e := range res.Events {
		if d := dirs[[2]string{e.Src, e.Dst}]; d != nil && d.isIWARP {
			kept = append(kept, e)
			switch e.Kind {
			case EventDuplicate:
				d.stats.Duplicates++
			case EventOutOfOrder:
				d.stats.OutOfOrder++
			case EventGap:
				d.stats.Missing += e.Count
			case EventBadCRC:
				d.stats.BadICRC++
			}
		}
	}
	res.Events = kept
	for i, m := range res.Messages {
		m.Index = i + 1
	}
	return res
}

// startFrames adds each MPA Request and Reply as a message, and the
// connection they set up, named on the connection's messages and
// directions.
func (r *IWARPReassembler) startFrames(res *Result, order []*iwDir, dirs map[[2]string]*iwDir) {
	conns := map[[2]string]*Connection{}
	for _, d := range order {
		if d.start == nil {
			continue
		}
		op := MsgMPAReply
		if d.start.Request {
			op = MsgMPARequest
		}
		m := &Message{Frame: d.startFrame, LastFrame: d.startLast, Time: d.startTime, Src: d.s.src, Dst: d.s.dst,
			Transport: TransportIWARP, Op: op, Packets: 1, Length: len(d.start.PrivateData),
			Payload: d.start.PrivateData, Complete: true, MPA: d.start}
		res.Messages = append(res.Messages, m)
		if !d.start.Request {
			continue
		}
		c := iwarpConnection(len(res.Connections)+1, d, dirs[[2]string{d.s.dst, d.s.src}])
		res.Connections = append(res.Connections, c)
		conns[[2]string{d.s.src, d.s.dst}], conns[[2]string{d.s.dst, d.s.src}] = c, c
	}
	if len(conns) == 0 {
		return
	}
	for _, m := range res.Messages {
		if c := conns[[2]string{m.Src, m.Dst}]; c != nil {
			m.Connection = c.Index
		}
	}
	for _, s := range res.QPs {
		if c := conns[[2]string{s.Src, s.Dst}]; c != nil {
			s.Connection = c.Index
		}
	}
}

// frame reads the direction's FPDUs, resynchronizing after holes at a
// marker or a segment start.
func (d *iwDir) frame(res *Result) {
	ev := func(frame int, kind EventKind, at uint64, format string, a ...any) {
		seq := d.s.base + uint32(d.fpduBase+at)
		res.Events = append(res.Events, Event{Frame: frame, Kind: kind, Src: d.s.src, Dst: d.s.dst, TCPSeq: &seq,
			Detail: fmt.Sprintf(format, a...)})
	}
	for pi, p := range d.pieces {
		rd := &mpaReader{data: p.data, markers: d.markers, crc: d.crc}
		// Stream offsets from the first FPDU byte.
		if p.off < d.fpduBase {
			if p.off+uint64(len(p.data)) <= d.fpduBase {
				continue
			}
			rd.data = p.data[d.fpduBase-p.off:]
			rd.base = 0
		} else {
			rd.base = p.off - d.fpduBase
		}
		at := rd.base
		if pi > 0 || p.off > d.fpduBase {
			at = d.resync(rd, p)
		}
		for at < rd.base+uint64(len(rd.data)) {
			f, err := rd.read(at)
			first := p.frameAt(at + d.fpduBase)
			if err != nil {
				ev(first.frame, EventMalformed, at, "stream bytes %d on: %v", at, err)
				break
			}
			last := p.frameAt(f.end - 1 + d.fpduBase)
			if f.marker != "" {
				ev(first.frame, EventMalformed, at, "FPDU at stream byte %d: %s", at, f.marker)
			}
			if f.crcStatus == ICRCBad {
				ev(first.frame, EventBadCRC, at, "FPDU at stream byte %d: CRC32c %#08x, computed %#08x; left out", at, f.crc, f.want)
				at = f.end
				continue
			}
			seg, err := DecodeDDP(f.ulpdu)
			if err != nil {
				ev(first.frame, EventMalformed, at, "FPDU at stream byte %d: %v", at, err)
				at = f.end
				continue
			}
			d.segs = append(d.segs, &iwSeg{DDPSegment: seg, frame: first.frame, lastFrame: last.frame, time: first.time,
				seq: d.s.base + uint32(d.fpduBase+at)})
			at = f.end
		}
	}
}

// resync finds where the first whole FPDU of a piece that follows a hole
// starts: from a marker's pointer, or at the first segment start where an
// FPDU with a plausible DDP header (and good CRC) begins.
func (d *iwDir) resync(rd *mpaReader, p *streamPiece) uint64 {
	end := rd.base + uint64(len(rd.data))
	if d.markers {
		m := (rd.base + mpaMarkerSpacing - 1) / mpaMarkerSpacing * mpaMarkerSpacing
		for ; m+mpaMarkerLen <= end; m += mpaMarkerSpacing {
			i := m - rd.base
			ptr := uint64(rd.data[i+2])<<8 | uint64(rd.data[i+3])
			if ptr <= m && m-ptr >= rd.base {
				return m - ptr
			}
		}
	}
	for _, f := range p.frames {
		at := f.off - d.fpduBase
		if f.off < d.fpduBase || at < rd.base {
			continue
		}
		if fp, err := rd.read(at); err == nil && fp.crcStatus != ICRCBad && plausibleDDP(fp.ulpdu) {
			return at
		}
	}
	return end
}

// messages turns the direction's DDP segments into Sends, RDMA Writes and
// (matched with the peer's Read Requests) RDMA Reads.
func (d *iwDir) messages(res *Result, peer *iwDir) {
	newMsg := func(s *iwSeg, op MessageOp, src, dst string) *Message {
		return &Message{Frame: s.frame, LastFrame: s.lastFrame, Time: s.time, Src: src, Dst: dst,
			Transport: TransportIWARP, Op: op, Complete: true}
	}
	add := func(m *Message, s *iwSeg) {
		m.Packets++
		m.LastFrame = max(m.LastFrame, s.lastFrame)
		m.Length += len(s.Payload)
	}
	sends := map[uint32]*Message{}
	var sendOrder []uint32
	sendHave := map[uint32]*spans{}
	var cur *Message // the RDMA Write or Read Response being put together
	var curTO uint64
	var reqs []*Message // the peer's Read Requests, in order
	var reqBodies []*ReadRequest
	if peer != nil {
		for _, s := range peer.segs {
			if !s.Tagged && s.Opcode == RDMAPReadRequest && s.Read != nil {
				m := newMsg(s, MsgRead, peer.s.src, peer.s.dst)
				r := s.Read
				m.RKey, m.VA, m.DMALength = &r.SrcSTag, &r.SrcTO, &r.Size
				m.FirstPSN, m.LastPSN = s.MSN, s.MSN
				m.Packets = 1
				reqs = append(reqs, m)
				reqBodies = append(reqBodies, r)
			}
		}
	}
	closeCur := func(problem string) {
		if cur == nil {
			return
		}
		if problem != "" {
			cur.incomplete("%s", problem)
		}
		if cur.Op == MsgWrite {
			res.Messages = append(res.Messages, cur)
			d.count(cur)
		} else if peer != nil {
			peer.count(cur) // a read counts with its requester
		}
		cur = nil
	}
	for _, s := range d.segs {
		switch {
		case !s.Tagged && s.QN == 0:
			m := sends[s.MSN]
			if m == nil {
				m = newMsg(s, MsgSend, d.s.src, d.s.dst)
				m.FirstPSN, m.LastPSN = s.MSN, s.MSN
				sends[s.MSN] = m
				sendOrder = append(sendOrder, s.MSN)
				sendHave[s.MSN] = &spans{}
				m.Complete = false
			}
			if s.Opcode == RDMAPSendInv || s.Opcode == RDMAPSendSEInv {
				v := s.RsvdULP
				m.InvalidateRKey = &v
			}
			end := int(s.MO) + len(s.Payload)
			if end > maxSegmentBuffer {
				m.incomplete("message offset %d past %d bytes", s.MO, maxSegmentBuffer)
				continue
			}
			if len(m.Payload) < end {
				m.Payload = append(m.Payload, make([]byte, end-len(m.Payload))...)
			}
			copy(m.Payload[s.MO:], s.Payload)
			sendHave[s.MSN].add(uint64(s.MO), uint64(end))
			add(m, s)
			if s.Last {
				m.Complete = true // checked for holes below
			}
		case !s.Tagged && s.QN == 1:
			// Read Requests are matched from the responder's side.
		case !s.Tagged && s.QN == 2:
			seq := s.seq
			res.Events = append(res.Events, Event{Frame: s.frame, Kind: EventNAK, Src: d.s.src, Dst: d.s.dst, TCPSeq: &seq,
				Detail: fmt.Sprintf("RDMAP Terminate (%d bytes of terminate header and data)", len(s.Payload))})
		case s.Tagged && (s.Opcode == RDMAPWrite || s.Opcode == RDMAPReadResponse):
			if cur != nil && (cur.Op == MsgWrite) != (s.Opcode == RDMAPWrite) {
				closeCur("no Last segment")
			}
			if cur != nil && (cur.Op == MsgWrite && *cur.RKey != s.STag || s.TO != curTO) {
				closeCur("no Last segment")
			}
			if cur == nil {
				if s.Opcode == RDMAPWrite {
					cur = newMsg(s, MsgWrite, d.s.src, d.s.dst)
					stag, to := s.STag, s.TO
					cur.RKey, cur.VA = &stag, &to
				} else if j := matchRead(reqBodies, s); j >= 0 {
					// Responses come in the order of the requests; those
					// passed over lost theirs.
					for _, m := range reqs[:j] {
						m.incomplete("no RDMA Read Response in the capture")
						res.Messages = append(res.Messages, m)
						peer.count(m)
					}
					cur = reqs[j]
					if s.TO != reqBodies[j].SinkTO {
						cur.incomplete("the first response goes to offset %#x, the request asked for %#x", s.TO, reqBodies[j].SinkTO)
					}
					reqs, reqBodies = reqs[j+1:], reqBodies[j+1:]
					res.Messages = append(res.Messages, cur)
				} else {
					cur = newMsg(s, MsgRead, d.s.dst, d.s.src)
					cur.incomplete("no RDMA Read Request in the capture")
					seq := s.seq
					res.Events = append(res.Events, Event{Frame: s.frame, Kind: EventUnmatched, Src: d.s.src, Dst: d.s.dst, TCPSeq: &seq,
						Detail: fmt.Sprintf("RDMA Read Response to STag %#08x with no request in the capture", s.STag)})
					stag, to := s.STag, s.TO
					cur.RKey, cur.VA = &stag, &to
					res.Messages = append(res.Messages, cur)
				}
				curTO = s.TO
			}
			cur.Payload = append(cur.Payload, s.Payload...)
			add(cur, s)
			if s.Opcode == RDMAPReadResponse {
				cur.Responses++
			}
			curTO = s.TO + uint64(len(s.Payload))
			if s.Last {
				cur.finish()
				closeCur("")
			}
		}
	}
	closeCur("no Last segment: the capture ends first")
	for _, m := range reqs {
		m.incomplete("no RDMA Read Response in the capture")
		res.Messages = append(res.Messages, m)
		peer.count(m)
	}
	for _, msn := range sendOrder {
		m := sends[msn]
		if !m.Complete {
			m.problem("no Last segment")
		}
		for _, g := range sendHave[msn].gaps(uint64(len(m.Payload))) {
			m.incomplete("bytes %d-%d of the message never captured", g[0], g[1]-1)
		}
		res.Messages = append(res.Messages, m)
		d.count(m)
	}
}

// count adds a message to its direction's statistics.
func (d *iwDir) count(m *Message) { d.stats.count(m) }

// MergeResults joins the RoCE/InfiniBand result a and the iWARP result b
// of the same capture, messages and events in frame order.
func MergeResults(a, b *Result) *Result {
	out := &Result{Frames: max(a.Frames, b.Frames), Packets: a.Packets + b.Packets}
	out.Messages = append(append(out.Messages, a.Messages...), b.Messages...)
	out.Events = append(append(out.Events, a.Events...), b.Events...)
	out.QPs = append(append(out.QPs, a.QPs...), b.QPs...)
	// b's connections follow a's.
	n := len(a.Connections)
	for _, c := range b.Connections {
		c.Index += n
	}
	for _, m := range b.Messages {
		if m.Connection > 0 {
			m.Connection += n
		}
	}
	for _, s := range b.QPs {
		if s.Connection > 0 {
			s.Connection += n
		}
	}
	out.Connections = append(append(out.Connections, a.Connections...), b.Connections...)
	sort.SliceStable(out.Messages, func(i, j int) bool { return out.Messages[i].Frame < out.Messages[j].Frame })
	sort.SliceStable(out.Events, func(i, j int) bool { return out.Events[i].Frame < out.Events[j].Frame })
	for i, m := range out.Messages {
		m.Index = i + 1
	}
	return out
}

// matchRead returns which of the outstanding Read Requests the first
// Read Response segment s answers: the first with its sink STag and
// offset, or failing that the first with its sink STag; -1 for none.
func matchRead(reqs []*ReadRequest, s *iwSeg) int {
	first := -1
	for j, r := range reqs {
		if r.SinkSTag != s.STag {
			continue
		}
		if r.SinkTO == s.TO {
			return j
		}
		if first < 0 {
			first = j
		}
	}
	return first
}
