package trace

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// msgSum is what the reassembly tests compare of a message.
type msgSum struct {
	Op        MessageOp
	QP        uint32
	PSNs      [2]uint32
	Packets   int
	Length    int
	Complete  bool
	Problems  int
	Responses int
}

func summarize(res *Result) ([]msgSum, []EventKind) {
	var ms []msgSum
	for _, m := range res.Messages {
		ms = append(ms, msgSum{m.Op, m.QP, [2]uint32{m.FirstPSN, m.LastPSN}, m.Packets, m.Length, m.Complete, len(m.Problems), m.Responses})
	}
	var es []EventKind
	for _, e := range res.Events {
		es = append(es, e.Kind)
	}
	return ms, es
}

func TestReassemble(t *testing.T) {
	const qp, back = 0x11, 0x12
	w1, w2, w3 := fill(0, 1024), fill(100, 1024), fill(200, 952)
	writeFirst := func(psn uint32) *Packet { return withRETH(rc(OpWriteFirst, qp, psn, w1), 0x1000, 0x77, 3000) }
	mid := func(psn uint32) *Packet { return rc(OpWriteMiddle, qp, psn, w2) }
	last := func(psn uint32) *Packet { return rc(OpWriteLast, qp, psn, w3) }
	bad := func(p *Packet) *Packet { p.ICRC = 1; return p } // marker: encode with a bad ICRC
	imm := uint32(9)
	sendImm := rc(OpSendOnlyImm, qp, 4, fill(0, 10))
	sendImm.ImmDt = &imm
	nak := reply(OpAcknowledge, back, 1, nil)
	nak.AETH = &AETH{Syndrome: 0x60}
	atomic := rc(OpFetchAdd, qp, 7, nil)
	atomic.AtomicETH = &AtomicETH{VA: 0x2000, RKey: 0x78, SwapAdd: 1}
	atomicAck := reply(OpAtomicAcknowledge, back, 7, nil)
	orig := uint64(41)
	atomicAck.AtomicAckETH = &orig
	read := func(psn uint32, va uint64, n uint32) *Packet {
		return withRETH(rc(OpReadRequest, qp, psn, nil), va, 0x79, n)
	}
	resp := func(op Operation, psn uint32, n int) *Packet { return reply(op, back, psn, fill(byte(psn), n)) }
	write3 := msgSum{MsgWrite, qp, [2]uint32{1, 3}, 3, 3000, true, 0, 0}

	tests := []struct {
		name   string
		ps     []*Packet
		want   []msgSum
		events []EventKind
	}{
		{"in order", []*Packet{writeFirst(1), mid(2), last(3), sendImm},
			[]msgSum{write3, {MsgSend, qp, [2]uint32{4, 4}, 1, 10, true, 0, 0}}, nil},
		{"a lost middle", []*Packet{writeFirst(1), last(3)},
			[]msgSum{{MsgWrite, qp, [2]uint32{1, 3}, 2, 1976, false, 1, 0}}, []EventKind{EventGap}},
		{"a lost first", []*Packet{mid(2), last(3), sendImm},
			[]msgSum{{MsgWrite, qp, [2]uint32{2, 3}, 2, 1976, false, 1, 0}, {MsgSend, qp, [2]uint32{4, 4}, 1, 10, true, 0, 0}}, nil},
		{"a lost last", []*Packet{writeFirst(1), mid(2), sendImm},
			[]msgSum{{MsgWrite, qp, [2]uint32{1, 2}, 2, 2048, false, 2, 0}, {MsgSend, qp, [2]uint32{4, 4}, 1, 10, true, 0, 0}}, []EventKind{EventGap}},
		{"a duplicate", []*Packet{writeFirst(1), mid(2), mid(2), last(3)}, []msgSum{write3}, []EventKind{EventDuplicate}},
		{"reordered", []*Packet{writeFirst(1), last(3), mid(2)}, []msgSum{write3}, []EventKind{EventOutOfOrder}},
		{"go-back-N after a NAK", []*Packet{writeFirst(1), last(3), nak, mid(2), last(3)}, []msgSum{write3},
			[]EventKind{EventNAK, EventOutOfOrder, EventDuplicate}},
		{"PSN wrap", []*Packet{writeFirst(0xfffffe), mid(0xffffff), last(0)},
			[]msgSum{{MsgWrite, qp, [2]uint32{0xfffffe, 0}, 3, 3000, true, 0, 0}}, nil},
		{"bad ICRC, then resent", []*Packet{writeFirst(1), bad(mid(2)), mid(2), last(3)}, []msgSum{write3}, []EventKind{EventBadICRC}},
		{"bad ICRC, never resent", []*Packet{writeFirst(1), bad(mid(2)), last(3)},
			[]msgSum{{MsgWrite, qp, [2]uint32{1, 3}, 2, 1976, false, 1, 0}}, []EventKind{EventBadICRC, EventGap}},
		{"RDMA READ", []*Packet{read(10, 0x5000, 2500), resp(OpReadResponseFirst, 10, 1024), resp(OpReadResponseMiddle, 11, 1024),
			resp(OpReadResponseLast, 12, 452), rc(OpSendOnly, qp, 13, nil)},
			[]msgSum{{MsgRead, qp, [2]uint32{10, 12}, 4, 2500, true, 0, 3}, {MsgSend, qp, [2]uint32{13, 13}, 1, 0, true, 0, 0}}, nil},
		{"RDMA READ with a lost response", []*Packet{read(10, 0x5000, 2500), resp(OpReadResponseFirst, 10, 1024),
			resp(OpReadResponseLast, 12, 452), rc(OpSendOnly, qp, 13, nil)},
			[]msgSum{{MsgRead, qp, [2]uint32{10, 12}, 3, 1476, false, 1, 2}, {MsgSend, qp, [2]uint32{13, 13}, 1, 0, true, 0, 0}},
			[]EventKind{EventGap}},
		{"RDMA READ resumed after a lost response", []*Packet{read(10, 0x5000, 2500), resp(OpReadResponseFirst, 10, 1024),
			read(11, 0x5400, 1476), resp(OpReadResponseFirst, 11, 1024), resp(OpReadResponseLast, 12, 452)},
			[]msgSum{{MsgRead, qp, [2]uint32{10, 12}, 4, 2500, true, 0, 3}}, []EventKind{EventDuplicate}},
		{"RDMA READ without its responses", []*Packet{read(10, 0x5000, 100), rc(OpSendOnly, qp, 11, nil)},
			[]msgSum{{MsgRead, qp, [2]uint32{10, 10}, 1, 0, false, 1, 0}, {MsgSend, qp, [2]uint32{11, 11}, 1, 0, true, 0, 0}}, nil},
		{"READ responses without their request", []*Packet{resp(OpReadResponseOnly, 10, 8)},
			[]msgSum{{MsgRead, unknownQP, [2]uint32{10, 10}, 1, 8, false, 1, 1}}, []EventKind{EventUnmatched}},
		{"atomic", []*Packet{atomic, atomicAck}, []msgSum{{MsgFetchAdd, qp, [2]uint32{7, 7}, 1, 0, true, 0, 0}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fs []Frame
			for i, p := range tt.ps {
				f := encodeAll(t, []*Packet{p}, EncodeOptions{BadICRC: p.ICRC == 1})[0]
				f.Number = i + 1
				fs = append(fs, f)
			}
			ms, es := summarize(reassemble(fs))
			if diff := cmp.Diff(tt.want, ms); diff != "" {
				t.Errorf("unexpected messages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.events, es); diff != "" {
				t.Errorf("unexpected events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReassemblePayload: the bytes of a WRITE and a READ come back in
// order, the READ's response QP and the atomic's original data are found.
func TestReassemblePayload(t *testing.T) {
	data := fill(0, 2500)
	ps := []*Packet{
		withRETH(rc(OpWriteFirst, 0x11, 1, data[:1024]), 0x1000, 0x77, 2500),
		rc(OpWriteLast, 0x11, 3, data[2048:]),
		rc(OpWriteMiddle, 0x11, 2, data[1024:2048]),
		withRETH(rc(OpReadRequest, 0x11, 4, nil), 0x2000, 0x78, 2500),
		reply(OpReadResponseFirst, 0x12, 4, data[:1024]),
		reply(OpReadResponseMiddle, 0x12, 5, data[1024:2048]),
		reply(OpReadResponseLast, 0x12, 6, data[2048:]),
	}
	res := reassemble(encodeAll(t, ps, EncodeOptions{}))
	if len(res.Messages) != 2 {
		t.Fatalf("%d messages, want 2", len(res.Messages))
	}
	for _, m := range res.Messages {
		if !bytes.Equal(m.Payload, data) || !m.Complete {
			t.Errorf("%s: %d bytes, complete %v; want the 2500 bytes sent", m.Op, len(m.Payload), m.Complete)
		}
	}
	if r := res.Messages[1]; r.SrcQP == nil || *r.SrcQP != 0x12 || *r.RKey != 0x78 || *r.VA != 0x2000 {
		t.Errorf("READ: srcQP %v rkey %v va %v; want 0x12, 0x78, 0x2000", r.SrcQP, r.RKey, r.VA)
	}
	q := res.QPs[0]
	want := QPStats{Src: hostA, Dst: hostB, QP: 0x11, PeerQP: q.PeerQP, Transport: TransportRC, Packets: 7, Messages: 2,
		Writes: 1, Reads: 1, Bytes: 5000, OutOfOrder: 1}
	if diff := cmp.Diff(want, *q); diff != "" {
		t.Errorf("unexpected QP stats (-want +got):\n%s", diff)
	}
}

// TestReassembleSnapLength: a capture cut short keeps the message's
// offsets (zeros where bytes are missing) and says so.
func TestReassembleSnapLength(t *testing.T) {
	data := fill(0, 2048)
	fs := encodeAll(t, []*Packet{
		withRETH(rc(OpWriteFirst, 0x11, 1, data[:1024]), 0x1000, 0x77, 2048),
		rc(OpWriteLast, 0x11, 2, data[1024:]),
	}, EncodeOptions{})
	for i := range fs {
		fs[i].Data = fs[i].Data[:200]
	}
	res := reassemble(fs)
	m := res.Messages[0]
	if m.Length != 2048 || len(m.Payload) != 2048 || m.Complete || len(m.Problems) != 2 {
		t.Errorf("length %d, payload %d, complete %v, problems %q; want 2048, 2048, false and two problems",
			m.Length, len(m.Payload), m.Complete, m.Problems)
	}
	if !bytes.Equal(m.Payload[:100], data[:100]) {
		t.Error("the captured start of the payload differs")
	}
}

// TestReassembleMalformed: a malformed packet is an event; the packets
// around it still make their messages.
func TestReassembleMalformed(t *testing.T) {
	fs := encodeAll(t, []*Packet{rc(OpSendOnly, 0x11, 1, fill(0, 8)), rc(OpSendOnly, 0x11, 2, fill(0, 8)),
		rc(OpSendOnly, 0x11, 3, fill(0, 8))}, EncodeOptions{})
	fs[1].Data = fs[1].Data[:len(fs[1].Data)-10]
	fs[1].OrigLen = len(fs[1].Data)
	ms, es := summarize(reassemble(fs))
	if len(ms) != 2 || !cmp.Equal(es, []EventKind{EventMalformed, EventGap}) {
		t.Errorf("%d messages, events %v; want 2 and [malformed gap]", len(ms), es)
	}
}
