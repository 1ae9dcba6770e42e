package trace

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rpcConn builds the packets of an RPC-over-RDMA connection: the client
// hostA sends its calls to the server hostB's QP srvQP, and the server
// sends its READ requests, WRITEs and replies to the client's QP cliQP.
type rpcConn struct {
	ps             []*Packet
	cliPSN, srvPSN uint32
}

const srvQP, cliQP = 0x11, 0x12

// call sends a SEND from the client.
func (c *rpcConn) call(h RPCRDMAHeader, inline []byte) {
	c.cliPSN++
	c.ps = append(c.ps, rc(OpSendOnly, srvQP, c.cliPSN, append(h.AppendBinary(nil), inline...)))
}

// fromServer makes a request packet from the server to the client's QP.
func (c *rpcConn) fromServer(op Operation, payload []byte) *Packet {
	c.srvPSN++
	p := rc(op, cliQP, 1000+c.srvPSN, payload)
	p.Src, p.Dst = hostB, hostA
	c.ps = append(c.ps, p)
	return p
}

// reply sends a SEND from the server.
func (c *rpcConn) reply(h RPCRDMAHeader, inline []byte) {
	c.fromServer(OpSendOnly, append(h.AppendBinary(nil), inline...))
}

// read has the server read n bytes of the client's memory at va; the
// client answers with data.
func (c *rpcConn) read(rkey uint32, va uint64, data []byte) {
	p := withRETH(c.fromServer(OpReadRequest, nil), va, rkey, uint32(len(data)))
	r := rc(OpReadResponseOnly, srvQP, p.BTH.PSN, data)
	r.AETH = &AETH{Syndrome: 0x1f}
	c.ps = append(c.ps, r)
}

// write has the server write data to the client's memory at va.
func (c *rpcConn) write(rkey uint32, va uint64, data []byte) {
	withRETH(c.fromServer(OpWriteOnly, data), va, rkey, uint32(len(data)))
}

func (c *rpcConn) assemble(t *testing.T, o RPCOptions) []*RPCRDMAMessage {
	t.Helper()
	return AssembleRPC(reassemble(encodeAll(t, c.ps, EncodeOptions{})).Messages, o)
}

// rpcSum is what the chunk tests compare of an RPC-over-RDMA message.
type rpcSum struct {
	Call      bool
	Peer      int
	Proc      RDMAProc
	Chunks    []string // kind, length, ops, repeated
	RPCLength int
	Complete  bool
	Problems  []string
}

func sumRPCs(rs []*RPCRDMAMessage) []rpcSum {
	var out []rpcSum
	for _, r := range rs {
		s := rpcSum{Call: r.Call, Peer: r.Peer, RPCLength: r.RPCLength, Complete: r.Complete, Problems: r.Problems}
		if r.Header != nil {
			s.Proc = r.Header.Proc
		}
		for _, c := range r.Chunks {
			ops, _ := c.Ops()
			rep := 0
			for _, sg := range c.Segments {
				rep += sg.Repeated
			}
			s.Chunks = append(s.Chunks, string(c.Kind)+" "+itoa(c.Length)+" ops "+itoa(ops)+" repeated "+itoa(rep))
		}
		out = append(out, s)
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestAssembleRPC(t *testing.T) {
	data := fill(1, 3000)
	inline := append(rpcCallBytes(1), 0, 0, 0x0b, 0xb8) // ... and the opaque's length, 3000
	pos := uint32(len(inline))
	seg := func(h, l uint32, o uint64) RDMASegment { return RDMASegment{Handle: h, Length: l, Offset: o} }
	readCall := RPCRDMAHeader{XID: 1, Vers: 1, Credits: 32, Proc: RDMAMsg, ReadList: []ReadSegment{{pos, seg(0x77, 3000, 0x1000)}}}
	okReply := RPCRDMAHeader{XID: 1, Vers: 1, Credits: 32, Proc: RDMAMsg}
	replyBytes := rpcReplyBytes(1)

	tests := []struct {
		name  string
		build func(c *rpcConn)
		want  []rpcSum
		rpc   []byte // the call's whole RPC message
	}{
		{"read chunk in two sub-segments, out of order, one read again", func(c *rpcConn) {
			c.call(readCall, inline)
			c.read(0x77, 0x1000+1500, data[1500:])
			c.read(0x77, 0x1000, data[:1500])
			c.read(0x77, 0x1000, data[:1500])
			c.reply(okReply, replyBytes)
		}, []rpcSum{
			{Call: true, Peer: 2, Proc: RDMAMsg, Chunks: []string{"read 3000 ops 3 repeated 1"}, RPCLength: len(inline) + 3000, Complete: true,
				Problems: []string{"read chunk 1 (position 44): handle 0x00000077 moved again 1 times (retransmitted)"}},
			{Peer: 1, Proc: RDMAMsg, RPCLength: 24, Complete: true},
		}, append(append([]byte{}, inline...), data...)},
		{"read chunk with a sub-segment missing", func(c *rpcConn) {
			c.call(readCall, inline)
			c.read(0x77, 0x1000+1500, data[1500:])
		}, []rpcSum{
			{Call: true, Proc: RDMAMsg, Chunks: []string{"read 3000 ops 1 repeated 0"}, RPCLength: len(inline) + 3000,
				Problems: []string{"read chunk 1 (position 44): handle 0x00000077 bytes 0-1499 of 3000 not in the capture"}},
		}, append(append(append([]byte{}, inline...), make([]byte, 1500)...), data[1500:]...)},
		{"a read of the same handle for the next call is not this one's", func(c *rpcConn) {
			c.call(readCall, inline)
			c.read(0x77, 0x1000, data[:1500])
			h := readCall
			h.XID = 2
			c.call(h, append(rpcCallBytes(2), 0, 0, 0x0b, 0xb8))
			c.read(0x77, 0x1000+1500, data[1500:])
		}, []rpcSum{
			{Call: true, Proc: RDMAMsg, Chunks: []string{"read 3000 ops 1 repeated 0"}, RPCLength: len(inline) + 3000,
				Problems: []string{"read chunk 1 (position 44): handle 0x00000077 bytes 1500-2999 of 3000 not in the capture"}},
			{Call: true, Proc: RDMAMsg, Chunks: []string{"read 3000 ops 1 repeated 0"}, RPCLength: len(inline) + 3000,
				Problems: []string{"read chunk 1 (position 44): handle 0x00000077 bytes 0-1499 of 3000 not in the capture"}},
		}, nil},
		{"position-zero read chunk (RDMA_NOMSG call)", func(c *rpcConn) {
			call := append(rpcCallBytes(5), data[:100]...)
			c.call(RPCRDMAHeader{XID: 5, Vers: 1, Credits: 32, Proc: RDMANoMsg, ReadList: []ReadSegment{{0, seg(0x66, uint32(len(call)), 0x2000)}}}, nil)
			c.read(0x66, 0x2000, call)
		}, []rpcSum{
			{Call: true, Proc: RDMANoMsg, Chunks: []string{"read 140 ops 1 repeated 0"}, RPCLength: 140, Complete: true},
		}, append(rpcCallBytes(5), data[:100]...)},
		{"write chunk and reply chunk", func(c *rpcConn) {
			c.call(RPCRDMAHeader{XID: 3, Vers: 1, Credits: 32, Proc: RDMAMsg, WriteList: [][]RDMASegment{{seg(0x88, 4096, 0x9000)}},
				HasReplyChunk: true, ReplyChunk: []RDMASegment{seg(0x99, 8192, 0x5000)}}, rpcCallBytes(3))
			c.write(0x88, 0x9000+2048, data[2048:])
			c.write(0x88, 0x9000, data[:2048])
			c.write(0x99, 0x5000, append(rpcReplyBytes(3), data[:176]...))
			c.reply(RPCRDMAHeader{XID: 3, Vers: 1, Credits: 32, Proc: RDMANoMsg, WriteList: [][]RDMASegment{{seg(0x88, 3000, 0x9000)}},
				HasReplyChunk: true, ReplyChunk: []RDMASegment{seg(0x99, 200, 0x5000)}}, nil)
		}, []rpcSum{
			{Call: true, Peer: 2, Proc: RDMAMsg, RPCLength: 40, Complete: true},
			{Peer: 1, Proc: RDMANoMsg, Chunks: []string{"write 3000 ops 2 repeated 0", "reply 200 ops 1 repeated 0"}, RPCLength: 200, Complete: true},
		}, nil},
		{"a WRITE the capture has after the reply it went before", func(c *rpcConn) {
			c.call(RPCRDMAHeader{XID: 3, Vers: 1, Credits: 32, Proc: RDMAMsg, WriteList: [][]RDMASegment{{seg(0x88, 4096, 0x9000)}}}, rpcCallBytes(3))
			c.write(0x88, 0x9000, data[:2048])
			c.write(0x88, 0x9000+2048, data[2048:])
			c.reply(RPCRDMAHeader{XID: 3, Vers: 1, Credits: 32, Proc: RDMAMsg, WriteList: [][]RDMASegment{{seg(0x88, 3000, 0x9000)}}}, rpcReplyBytes(3))
			n := len(c.ps)
			c.ps[n-2], c.ps[n-1] = c.ps[n-1], c.ps[n-2] // rxe resent it; the capture point saw it late
		}, []rpcSum{
			{Call: true, Peer: 2, Proc: RDMAMsg, RPCLength: 40, Complete: true},
			{Peer: 1, Proc: RDMAMsg, Chunks: []string{"write 3000 ops 2 repeated 0"}, RPCLength: 24, Complete: true},
		}, nil},
		{"a WRITE after the reply, sent after it, is not its", func(c *rpcConn) {
			c.call(RPCRDMAHeader{XID: 3, Vers: 1, Credits: 32, Proc: RDMAMsg, WriteList: [][]RDMASegment{{seg(0x88, 4096, 0x9000)}}}, rpcCallBytes(3))
			c.write(0x88, 0x9000, data[:2048])
			c.reply(RPCRDMAHeader{XID: 3, Vers: 1, Credits: 32, Proc: RDMAMsg, WriteList: [][]RDMASegment{{seg(0x88, 3000, 0x9000)}}}, rpcReplyBytes(3))
			c.write(0x88, 0x9000+2048, data[2048:])
		}, []rpcSum{
			{Call: true, Peer: 2, Proc: RDMAMsg, RPCLength: 40, Complete: true},
			{Peer: 1, Proc: RDMAMsg, Chunks: []string{"write 3000 ops 1 repeated 0"}, RPCLength: 24,
				Problems: []string{"write chunk 1: handle 0x00000088 bytes 2048-2999 of 3000 not in the capture"}},
		}, nil},
		{"a READ the capture has after the reply it went before", func(c *rpcConn) {
			c.call(readCall, inline)
			c.read(0x77, 0x1000, data[:1500])
			c.read(0x77, 0x1000+1500, data[1500:])
			c.reply(okReply, replyBytes)
			n := len(c.ps)
			c.ps = append(c.ps[:n-3], c.ps[n-1], c.ps[n-3], c.ps[n-2]) // the second READ and its response after the reply
		}, []rpcSum{
			{Call: true, Peer: 2, Proc: RDMAMsg, Chunks: []string{"read 3000 ops 2 repeated 0"}, RPCLength: len(inline) + 3000, Complete: true},
			{Peer: 1, Proc: RDMAMsg, RPCLength: 24, Complete: true},
		}, append(append([]byte{}, inline...), data...)},
		{"RDMA_ERROR", func(c *rpcConn) {
			c.call(readCall, inline)
			c.reply(RPCRDMAHeader{XID: 1, Vers: 1, Proc: RDMAError, Err: ErrChunk}, nil)
		}, []rpcSum{
			{Call: true, Peer: 2, Proc: RDMAMsg, Chunks: []string{"read 3000 ops 0 repeated 0"}, RPCLength: len(inline) + 3000,
				Problems: []string{"read chunk 1 (position 44): handle 0x00000077 bytes 0-2999 of 3000 not in the capture"}},
			{Peer: 1, Proc: RDMAError, Complete: true},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &rpcConn{}
			tt.build(c)
			rs := c.assemble(t, RPCOptions{})
			if diff := cmp.Diff(tt.want, sumRPCs(rs)); diff != "" {
				t.Errorf("unexpected RPCs (-want +got):\n%s", diff)
			}
			if tt.rpc != nil && !bytes.Equal(rs[0].RPC, tt.rpc) {
				t.Errorf("the call's RPC message:\n%x\nwant\n%x", rs[0].RPC, tt.rpc)
			}
		})
	}
}

// TestAssembleRPCDetect: SENDs that are not RPC-over-RDMA are left alone
// unless forced.
func TestAssembleRPCDetect(t *testing.T) {
	c := &rpcConn{}
	c.ps = append(c.ps, rc(OpSendOnly, srvQP, 1, fill(0x7b, 64)))
	if rs := c.assemble(t, RPCOptions{}); len(rs) != 0 {
		t.Errorf("%d RPC-over-RDMA messages found in ping-pong bytes", len(rs))
	}
	rs := c.assemble(t, RPCOptions{Force: true})
	if len(rs) != 1 || rs[0].Header != nil || len(rs[0].Problems) != 1 {
		t.Fatalf("forced: %+v; want one message with a header problem", rs)
	}
}
