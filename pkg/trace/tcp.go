package trace

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sort"
	"time"
)

// TCPSegment is one TCP segment of a frame, as iWARP travels.
type TCPSegment struct {
	Frame int
	Time  time.Time
	// Src and Dst are "address:port".
	Src, Dst string
	Seq      uint32
	SYN, FIN bool
	RST      bool
	// Payload is what the capture holds; Len the payload's length on the
	// wire (more when the capture cut it).
	Payload []byte
	Len     int
}

// TCP flags.
const (
	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpRST = 0x04
)

// DecodeTCP returns the TCP segment a frame carries (IPv4 or IPv6 behind
// any link type trace reads), or false.
func DecodeTCP(f Frame) (*TCPSegment, bool) {
	b := f.Data
	var typ uint16
	switch f.Link {
	case LinkEthernet:
		if len(b) < 14 {
			return nil, false
		}
		typ, b = binary.BigEndian.Uint16(b[12:]), b[14:]
		for (typ == etherVLAN || typ == etherQinQ) && len(b) >= 4 {
			typ, b = binary.BigEndian.Uint16(b[2:]), b[4:]
		}
	case LinkLinuxSLL:
		if len(b) < 16 {
			return nil, false
		}
		typ, b = binary.BigEndian.Uint16(b[14:]), b[16:]
	case LinkLinuxSLL2:
		if len(b) < 20 {
			return nil, false
		}
		typ, b = binary.BigEndian.Uint16(b), b[20:]
	case LinkRaw:
		if len(b) == 0 {
			return nil, false
		}
		typ = map[byte]uint16{4: etherIPv4, 6: etherIPv6}[b[0]>>4]
	case LinkIPv4:
		typ = etherIPv4
	case LinkIPv6:
		typ = etherIPv6
	default:
		return nil, false
	}
	var src, dst netip.Addr
	var ipLen int
	switch typ {
	case etherIPv4:
		if len(b) < 20 || b[9] != 6 || binary.BigEndian.Uint16(b[6:])&0x3fff != 0 {
			return nil, false
		}
		ihl := int(b[0]&0xf) * 4
		ipLen = int(binary.BigEndian.Uint16(b[2:])) - ihl
		if ihl < 20 || len(b) < ihl {
			return nil, false
		}
		src, dst = netip.AddrFrom4([4]byte(b[12:16])), netip.AddrFrom4([4]byte(b[16:20]))
		b = b[ihl:]
	case etherIPv6:
		if len(b) < 40 || b[6] != 6 {
			return nil, false
		}
		ipLen = int(binary.BigEndian.Uint16(b[4:]))
		src, dst = netip.AddrFrom16([16]byte(b[8:24])).Unmap(), netip.AddrFrom16([16]byte(b[24:40])).Unmap()
		b = b[40:]
	default:
		return nil, false
	}
	if len(b) < 20 {
		return nil, false
	}
	off := int(b[12]>>4) * 4
	if off < 20 || len(b) < off || ipLen < off {
		return nil, false
	}
	flags := b[13]
	s := &TCPSegment{Frame: f.Number, Time: f.Time,
		Src: netip.AddrPortFrom(src, binary.BigEndian.Uint16(b)).String(), Dst: netip.AddrPortFrom(dst, binary.BigEndian.Uint16(b[2:])).String(),
		Seq: binary.BigEndian.Uint32(b[4:]), SYN: flags&tcpSYN != 0, FIN: flags&tcpFIN != 0, RST: flags&tcpRST != 0,
		Len: ipLen - off}
	s.Payload = b[off:min(len(b), off+s.Len)]
	return s, true
}

// tcpStream is one direction of a TCP connection put back in order.
type tcpStream struct {
	src, dst string
	segs     []*TCPSegment
	isn      uint32 // the sequence number of the first payload byte
	haveISN  bool
	base     uint32 // the sequence number of stream offset 0
	closed   int    // the frame of the first FIN or RST, 0 for none
}

// streamPiece is a run of stream bytes with the frames they came in.
type streamPiece struct {
	off    uint64 // stream offset of data[0]
	data   []byte
	frames []pieceFrame
}

// pieceFrame says which frame brought the bytes from stream offset off on.
type pieceFrame struct {
	off   uint64
	frame int
	time  time.Time
}

// frameAt returns the frame that brought the byte at stream offset off.
func (p *streamPiece) frameAt(off uint64) pieceFrame {
	i := sort.Search(len(p.frames), func(i int) bool { return p.frames[i].off > off })
	if i == 0 {
		return p.frames[0]
	}
	return p.frames[i-1]
}

// assemble orders the segments by sequence number and returns the runs of
// contiguous bytes, reporting retransmissions and holes as events.
func (s *tcpStream) assemble(events *[]Event) []*streamPiece {
	base := s.isn
	if !s.haveISN {
		for _, g := range s.segs {
			if g.Len > 0 {
				base = g.Seq
				break
			}
		}
	}
	s.base = base
	type at struct {
		off uint64
		g   *TCPSegment
	}
	var all []at
	// Offsets are unwrapped against the highest seen, so a stream may
	// pass 4 GiB.
	var ref uint64
	for _, g := range s.segs {
		if g.Len == 0 {
			continue
		}
		d := int64(int32(g.Seq - base - uint32(ref)))
		off := int64(ref) + d
		if off < 0 {
			continue // before the stream's start: the handshake's, or lost
		}
		ref = max(ref, uint64(off))
		all = append(all, at{uint64(off), g})
	}
	ev := func(g *TCPSegment, kind EventKind, seq uint32, count int, format string, a ...any) {
		e := Event{Frame: g.Frame, Kind: kind, Src: s.src, Dst: s.dst, Count: count, Detail: fmt.Sprintf(format, a...)}
		e.TCPSeq = &seq
		*events = append(*events, e)
	}
	// In capture order: a segment whose bytes all came before is a
	// retransmission; one below bytes seen before fills a hole late.
	var seen spans
	var high uint64
	dup := map[*TCPSegment]bool{}
	for _, a := range all {
		g, end := a.g, a.off+uint64(a.g.Len)
		switch {
		case seen.covers(a.off, end):
			dup[g] = true
			ev(g, EventDuplicate, g.Seq, 0, "TCP bytes %d-%d seen before: a retransmission", a.off, end-1)
		case a.off < high:
			ev(g, EventOutOfOrder, g.Seq, 0, "TCP bytes %d-%d after bytes up to %d (late, or the retransmission of a lost segment)", a.off, end-1, high-1)
		}
		seen.add(a.off, end)
		high = max(high, end)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].off < all[j].off })
	// A piece's bytes are allocated once, for all that may follow.
	left := 0
	for _, a := range all {
		if !dup[a.g] {
			left += a.g.Len
		}
	}
	var pieces []*streamPiece
	var cur *streamPiece
	var end uint64
	for _, a := range all {
		g, segEnd := a.g, a.off+uint64(a.g.Len)
		if dup[g] || (cur != nil && segEnd <= end) {
			continue
		}
		if cur != nil && a.off > end {
			ev(g, EventGap, uint32(end)+base, int(a.off-end), "TCP bytes %d-%d never captured", end, a.off-1)
			cur = nil
		}
		if len(g.Payload) < g.Len {
			ev(g, EventMalformed, g.Seq, 0, "%d bytes of the TCP segment not in the capture (snap length)", g.Len-len(g.Payload))
		}
		if cur == nil {
			cur = &streamPiece{off: a.off, data: make([]byte, 0, left)}
			pieces = append(pieces, cur)
			end = a.off
		}
		left -= g.Len
		cur.frames = append(cur.frames, pieceFrame{end, g.Frame, g.Time})
		// The bytes from end on; the ones the capture cut are zeros.
		skip := int(end - a.off)
		cur.data = append(cur.data, g.Payload[min(skip, len(g.Payload)):]...)
		if missing := g.Len - max(skip, len(g.Payload)); missing > 0 {
			cur.data = append(cur.data, make([]byte, missing)...)
		}
		end = segEnd
	}
	return pieces
}

// AppendTCPFrame appends an Ethernet frame carrying a TCP segment over
// IPv4 or IPv6 (checksums left zero: trace does not check them), for
// tests and tools that make iWARP captures.
func AppendTCPFrame(b []byte, src, dst netip.AddrPort, seq uint32, flags byte, payload []byte) []byte {
	b = append(b, 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1)
	tcp := binary.BigEndian.AppendUint16(nil, src.Port())
	tcp = binary.BigEndian.AppendUint16(tcp, dst.Port())
	tcp = binary.BigEndian.AppendUint32(tcp, seq)
	tcp = append(tcp, 0, 0, 0, 0, 5<<4, flags|0x10, 0xff, 0xff, 0, 0, 0, 0)
	tcp = append(tcp, payload...)
	if src.Addr().Is4() {
		b = binary.BigEndian.AppendUint16(b, etherIPv4)
		ip := []byte{0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 6, 0, 0}
		binary.BigEndian.PutUint16(ip[2:], uint16(20+len(tcp)))
		s4, d4 := src.Addr().As4(), dst.Addr().As4()
		ip = append(append(ip, s4[:]...), d4[:]...)
		binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip))
		return append(append(b, ip...), tcp...)
	}
	b = binary.BigEndian.AppendUint16(b, etherIPv6)
	ip := []byte{0x60, 0, 0, 0, 0, 0, 6, 64}
	binary.BigEndian.PutUint16(ip[4:], uint16(len(tcp)))
	s6, d6 := src.Addr().As16(), dst.Addr().As16()
	ip = append(append(ip, s6[:]...), d6[:]...)
	return append(append(b, ip...), tcp...)
}
