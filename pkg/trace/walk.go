package trace

import (
	"fmt"
	"sort"
)

// walk puts one flow's packets together in PSN order.
func (r *Reassembler) walk(f *flow) {
	f.pmtu = f.guessPMTU()
	keys := sortedKeys(f.req)
	respKeys := sortedKeys(f.resp)
	used := map[uint64]bool{}
	var cur *Message
	closeCur := func(format string, a ...any) {
		if cur == nil {
			return
		}
		if format != "" {
			cur.incomplete(format, a...)
		}
		cur.finish()
		r.messages = append(r.messages, cur)
		cur = nil
	}
	var expect uint64
	have := false
	skip := map[uint64]bool{} // READ requests that resume an earlier one
	for i, u := range keys {
		if skip[u] {
			continue
		}
		p := f.req[u][0]
		if have && u != expect {
			if u > expect && u-expect <= jumpPSNs {
				r.gap(f, p, expect, u)
				if cur != nil {
					cur.incomplete("PSNs %s missing", psnRange(expect, u-1))
				}
			} else {
				closeCur("the PSNs jump to %#06x before the message ends", p.BTH.PSN)
			}
		}
		have, expect = true, u+1
		op := p.BTH.Opcode.Operation()
		switch kind := op.kind(); kind {
		case MsgSend, MsgWrite:
			pos := op.position()
			if cur != nil && (pos == posFirst || pos == posOnly || cur.Op != kind) {
				closeCur("no Last packet before PSN %#06x", p.BTH.PSN)
			}
			if cur == nil {
				cur = newMessage(p, kind)
				if pos == posMiddle || pos == posLast {
					cur.incomplete("no First packet (lost, or sent before the capture started)")
				}
			}
			cur.add(p)
			if pos == posLast || pos == posOnly {
				closeCur("")
			}
		case MsgRead:
			closeCur("no Last packet before PSN %#06x", p.BTH.PSN)
			m := newMessage(p, MsgRead)
			limit := uint64(1<<63 - 1)
			for _, k := range keys[i+1:] {
				if q := f.req[k][0]; resumes(p, u, q, k) {
					skip[k] = true
					f.stats.Duplicates++
					r.event(q, EventDuplicate, "RDMA READ Request PSN %#06x re-sent from PSN %#06x on (a retried read resumed)",
						p.BTH.PSN, q.BTH.PSN)
					continue
				}
				limit = k
				break
			}
			expect = u + r.readResponses(f, m, u, limit, respKeys, used)
			m.finish()
			r.messages = append(r.messages, m)
		default:
			closeCur("no Last packet before PSN %#06x", p.BTH.PSN)
			m := newMessage(p, kind)
			m.add(p)
			if a := f.acks[u]; a != nil && a.AtomicAckETH != nil {
				m.OriginalData = a.AtomicAckETH
				q := a.BTH.DestQP
				m.SrcQP = &q
			} else if kind == MsgCompareSwap || kind == MsgFetchAdd {
				m.problem("no atomic acknowledgement in the capture")
			}
			r.messages = append(r.messages, m)
		}
	}
	closeCur("no Last packet: the capture ends first")
	r.orphans(f, respKeys, used)
}

// readResponses collects an RDMA READ's responses from PSN u on (up to
// limit, the next request's PSN) into m and returns how many PSNs the
// read took.
func (r *Reassembler) readResponses(f *flow, m *Message, u, limit uint64, respKeys []uint64, used map[uint64]bool) uint64 {
	q, done := u, false
	for q < limit && !done {
		ps := f.resp[q]
		if len(ps) == 0 {
			i := sort.Search(len(respKeys), func(i int) bool { return respKeys[i] > q })
			if i == len(respKeys) || respKeys[i] >= limit || respKeys[i]-q > jumpPSNs {
				break
			}
			r.gap(f, f.resp[respKeys[i]][0], q, respKeys[i])
			m.incomplete("responses at PSNs %s missing", psnRange(q, respKeys[i]-1))
			q = respKeys[i]
			continue
		}
		p := ps[0]
		used[q] = true
		pos := p.BTH.Opcode.Operation().position()
		if q == u && (pos == posMiddle || pos == posLast) {
			m.incomplete("the first response is a %v", p.BTH.Opcode)
		}
		m.add(p)
		m.Responses++
		sq := p.BTH.DestQP
		m.SrcQP = &sq
		done = pos == posLast || pos == posOnly
		q++
	}
	m.Packets++ // the request
	if done {
		return q - u
	}
	want := uint64(1)
	if f.pmtu > 0 && m.DMALength != nil && *m.DMALength > 0 {
		want = (uint64(*m.DMALength) + uint64(f.pmtu) - 1) / uint64(f.pmtu)
	}
	switch {
	case m.Responses == 0:
		m.incomplete("no response in the capture")
	default:
		m.incomplete("no Last response")
	}
	if limit < 1<<62 {
		// The next request's PSN bounds the read; what lies between is lost.
		want = max(want, min(limit-u, jumpPSNs))
		if end := u + want; q < end && m.Responses > 0 {
			r.gapAt(f, m, q, end)
		}
	}
	return max(want, q-u)
}

// gapAt reports PSNs [from, to) missing at the end of a read.
func (r *Reassembler) gapAt(f *flow, m *Message, from, to uint64) {
	f.stats.Missing += int(to - from)
	r.events = append(r.events, Event{Frame: m.LastFrame, Kind: EventGap, Src: f.key.dst, Dst: f.key.src,
		QP: f.key.qp, PSN: uint32(from) & 0xffffff, Count: int(to - from),
		Detail: fmt.Sprintf("RDMA READ responses at PSNs %s never captured", psnRange(from, to-1))})
}

// gap reports PSNs [from, to) that never came, at the packet after them.
func (r *Reassembler) gap(f *flow, next *Packet, from, to uint64) {
	f.stats.Missing += int(to - from)
	r.events = append(r.events, Event{Frame: next.Frame, Kind: EventGap, Src: next.Src, Dst: next.Dst,
		QP: next.BTH.DestQP, PSN: uint32(from) & 0xffffff, Count: int(to - from),
		Detail: fmt.Sprintf("PSNs %s never captured", psnRange(from, to-1))})
}

// resumes reports whether READ request q at PSN k re-asks the rest of READ
// request p at PSN u, as a requester does after losing some responses:
// same R_Key, the address advanced by whole path MTUs for each PSN, the
// length shortened by as much.
func resumes(p *Packet, u uint64, q *Packet, k uint64) bool {
	if q.BTH.Opcode.Operation() != OpReadRequest || p.RETH == nil || q.RETH == nil || k <= u {
		return false
	}
	a, b := p.RETH, q.RETH
	if a.RKey != b.RKey || b.VA <= a.VA {
		return false
	}
	adv := b.VA - a.VA
	for mtu := uint64(256); mtu <= 4096; mtu *= 2 {
		if adv == (k-u)*mtu && uint64(a.DMALength) > adv && uint64(b.DMALength) == uint64(a.DMALength)-adv {
			return true
		}
	}
	return false
}

// orphans turns responses no request claimed into RDMA READ messages
// whose request the capture lacks.
func (r *Reassembler) orphans(f *flow, respKeys []uint64, used map[uint64]bool) {
	var m *Message
	flush := func() {
		if m != nil {
			m.finish()
			r.messages = append(r.messages, m)
			r.events = append(r.events, Event{Frame: m.Frame, Kind: EventUnmatched, Src: f.key.dst, Dst: f.key.src,
				QP: f.key.qp, PSN: m.FirstPSN, Count: m.Responses,
				Detail: fmt.Sprintf("%d RDMA READ responses with no request in the capture", m.Responses)})
			m = nil
		}
	}
	var last uint64
	for _, u := range respKeys {
		if used[u] {
			continue
		}
		p := f.resp[u][0]
		pos := p.BTH.Opcode.Operation().position()
		if m != nil && (u != last+1 || pos == posFirst || pos == posOnly) {
			flush()
		}
		if m == nil {
			m = &Message{Frame: p.Frame, LastFrame: p.Frame, Time: p.Time, Src: f.key.src, Dst: f.key.dst,
				Transport: p.BTH.Opcode.Transport(), Op: MsgRead, QP: f.key.qp, FirstPSN: p.BTH.PSN}
			q := p.BTH.DestQP
			m.SrcQP = &q
			m.incomplete("no RDMA READ Request in the capture")
		}
		m.add(p)
		m.Responses++
		last = u
		if pos == posLast || pos == posOnly {
			flush()
		}
	}
	flush()
}

// guessPMTU returns the flow's path MTU: the payload of any First or
// Middle packet, which are always full; 0 when there is none.
func (f *flow) guessPMTU() int {
	mtu := 0
	for _, m := range []map[uint64][]*Packet{f.req, f.resp} {
		for _, ps := range m {
			if pos := ps[0].BTH.Opcode.Operation().position(); pos == posFirst || pos == posMiddle {
				mtu = max(mtu, ps[0].PayloadLen)
			}
		}
	}
	return mtu
}

func sortedKeys(m map[uint64][]*Packet) []uint64 {
	keys := make([]uint64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// psnRange prints unwrapped PSNs [a, b] as 24-bit ones.
func psnRange(a, b uint64) string {
	if a == b {
		return fmt.Sprintf("%#06x", uint32(a)&0xffffff)
	}
	return fmt.Sprintf("%#06x-%#06x", uint32(a)&0xffffff, uint32(b)&0xffffff)
}
