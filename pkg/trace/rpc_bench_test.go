package trace

import "testing"

// nfsWriteMessages makes n NFSv3 WRITE exchanges as reassembled messages:
// a call SEND with a read chunk of size bytes, the server's RDMA READ of
// it, the reply SEND. Every call uses the same handle, as a persistent
// registration does.
func nfsWriteMessages(n, size int) []*Message {
	data := fill(0, size)
	var ms []*Message
	frame := 0
	add := func(m *Message) {
		frame++
		m.Frame, m.LastFrame, m.Index, m.Complete = frame, frame, len(ms)+1, true
		m.Length = len(m.Payload)
		ms = append(ms, m)
	}
	for i := range n {
		xid := uint32(i + 1)
		w := nfsCall(xid, 3, 7)
		w.opaque(testFH)
		w.u64(uint64(i * size))
		xdrWords(w, uint32(size), 2, uint32(size))
		h := RPCRDMAHeader{XID: xid, Vers: 1, Credits: 32, ReadList: []ReadSegment{{uint32(len(w.b)), RDMASegment{0x77, uint32(size), 0x1000}}}}
		add(&Message{Src: hostA, Dst: hostB, QP: 0x11, Op: MsgSend, Payload: append(h.AppendBinary(nil), w.b...)})
		rkey, va, l := uint32(0x77), uint64(0x1000), uint32(size)
		add(&Message{Src: hostB, Dst: hostA, QP: 0x12, Op: MsgRead, RKey: &rkey, VA: &va, DMALength: &l, Payload: data, Responses: size / 1024})
		r := xdrWords(nfsReply(xid), 0, 0, 0, uint32(size), 2, 0, 0)
		add(&Message{Src: hostB, Dst: hostA, QP: 0x12, Op: MsgSend, Payload: append((&RPCRDMAHeader{XID: xid, Vers: 1, Credits: 32}).AppendBinary(nil), r.b...)})
	}
	return ms
}

// BenchmarkAssembleRPC: 2000 NFS WRITEs of 64 KiB through one handle.
func BenchmarkAssembleRPC(b *testing.B) {
	ms := nfsWriteMessages(2000, 64<<10)
	b.SetBytes(2000 * 64 << 10)
	b.ResetTimer()
	for range b.N {
		rs := AssembleRPC(ms, RPCOptions{})
		if len(rs) != 4000 || rs[0].NFS == nil || rs[0].NFS.IO.Via != "read chunk" {
			b.Fatalf("%d RPCs", len(rs))
		}
	}
}

// BenchmarkIWARP: an iWARP stream of 64 KiB RDMA Writes in 1400-byte
// FPDUs with markers and CRCs, through TCP reassembly, MPA and DDP.
func BenchmarkIWARP(b *testing.B) {
	c := &iwConn{}
	c.start(true, true, true)
	data := fill(0, 64<<10)
	for i := range 64 {
		c.fpdu(1, iwTagged(RDMAPWrite, 0x77, uint64(i)<<16, data, 1400)...)
	}
	fs := c.frames()
	b.SetBytes(64 * 64 << 10)
	b.ResetTimer()
	for range b.N {
		if res := iwReassemble(fs); len(res.Messages) != 64 {
			b.Fatalf("%d messages", len(res.Messages))
		}
	}
}

// BenchmarkIWARPPlain: the same without markers (as Soft-iWARP sends).
func BenchmarkIWARPPlain(b *testing.B) {
	c := &iwConn{}
	c.start(false, false, true)
	data := fill(0, 64<<10)
	for i := range 64 {
		c.fpdu(1, iwTagged(RDMAPWrite, 0x77, uint64(i)<<16, data, 1400)...)
	}
	fs := c.frames()
	b.SetBytes(64 * 64 << 10)
	b.ResetTimer()
	for range b.N {
		if res := iwReassemble(fs); len(res.Messages) != 64 {
			b.Fatalf("%d messages", len(res.Messages))
		}
	}
}
