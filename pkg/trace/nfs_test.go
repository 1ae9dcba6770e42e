package trace

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// xdrWords appends 32-bit words.
func xdrWords(w *xdrWriter, vs ...uint32) *xdrWriter {
	for _, v := range vs {
		w.u32(v)
	}
	return w
}

// nfsCall starts an NFS call: the RPC header with AUTH_NONE.
func nfsCall(xid, vers, proc uint32) *xdrWriter {
	return xdrWords(&xdrWriter{}, xid, 0, 2, ProgNFS, vers, proc, 0, 0, 0, 0)
}

func nfsReply(xid uint32) *xdrWriter { return xdrWords(&xdrWriter{}, xid, 1, 0, 0, 0, 0) }

var testFH = []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}

func TestNFSOverRDMA(t *testing.T) {
	seg := func(h, l uint32, o uint64) RDMASegment { return RDMASegment{Handle: h, Length: l, Offset: o} }
	small := fill(3, 3000)
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = byte(i*7 + i>>12)
	}
	tests := []struct {
		name  string
		build func(c *rpcConn)
		lines []string // each RPC-over-RDMA message's NFS line
		data  [][]byte // the data each one's IO carries
	}{
		{"NFSv3 WRITE via a read chunk", func(c *rpcConn) {
			w := nfsCall(10, 3, 7)
			w.opaque(testFH)
			w.u64(4096)
			xdrWords(w, 3000, 2, 3000)
			c.call(RPCRDMAHeader{XID: 10, Vers: 1, Credits: 32, Proc: RDMAMsg,
				ReadList: []ReadSegment{{uint32(len(w.b)), seg(0x77, 3000, 0x1000)}}}, w.b)
			c.read(0x77, 0x1000, small[:2000])
			c.read(0x77, 0x1000+2000, small[2000:])
			r := xdrWords(nfsReply(10), 0, 0, 0, 3000, 2, 0, 0)
			c.reply(RPCRDMAHeader{XID: 10, Vers: 1, Credits: 32, Proc: RDMAMsg}, r.b)
		}, []string{
			"NFS3 WRITE fh 0102030405060708090a0b0c0d0e0f1011121314 offset 4096 count 3000 via read chunk: 3000 bytes in 2 READ responses",
			"NFS3 WRITE fh 0102030405060708090a0b0c0d0e0f1011121314 offset 4096 count 3000",
		}, [][]byte{small, nil}},
		{"NFSv3 READ via a write chunk", func(c *rpcConn) {
			w := nfsCall(11, 3, 6)
			w.opaque(testFH)
			w.u64(0)
			w.u32(3000)
			c.call(RPCRDMAHeader{XID: 11, Vers: 1, Credits: 32, Proc: RDMAMsg, WriteList: [][]RDMASegment{{seg(0x88, 4096, 0x9000)}}}, w.b)
			c.write(0x88, 0x9000, small)
			r := xdrWords(nfsReply(11), 0, 0, 3000, 1, 3000)
			c.reply(RPCRDMAHeader{XID: 11, Vers: 1, Credits: 32, Proc: RDMAMsg, WriteList: [][]RDMASegment{{seg(0x88, 3000, 0x9000)}}}, r.b)
		}, []string{
			"NFS3 READ fh 0102030405060708090a0b0c0d0e0f1011121314 offset 0 count 3000",
			"NFS3 READ fh 0102030405060708090a0b0c0d0e0f1011121314 offset 0 count 3000 eof via write chunk: 3000 bytes in 1 WRITE packets",
		}, [][]byte{nil, small}},
		{"NFSv4.0 WRITE of 1 MiB via a read chunk", func(c *rpcConn) {
			w := nfsCall(12, 4, 1)
			w.opaque(nil)
			xdrWords(w, 0, 3, op4Putfh)
			w.opaque(testFH)
			w.u32(op4Write)
			w.fixed(make([]byte, 16))
			w.u64(0)
			xdrWords(w, 2, 1<<20)
			pos := uint32(len(w.b))
			xdrWords(w, op4Getattr, 1, 0x18)
			c.call(RPCRDMAHeader{XID: 12, Vers: 1, Credits: 32, Proc: RDMAMsg, ReadList: []ReadSegment{{pos, seg(0x55, 1<<20, 0x100000)}}}, w.b)
			for i := 255; i >= 0; i-- {
				c.read(0x55, 0x100000+uint64(i)*4096, big[i*4096:(i+1)*4096])
			}
			r := nfsReply(12)
			r.u32(0)
			r.opaque(nil)
			xdrWords(r, 3, op4Putfh, 0, op4Write, 0, 1<<20, 2, 0, 0, op4Getattr, 0, 1, 0)
			r.opaque(nil)
			c.reply(RPCRDMAHeader{XID: 12, Vers: 1, Credits: 32, Proc: RDMAMsg}, r.b)
		}, []string{
			"NFS4 WRITE fh 0102030405060708090a0b0c0d0e0f1011121314 offset 0 count 1048576 via read chunk: 1 MiB in 256 READ responses (PUTFH WRITE GETATTR)",
			"NFS4 WRITE fh 0102030405060708090a0b0c0d0e0f1011121314 offset 0 count 1048576 (PUTFH WRITE GETATTR)",
		}, [][]byte{big, nil}},
		{"NFSv4.1 READ of 1 MiB via a write chunk", func(c *rpcConn) {
			w := nfsCall(13, 4, 1)
			w.opaque(nil)
			xdrWords(w, 1, 3, op4Sequence)
			w.fixed(make([]byte, 32))
			w.u32(op4Putfh)
			w.opaque(testFH)
			w.u32(op4Read)
			w.fixed(make([]byte, 16))
			w.u64(1 << 20)
			w.u32(1 << 20)
			c.call(RPCRDMAHeader{XID: 13, Vers: 1, Credits: 32, Proc: RDMAMsg, WriteList: [][]RDMASegment{{seg(0x66, 1<<20, 0x200000)}}}, w.b)
			for i := range 256 {
				c.write(0x66, 0x200000+uint64(i)*4096, big[i*4096:(i+1)*4096])
			}
			r := nfsReply(13)
			r.u32(0)
			r.opaque(nil)
			xdrWords(r, 3, op4Sequence, 0)
			r.fixed(make([]byte, 36))
			xdrWords(r, op4Putfh, 0, op4Read, 0, 1, 1<<20)
			c.reply(RPCRDMAHeader{XID: 13, Vers: 1, Credits: 32, Proc: RDMAMsg, WriteList: [][]RDMASegment{{seg(0x66, 1<<20, 0x200000)}}}, r.b)
		}, []string{
			"NFS4.1 READ fh 0102030405060708090a0b0c0d0e0f1011121314 offset 1048576 count 1048576 (SEQUENCE PUTFH READ)",
			"NFS4.1 READ fh 0102030405060708090a0b0c0d0e0f1011121314 offset 1048576 count 1048576 eof via write chunk: 1 MiB in 256 WRITE packets (SEQUENCE PUTFH READ)",
		}, [][]byte{nil, big}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &rpcConn{}
			tt.build(c)
			rs := c.assemble(t, RPCOptions{})
			var lines []string
			for i, r := range rs {
				if !r.Complete || len(r.Problems) > 0 {
					t.Errorf("RPC %d: complete %v, problems %q", i+1, r.Complete, r.Problems)
				}
				if r.NFS == nil {
					lines = append(lines, "")
					continue
				}
				lines = append(lines, r.NFS.String())
				var got []byte
				if r.NFS.IO != nil {
					got = r.NFS.IO.Data
					if len(got) > 0 && !bytes.Equal(r.RPC[r.NFS.IO.DataOffset:r.NFS.IO.DataOffset+len(got)], got) {
						t.Errorf("RPC %d: the data is not at offset %d of the whole message", i+1, r.NFS.IO.DataOffset)
					}
				}
				if i < len(tt.data) && !bytes.Equal(got, tt.data[i]) {
					t.Errorf("RPC %d: %d bytes of data, want %d", i+1, len(got), len(tt.data[i]))
				}
			}
			if diff := cmp.Diff(tt.lines, lines); diff != "" {
				t.Errorf("unexpected NFS lines (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzDecodeRPC feeds arbitrary RPC messages to the ONC RPC and NFS
// decoders, as calls and as replies with a write chunk: errors, never
// panics.
func FuzzDecodeRPC(f *testing.F) {
	w := nfsCall(1, 4, 1)
	w.opaque(nil)
	xdrWords(w, 1, 2, op4Putfh)
	w.opaque(testFH)
	w.u32(op4Write)
	f.Add(w.b, false)
	r := nfsReply(1)
	xdrWords(r, 0, 0, 1, op4Read, 0, 1, 100)
	f.Add(r.b, true)
	f.Fuzz(func(t *testing.T, b []byte, reply bool) {
		h, err := DecodeONCRPC(b)
		if err != nil {
			return
		}
		for _, vers := range []uint32{3, 4} {
			h.Prog, h.Vers = ProgNFS, vers
			call, _ := DecodeNFSCall(b, h)
			if !reply {
				continue
			}
			h.Status = "success"
			for _, proc := range []string{"READ", "WRITE", "COMPOUND", "GETATTR"} {
				DecodeNFSReply(b, h, &NFSOp{Version: vers, Proc: proc, IO: &NFSIO{}}, []*Chunk{{Data: fill(0, 50)}})
			}
			DecodeNFSReply(b, h, call, nil)
		}
	})
}

// FuzzAssembleRPC: arbitrary SENDs and RDMA operations never make chunk
// reassembly panic or allocate without bound.
func FuzzAssembleRPC(f *testing.F) {
	h := RPCRDMAHeader{XID: 1, Vers: 1, Proc: RDMAMsg, ReadList: []ReadSegment{{0, RDMASegment{7, 100, 0x1000}}},
		WriteList: [][]RDMASegment{{{8, 100, 0x2000}}}, HasReplyChunk: true, ReplyChunk: []RDMASegment{{9, 100, 0x3000}}}
	f.Add(h.AppendBinary(nil), (&RPCRDMAHeader{XID: 1, Vers: 1, Proc: RDMANoMsg, HasReplyChunk: true,
		ReplyChunk: []RDMASegment{{9, 50, 0x3000}}}).AppendBinary(nil), uint32(7), uint64(0x1000), fill(0, 60))
	f.Fuzz(func(t *testing.T, call, reply []byte, rkey uint32, va uint64, data []byte) {
		va2 := va + 10
		ms := []*Message{
			{Index: 1, Frame: 1, Src: hostA, Dst: hostB, QP: 1, Op: MsgSend, Payload: call, Complete: true},
			{Index: 2, Frame: 2, Src: hostB, Dst: hostA, QP: 2, Op: MsgRead, RKey: &rkey, VA: &va, Payload: data, Length: len(data)},
			{Index: 3, Frame: 3, Src: hostB, Dst: hostA, QP: 2, Op: MsgWrite, RKey: &rkey, VA: &va2, Payload: data, Length: len(data)},
			{Index: 4, Frame: 4, Src: hostB, Dst: hostA, QP: 2, Op: MsgSend, Payload: reply, Complete: true},
		}
		for _, force := range []bool{false, true} {
			for _, r := range AssembleRPC(ms, RPCOptions{Force: force}) {
				if r.NFS != nil {
					_ = r.NFS.String()
				}
			}
		}
	})
}
