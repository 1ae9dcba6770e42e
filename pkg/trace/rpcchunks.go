package trace

import (
	"fmt"
	"sort"
	"time"
)

// ChunkKind says which list of an RPC-over-RDMA header a chunk is from.
type ChunkKind string

// The chunk kinds: read chunks are pulled by the responder with RDMA
// READs, write chunks and the reply chunk pushed by it with RDMA WRITEs.
const (
	ChunkRead  ChunkKind = "read"
	ChunkWrite ChunkKind = "write"
	ChunkReply ChunkKind = "reply"
)

// SegmentData is what the capture shows moving one chunk segment: the
// RDMA READs or WRITEs with its handle whose addresses fall in it.
type SegmentData struct {
	RDMASegment
	// Found counts the distinct bytes the capture holds; Ops the RDMA
	// READs or WRITEs that moved them (one segment may take several);
	// Packets their READ responses or WRITE packets.
	Found   int `json:"found"`
	Ops     int `json:"ops"`
	Packets int `json:"packets"`
	// Repeated counts operations that moved bytes already found: a
	// retried READ or a WRITE sent again.
	Repeated int `json:"repeated,omitempty"`
	// Messages are the indexes of the RDMA messages that moved it.
	Messages []int `json:"messages,omitempty"`
	// Missing are the byte ranges [from, to) of the segment no operation
	// in the capture moved.
	Missing [][2]uint64 `json:"missing,omitempty"`

	data []byte
	have spans
}

// Chunk is one chunk of an RPC-over-RDMA message with its data put
// together from its segments.
type Chunk struct {
	Kind ChunkKind `json:"kind"`
	// Index numbers chunks of a kind from 1 (the reply chunk is 1).
	Index int `json:"index"`
	// Position is a read chunk's XDR position in the RPC call.
	Position uint32         `json:"position"`
	Segments []*SegmentData `json:"segments"`
	Length   int            `json:"length"`
	Complete bool           `json:"complete"`
	Data     []byte         `json:"-"`
}

// Ops sums the RDMA operations and packets that moved the chunk.
func (c *Chunk) Ops() (ops, packets int) {
	for _, s := range c.Segments {
		ops += s.Ops
		packets += s.Packets
	}
	return ops, packets
}

// RPCRDMAMessage is one RPC-over-RDMA message: the SEND that carried its
// transport header, the chunks the RDMA READs and WRITEs around it moved,
// and the RPC call or reply put back together from them.
type RPCRDMAMessage struct {
	// Index numbers RPC-over-RDMA messages from 1; Send is the index of
	// the SEND message that carried the header.
	Index     int       `json:"index"`
	Send      int       `json:"send"`
	Frame     int       `json:"frame"`
	LastFrame int       `json:"lastFrame"`
	Time      time.Time `json:"time"`
	Src       string    `json:"src"`
	Dst       string    `json:"dst"`
	Transport Transport `json:"transport"`
	QP        uint32    `json:"qp"`
	// Call is true for a call (requester to responder), false for a
	// reply; Peer is the index of the other one, 0 when the capture lacks
	// it.
	Call   bool           `json:"call"`
	Peer   int            `json:"peer,omitempty"`
	Header *RPCRDMAHeader `json:"header,omitempty"`
	// Inline is the size of the RPC message bytes the SEND carried after
	// the header.
	Inline int      `json:"inline"`
	Chunks []*Chunk `json:"chunks,omitempty"`
	// RPC is the whole RPC message: the inline bytes with the read chunks
	// at their positions (a call), the reply chunk (RDMA_NOMSG), the write
	// chunks where the upper layer puts them.
	RPC       []byte `json:"-"`
	RPCLength int    `json:"rpcLength"`
	Complete  bool   `json:"complete"`
	// Problems say what is missing: which chunk, handle and bytes.
	Problems []string `json:"problems,omitempty"`
	// psn is the SEND's first PSN, for operations the capture has after
	// it that went before it (sentBefore).
	psn uint32
	// ONC is the RPC header; NFS what an NFS call or reply says.
	ONC *ONCRPC `json:"rpc,omitempty"`
	NFS *NFSOp  `json:"nfs,omitempty"`

	inline []byte
}

func (m *RPCRDMAMessage) problem(format string, a ...any) {
	m.Problems = append(m.Problems, fmt.Sprintf(format, a...))
	m.Complete = false
}

// RPCOptions say how AssembleRPC finds RPC-over-RDMA.
type RPCOptions struct {
	// Force decodes every SEND as RPC-over-RDMA; otherwise only the
	// connections where some SEND has its shape (LooksLikeRPCRDMA).
	Force bool
}

type connKey struct{ client, server string }

type handleKey struct {
	src, dst string // the RDMA operation's requester (the RPC responder) and responder
	rkey     uint32
}

// AssembleRPC finds the RPC-over-RDMA messages among reassembled
// messages (in frame order, as Result has them), gathers each one's chunks from the RDMA READs and WRITEs with
// their handles, and puts the RPC calls and replies back together.
func AssembleRPC(ms []*Message, o RPCOptions) []*RPCRDMAMessage {
	carries := map[flowKey]bool{}
	if !o.Force {
		for _, m := range ms {
			if m.Op == MsgSend && LooksLikeRPCRDMA(m.Payload) {
				carries[flowKey{m.Src, m.Dst, m.QP}] = true
			}
		}
	}
	var out []*RPCRDMAMessage
	ops := map[handleKey][]*Message{} // in frame order, as ms is
	for _, m := range ms {
		switch {
		case m.Op == MsgSend && (o.Force || carries[flowKey{m.Src, m.Dst, m.QP}]):
			out = append(out, newRPCRDMAMessage(m, len(out)+1))
		case (m.Op == MsgRead || m.Op == MsgWrite) && m.RKey != nil && m.VA != nil:
			k := handleKey{m.Src, m.Dst, *m.RKey}
			ops[k] = append(ops[k], m)
		}
	}
	// Every SEND that names a handle bounds the operations that may move
	// another RPC's chunk with it.
	mentions := map[handleKey][]int{}
	for _, r := range out {
		if r.Header == nil {
			continue
		}
		for _, s := range r.segments() {
			for _, k := range []handleKey{{r.Src, r.Dst, s.Handle}, {r.Dst, r.Src, s.Handle}} {
				mentions[k] = append(mentions[k], r.Frame)
			}
		}
	}
	pairRPCs(out)
	for _, r := range out {
		if r.Header == nil {
			continue
		}
		var reply, call *RPCRDMAMessage
		if r.Call {
			call = r
			if r.Peer > 0 {
				reply = out[r.Peer-1]
			}
		} else {
			reply = r
			if r.Peer > 0 {
				call = out[r.Peer-1]
			}
		}
		r.gather(call, reply, ops, mentions)
		r.assemble()
		r.decodeRPC(call)
	}
	return out
}

func newRPCRDMAMessage(m *Message, index int) *RPCRDMAMessage {
	r := &RPCRDMAMessage{Index: index, Send: m.Index, Frame: m.Frame, LastFrame: m.LastFrame, Time: m.Time,
		Src: m.Src, Dst: m.Dst, Transport: m.Transport, QP: m.QP, Complete: m.Complete, psn: m.FirstPSN}
	if !m.Complete {
		r.problem("the SEND is incomplete")
	}
	h, err := DecodeRPCRDMA(m.Payload)
	if err != nil {
		r.problem("%v", err)
		return r
	}
	r.Header = h
	r.inline = m.Payload[h.Length:]
	r.Inline = len(r.inline)
	switch {
	case h.Proc == RDMAMsg || h.Proc == RDMAMsgP:
		r.Call = len(r.inline) >= 8 && r.inline[7] == 0 && r.inline[4]|r.inline[5]|r.inline[6] == 0
	case h.Proc == RDMANoMsg:
		r.Call = len(h.ReadList) > 0
	}
	return r
}

// segments lists every segment the header names.
func (r *RPCRDMAMessage) segments() []RDMASegment {
	var s []RDMASegment
	for _, rs := range r.Header.ReadList {
		s = append(s, rs.RDMASegment)
	}
	for _, c := range r.Header.WriteList {
		s = append(s, c...)
	}
	return append(s, r.Header.ReplyChunk...)
}

// pairRPCs matches each reply with the call of the same XID coming the
// other way before it.
func pairRPCs(out []*RPCRDMAMessage) {
	type key struct {
		client, server string
		xid            uint32
	}
	open := map[key]*RPCRDMAMessage{}
	for _, r := range out {
		if r.Header == nil || r.Header.Proc == RDMADone {
			continue
		}
		if r.Call {
			open[key{r.Src, r.Dst, r.Header.XID}] = r
			continue
		}
		k := key{r.Dst, r.Src, r.Header.XID}
		if c := open[k]; c != nil {
			c.Peer, r.Peer = r.Index, c.Index
			delete(open, k)
		}
	}
}

// gather collects this message's chunks: a call's read chunks, a reply's
// write chunks and reply chunk (with the lengths the responder wrote).
func (r *RPCRDMAMessage) gather(call, reply *RPCRDMAMessage, ops map[handleKey][]*Message, mentions map[handleKey][]int) {
	h := r.Header
	if r.Call {
		// The responder reads the call's read chunks after the call came
		// and before its reply (or the next SEND that names the handle).
		var chunk *Chunk
		for i, rs := range h.ReadList {
			if chunk == nil || h.ReadList[i-1].Position != rs.Position {
				chunk = &Chunk{Kind: ChunkRead, Index: len(r.Chunks) + 1, Position: rs.Position}
				r.Chunks = append(r.Chunks, chunk)
			}
			k := handleKey{r.Dst, r.Src, rs.Handle}
			lo, stop := r.Frame, nextMention(mentions[k], r.Frame)
			hi := stop
			var before func(*Message) bool
			if reply != nil {
				hi = min(hi, reply.Frame)
				before = reply.sentBefore
			}
			chunk.Segments = append(chunk.Segments, fillSegment(rs.RDMASegment, ops[k], MsgRead, lo, hi, stop, before))
		}
		return
	}
	// A reply's write chunks were written after the call and before the
	// reply was sent.
	lo := 0
	if call != nil {
		lo = call.Frame
	}
	add := func(kind ChunkKind, index int, segs []RDMASegment) {
		c := &Chunk{Kind: kind, Index: index}
		for _, s := range segs {
			k := handleKey{r.Src, r.Dst, s.Handle}
			from := max(lo, prevMention(mentions[k], r.Frame))
			c.Segments = append(c.Segments, fillSegment(s, ops[k], MsgWrite, from, r.Frame, nextMention(mentions[k], r.Frame), r.sentBefore))
		}
		r.Chunks = append(r.Chunks, c)
	}
	for i, c := range h.WriteList {
		add(ChunkWrite, i+1, c)
	}
	if h.HasReplyChunk && len(h.ReplyChunk) > 0 {
		add(ChunkReply, 1, h.ReplyChunk)
	}
}

// nextMention is the first frame after f in sorted frames, or the largest int.
func nextMention(frames []int, f int) int {
	i := sort.SearchInts(frames, f+1)
	if i < len(frames) {
		return frames[i]
	}
	return int(^uint(0) >> 1)
}

// prevMention is the last frame before f in sorted frames, or 0.
func prevMention(frames []int, f int) int {
	i := sort.SearchInts(frames, f)
	if i > 0 {
		return frames[i-1]
	}
	return 0
}

// sentBefore reports whether m went before this SEND on the same RC
// connection, by PSN: the responder's READ requests and WRITEs of a chunk
// precede its reply, but a capture (rxe retransmitting after a NAK, a
// packet late on its way to the capture point) may have their packets
// after the reply's.
func (r *RPCRDMAMessage) sentBefore(m *Message) bool {
	if r.Transport != TransportRC || m.Transport != TransportRC || m.Src != r.Src || m.Dst != r.Dst || m.QP != r.QP {
		return false
	}
	d := (r.psn - m.FirstPSN) & 0xffffff // serial arithmetic on 24-bit PSNs
	return d != 0 && d < 1<<23
}

// maxSegmentBuffer bounds the bytes kept for one segment: a damaged length
// must not make trace allocate gigabytes. NFS moves at most a few MiB
// (Linux: rsize/wsize 1 MiB) per chunk.
const maxSegmentBuffer = 16 << 20

// fillSegment places the operations with the segment's handle between
// frames lo and hi (exclusive) whose addresses fall in it, and those
// between hi and stop that before says went before the message that
// bounds them.
func fillSegment(s RDMASegment, cands []*Message, op MessageOp, lo, hi, stop int, before func(*Message) bool) *SegmentData {
	d := &SegmentData{RDMASegment: s}
	end := s.Offset + uint64(s.Length)
	// cands are in frame order: look only between lo and hi, so that a
	// handle used by every RPC (a persistent registration) costs no more
	// than one used once.
	i := sort.Search(len(cands), func(i int) bool { return cands[i].Frame > lo })
	for _, m := range cands[i:] {
		if m.Frame >= max(hi, stop) {
			break
		}
		if m.Frame >= hi && (before == nil || !before(m)) {
			continue
		}
		if m.Op != op || *m.VA < s.Offset || *m.VA >= end {
			continue
		}
		from := *m.VA - s.Offset
		to := min(from+uint64(len(m.Payload)), uint64(s.Length), maxSegmentBuffer)
		if to <= from {
			continue
		}
		d.Ops++
		if op == MsgRead {
			d.Packets += m.Responses
		} else {
			d.Packets += m.Packets
		}
		d.Messages = append(d.Messages, m.Index)
		if d.have.covers(from, to) {
			d.Repeated++
			continue
		}
		if uint64(len(d.data)) < to {
			d.data = append(d.data, make([]byte, to-uint64(len(d.data)))...)
		}
		copy(d.data[from:to], m.Payload)
		d.have.add(from, to)
	}
	d.Found = int(d.have.total())
	d.Missing = d.have.gaps(uint64(s.Length))
	return d
}

// assemble joins each chunk's segments and puts the RPC message together.
func (r *RPCRDMAMessage) assemble() {
	for _, c := range r.Chunks {
		c.Complete = true
		for _, s := range c.Segments {
			buf := s.data
			if s.Length > maxSegmentBuffer {
				r.problem("%s: handle %#08x of %d bytes: only the first %d are kept", c.name(), s.Handle, s.Length, maxSegmentBuffer)
			}
			if want := int(min(s.Length, maxSegmentBuffer)); len(buf) < want {
				buf = append(buf, make([]byte, want-len(buf))...)
			}
			if len(c.Segments) == 1 {
				c.Data = buf // most chunks are one segment: no copy
			} else {
				c.Data = append(c.Data, buf...)
			}
			for _, g := range s.Missing {
				c.Complete = false
				r.problem("%s: handle %#08x bytes %d-%d of %d not in the capture", c.name(), s.Handle, g[0], g[1]-1, s.Length)
			}
			if s.Repeated > 0 {
				r.Problems = append(r.Problems, fmt.Sprintf("%s: handle %#08x moved again %d times (retransmitted)", c.name(), s.Handle, s.Repeated))
			}
		}
		c.Length = len(c.Data)
	}
	h := r.Header
	switch {
	case h.Proc == RDMAError || h.Proc == RDMADone:
		return
	case h.Proc == RDMANoMsg && r.Call:
		var zero *Chunk
		for _, c := range r.Chunks {
			if c.Position == 0 {
				zero = c
				break
			}
		}
		if zero == nil {
			r.problem("RDMA_NOMSG call without a position-zero read chunk")
			return
		}
		r.RPC = r.insertReads(zero.Data, zero)
	case h.Proc == RDMANoMsg:
		for _, c := range r.Chunks {
			if c.Kind == ChunkReply {
				r.RPC = c.Data
			}
		}
		if r.RPC == nil {
			r.problem("RDMA_NOMSG reply without a reply chunk")
			return
		}
	case r.Call:
		r.RPC = r.insertReads(r.inline, nil)
	default:
		r.RPC = r.inline
	}
	r.RPCLength = len(r.RPC)
}

// name says which chunk c is, for problems.
func (c *Chunk) name() string {
	if c.Kind == ChunkRead {
		return fmt.Sprintf("read chunk %d (position %d)", c.Index, c.Position)
	}
	if c.Kind == ChunkReply {
		return "reply chunk"
	}
	return fmt.Sprintf("write chunk %d", c.Index)
}

// insertReads inserts the read chunks (but skip) into base at their XDR
// positions, which count the chunks' bytes (XDR-padded) before them.
func (r *RPCRDMAMessage) insertReads(base []byte, skip *Chunk) []byte {
	var out []byte
	used := 0
	for _, c := range r.Chunks {
		if c.Kind != ChunkRead || c == skip {
			continue
		}
		at := int(c.Position) - (len(out) - used)
		if at < used || at > len(base) {
			r.problem("%s lies outside the %d inline bytes", c.name(), len(base))
			continue
		}
		out = append(out, base[used:at]...)
		used = at
		out = append(out, c.Data...)
		out = append(out, make([]byte, (4-len(c.Data)%4)%4)...)
	}
	return append(out, base[used:]...)
}

// spans is a set of byte ranges [from, to), kept sorted and merged.
type spans [][2]uint64

func (s *spans) add(from, to uint64) {
	*s = append(*s, [2]uint64{from, to})
	sort.Slice(*s, func(i, j int) bool { return (*s)[i][0] < (*s)[j][0] })
	out := (*s)[:1]
	for _, v := range (*s)[1:] {
		if last := &out[len(out)-1]; v[0] <= last[1] {
			last[1] = max(last[1], v[1])
		} else {
			out = append(out, v)
		}
	}
	*s = out
}

// covers reports whether [from, to) is inside the set.
func (s spans) covers(from, to uint64) bool {
	for _, v := range s {
		if v[0] <= from && to <= v[1] {
			return true
		}
	}
	return false
}

func (s spans) total() uint64 {
	var n uint64
	for _, v := range s {
		n += v[1] - v[0]
	}
	return n
}

// gaps lists the ranges of [0, n) not in the set.
func (s spans) gaps(n uint64) [][2]uint64 {
	var g [][2]uint64
	at := uint64(0)
	for _, v := range s {
		if v[0] > at {
			g = append(g, [2]uint64{at, min(v[0], n)})
		}
		at = max(at, v[1])
	}
	if at < n {
		g = append(g, [2]uint64{at, n})
	}
	return g
}

// decodeRPC decodes the RPC header and, for NFS, the call's arguments or
// the reply's results; a reply's READ data is taken from its write chunk.
func (r *RPCRDMAMessage) decodeRPC(call *RPCRDMAMessage) {
	if len(r.RPC) == 0 {
		return
	}
	h, err := DecodeONCRPC(r.RPC)
	if err != nil {
		r.Problems = append(r.Problems, err.Error())
		return
	}
	r.ONC = h
	if r.Call {
		n, err := DecodeNFSCall(r.RPC, h)
		if err != nil {
			r.Problems = append(r.Problems, err.Error())
		}
		r.NFS = n
		if n == nil || n.IO == nil || n.IO.Op != "WRITE" {
			return
		}
		n.IO.Via = "inline"
		for _, c := range r.Chunks {
			if c.Kind == ChunkRead && int(c.Position) == n.IO.DataOffset {
				n.IO.Via = "read chunk"
				n.IO.ViaOps, n.IO.ViaPackets = c.Ops()
			}
		}
		return
	}
	if call == nil || call.ONC == nil {
		return
	}
	h.Prog, h.Vers, h.Proc = call.ONC.Prog, call.ONC.Vers, call.ONC.Proc
	var writes []*Chunk
	for _, c := range r.Chunks {
		if c.Kind == ChunkWrite {
			writes = append(writes, c)
		}
	}
	n, whole, err := DecodeNFSReply(r.RPC, h, call.NFS, writes)
	if err != nil {
		r.Problems = append(r.Problems, err.Error())
	}
	r.NFS, r.RPC, r.RPCLength = n, whole, len(whole)
	if n != nil && n.IO != nil && n.IO.Op == "READ" && n.IO.Via == "" {
		n.IO.Via = "inline"
	}
}
