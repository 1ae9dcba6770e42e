package trace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rpcCallBytes is the start of an ONC RPC call with the given XID: enough
// for LooksLikeRPCRDMA.
func rpcCallBytes(xid uint32) []byte {
	w := &xdrWriter{}
	for _, v := range []uint32{xid, 0, 2, 100003, 3, 0, 0, 0, 0, 0} {
		w.u32(v)
	}
	return w.b
}

// rpcReplyBytes is an accepted, successful ONC RPC reply header.
func rpcReplyBytes(xid uint32) []byte {
	w := &xdrWriter{}
	for _, v := range []uint32{xid, 1, 0, 0, 0, 0} {
		w.u32(v)
	}
	return w.b
}

func TestDecodeRPCRDMA(t *testing.T) {
	seg := func(h, l uint32, o uint64) RDMASegment { return RDMASegment{Handle: h, Length: l, Offset: o} }
	tests := []struct {
		name string
		h    RPCRDMAHeader
	}{
		{"RDMA_MSG, no chunks", RPCRDMAHeader{XID: 0x1234, Vers: 1, Credits: 128, Proc: RDMAMsg, Length: 28}},
		{"RDMA_MSG, a read chunk of two segments", RPCRDMAHeader{XID: 1, Vers: 1, Credits: 32, Proc: RDMAMsg,
			ReadList: []ReadSegment{{140, seg(0x11, 4096, 0x7f0000)}, {140, seg(0x12, 100, 0x7f1000)}}, Length: 28 + 2*24}},
		{"RDMA_MSG, a write list of two chunks and a reply chunk", RPCRDMAHeader{XID: 2, Vers: 1, Credits: 32, Proc: RDMAMsg,
			WriteList:     [][]RDMASegment{{seg(1, 2, 3), seg(4, 5, 6)}, {seg(7, 8, 9)}},
			HasReplyChunk: true, ReplyChunk: []RDMASegment{seg(10, 11, 12)}, Length: 112}},
		{"RDMA_NOMSG, position-zero read chunk", RPCRDMAHeader{XID: 3, Vers: 1, Credits: 1, Proc: RDMANoMsg,
			ReadList: []ReadSegment{{0, seg(0x99, 9000, 0x1000)}}, Length: 28 + 24}},
		{"RDMA_NOMSG, empty reply chunk", RPCRDMAHeader{XID: 3, Vers: 1, Credits: 1, Proc: RDMANoMsg, HasReplyChunk: true,
			ReplyChunk: []RDMASegment{}, Length: 28 + 4}},
		{"RDMA_MSGP", RPCRDMAHeader{XID: 4, Vers: 1, Credits: 1, Proc: RDMAMsgP, Align: 4096, Thresh: 1024, Length: 36}},
		{"RDMA_DONE", RPCRDMAHeader{XID: 4, Vers: 1, Credits: 1, Proc: RDMADone, Length: 16}},
		{"ERR_VERS", RPCRDMAHeader{XID: 5, Vers: 1, Proc: RDMAError, Err: ErrVers, VersLow: 1, VersHigh: 1, Length: 28}},
		{"ERR_CHUNK", RPCRDMAHeader{XID: 6, Vers: 1, Proc: RDMAError, Err: ErrChunk, Length: 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.h.AppendBinary(nil)
			got, err := DecodeRPCRDMA(append(b, 0xde, 0xad))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tt.h, got); diff != "" {
				t.Errorf("unexpected header (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeRPCRDMAErrors(t *testing.T) {
	w := func(vs ...uint32) []byte {
		x := &xdrWriter{}
		for _, v := range vs {
			x.u32(v)
		}
		return x.b
	}
	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"short", w(1, 1), "RPC-over-RDMA header: offset 8: cut short"},
		{"version 2", w(1, 2, 1, 0), "RPC-over-RDMA version 2, not 1"},
		{"unknown procedure", w(1, 1, 1, 9), "RPC-over-RDMA header: offset 16: unknown procedure 9"},
		{"read list cut", w(1, 1, 1, 0, 1, 0, 5), "RPC-over-RDMA header: offset 28: cut short"},
		{"huge write chunk", w(1, 1, 1, 0, 0, 1, 0xffffffff), "RPC-over-RDMA header: offset 28: a chunk of 4294967295 segments in 0 bytes: cut short"},
		{"unknown error", w(1, 1, 1, 4, 7), "RPC-over-RDMA header: offset 20: unknown RDMA_ERROR code 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeRPCRDMA(tt.b)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLooksLikeRPCRDMA(t *testing.T) {
	msg := RPCRDMAHeader{XID: 7, Vers: 1, Credits: 32, Proc: RDMAMsg}
	nomsg := RPCRDMAHeader{XID: 7, Vers: 1, Credits: 32, Proc: RDMANoMsg, HasReplyChunk: true, ReplyChunk: []RDMASegment{{1, 2, 3}}}
	tests := []struct {
		name string
		b    []byte
		want bool
	}{
		{"RDMA_MSG with its call", append(msg.AppendBinary(nil), rpcCallBytes(7)...), true},
		{"RDMA_MSG, another XID", append(msg.AppendBinary(nil), rpcCallBytes(8)...), false},
		{"RDMA_NOMSG", nomsg.AppendBinary(nil), true},
		{"RDMA_NOMSG with trailing bytes", append(nomsg.AppendBinary(nil), 0, 0, 0, 0), false},
		{"ping-pong bytes", fill(0x7b, 64), false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		if got := LooksLikeRPCRDMA(tt.b); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// FuzzDecodeRPCRDMA: arbitrary headers never panic, and one that decodes
// encodes back to the bytes it came from.
func FuzzDecodeRPCRDMA(f *testing.F) {
	f.Add((&RPCRDMAHeader{XID: 1, Vers: 1, Proc: RDMAMsg, ReadList: []ReadSegment{{4, RDMASegment{1, 2, 3}}},
		WriteList: [][]RDMASegment{{{4, 5, 6}}}, HasReplyChunk: true}).AppendBinary(nil))
	f.Add((&RPCRDMAHeader{XID: 1, Vers: 1, Proc: RDMAError, Err: ErrVers}).AppendBinary(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeRPCRDMA(b)
		LooksLikeRPCRDMA(b)
		if err != nil {
			return
		}
		if got := h.AppendBinary(nil); !cmp.Equal(got, b[:h.Length]) {
			t.Fatalf("round trip: %x, want %x", got, b[:h.Length])
		}
	})
}
