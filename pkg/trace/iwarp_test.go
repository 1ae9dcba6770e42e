package trace

import (
	"bytes"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var (
	iwClient = netip.MustParseAddrPort("192.0.2.1:40000")
	iwServer = netip.MustParseAddrPort("192.0.2.2:20049")
)

// iwConn builds the TCP segments of an iWARP connection.
type iwConn struct {
	segs   [][]byte // Ethernet frames
	seq    [2]uint32
	framer [2]*MPAFramer
	// split cuts each FPDU's TCP payload in pieces of at most this much.
	split int
}

func (c *iwConn) addr(side int) (netip.AddrPort, netip.AddrPort) {
	if side == 0 {
		return iwClient, iwServer
	}
	return iwServer, iwClient
}

// tcp sends payload from side (0 client, 1 server) in one segment.
func (c *iwConn) tcp(side int, flags byte, payload []byte) {
	src, dst := c.addr(side)
	c.segs = append(c.segs, AppendTCPFrame(nil, src, dst, c.seq[side], flags, payload))
	c.seq[side] += uint32(len(payload))
	if flags&tcpSYN != 0 {
		c.seq[side]++
	}
}

// start opens the connection: SYNs, MPA Request (M says the client wants
// markers), MPA Reply (M says the server wants them), CRC if either asks.
func (c *iwConn) start(reqM, repM, crc bool) {
	c.seq = [2]uint32{1000, 0xfffff000} // the server's wraps
	c.tcp(0, tcpSYN, nil)
	c.tcp(1, tcpSYN, nil)
	c.tcp(0, 0, (&MPAStartFrame{Request: true, Markers: reqM, CRC: crc, Rev: 1, PrivateData: []byte{1, 2}}).AppendBinary(nil))
	c.tcp(1, 0, (&MPAStartFrame{Markers: repM, CRC: crc, Rev: 1}).AppendBinary(nil))
	c.framer = [2]*MPAFramer{{Markers: repM, CRC: crc}, {Markers: reqM, CRC: crc}}
}

// fpdu sends DDP segments from side, one FPDU per TCP segment (or split).
func (c *iwConn) fpdu(side int, ds ...*DDPSegment) {
	for _, d := range ds {
		b := c.framer[side].Append(nil, d.AppendBinary(nil))
		for c.split > 0 && len(b) > c.split {
			c.tcp(side, 0, b[:c.split])
			b = b[c.split:]
		}
		c.tcp(side, 0, b)
	}
}

func (c *iwConn) frames() []Frame {
	var fs []Frame
	for i, b := range c.segs {
		fs = append(fs, Frame{Number: i + 1, Time: time.Unix(1700000000, int64(i)).UTC(), Link: LinkEthernet, Data: b, OrigLen: len(b)})
	}
	return fs
}

func iwReassemble(fs []Frame) *Result {
	r := NewIWARPReassembler()
	for _, f := range fs {
		r.Add(f)
	}
	return r.Finish()
}

// iwSend, iwWrite and iwRead make the DDP segments of one message,
// cut in pieces of n bytes.
func iwSend(msn uint32, data []byte, n int) []*DDPSegment {
	var ds []*DDPSegment
	for mo := 0; mo < len(data) || mo == 0; mo += n {
		end := min(mo+n, len(data))
		ds = append(ds, &DDPSegment{Opcode: RDMAPSend, QN: 0, MSN: msn, MO: uint32(mo), Last: end == len(data), Payload: data[mo:end]})
		if end == len(data) {
			break
		}
	}
	return ds
}

func iwTagged(op RDMAPOpcode, stag uint32, to uint64, data []byte, n int) []*DDPSegment {
	var ds []*DDPSegment
	for off := 0; off < len(data); off += n {
		end := min(off+n, len(data))
		ds = append(ds, &DDPSegment{Tagged: true, Opcode: op, STag: stag, TO: to + uint64(off), Last: end == len(data), Payload: data[off:end]})
	}
	return ds
}

func iwReadReq(msn uint32, sink uint32, sinkTO uint64, size uint32, src uint32, srcTO uint64) *DDPSegment {
	return &DDPSegment{Opcode: RDMAPReadRequest, QN: 1, MSN: msn, Last: true,
		Read: &ReadRequest{SinkSTag: sink, SinkTO: sinkTO, Size: size, SrcSTag: src, SrcTO: srcTO}}
}

// mpaStart is what iwConn.start's MPA Request (two bytes of private
// data) and Reply are as messages.
var mpaStart = []msgSum{{MsgMPARequest, 0, [2]uint32{0, 0}, 1, 2, true, 0, 0}, {MsgMPAReply, 0, [2]uint32{0, 0}, 1, 0, true, 0, 0}}

func TestIWARP(t *testing.T) {
	data := fill(5, 3000)
	// The client sends, the server writes into the client's STag 0x77 and
	// reads 3000 bytes of the client's STag 0x88 into its own 0x99.
	build := func(c *iwConn) {
		c.fpdu(0, iwSend(1, data[:100], 1000)...)
		c.fpdu(1, iwTagged(RDMAPWrite, 0x77, 0x1000, data, 1400)...)
		c.fpdu(1, iwReadReq(1, 0x99, 0x5000, 3000, 0x88, 0x2000))
		c.fpdu(0, iwTagged(RDMAPReadResponse, 0x99, 0x5000, data, 1400)...)
		c.fpdu(0, iwSend(2, data, 1024)...)
	}
	dataMsgs := []msgSum{
		{MsgSend, 0, [2]uint32{1, 1}, 1, 100, true, 0, 0},
		{MsgWrite, 0, [2]uint32{0, 0}, 3, 3000, true, 0, 0},
		{MsgRead, 0, [2]uint32{1, 1}, 4, 3000, true, 0, 3},
		{MsgSend, 0, [2]uint32{2, 2}, 3, 3000, true, 0, 0},
	}
	want := append(slices.Clone(mpaStart), dataMsgs...)
	tests := []struct {
		name       string
		reqM, repM bool
		crc        bool
		split      int
		mangle     func(c *iwConn)
		want       []msgSum
		events     []EventKind
	}{
		{name: "plain", want: want},
		{name: "CRC", crc: true, want: want},
		{name: "markers both ways and CRC", reqM: true, repM: true, crc: true, want: want},
		{name: "markers one way", repM: true, want: want},
		{name: "FPDUs split over TCP segments", crc: true, reqM: true, split: 300, want: want},
		{name: "a TCP retransmission", crc: true, mangle: func(c *iwConn) {
			c.segs = append(c.segs[:6], append([][]byte{c.segs[5]}, c.segs[6:]...)...)
		}, want: want, events: []EventKind{EventDuplicate}},
		{name: "reordered", crc: true, mangle: func(c *iwConn) {
			c.segs[5], c.segs[6] = c.segs[6], c.segs[5]
		}, want: want, events: []EventKind{EventOutOfOrder}},
		{name: "a lost segment", crc: true, mangle: func(c *iwConn) {
			c.segs = append(c.segs[:6], c.segs[7:]...) // the WRITE's second segment
		}, want: []msgSum{
			mpaStart[0], mpaStart[1],
			{MsgSend, 0, [2]uint32{1, 1}, 1, 100, true, 0, 0},
			{MsgWrite, 0, [2]uint32{0, 0}, 1, 1400, false, 1, 0},
			{MsgWrite, 0, [2]uint32{0, 0}, 1, 200, true, 0, 0},
			{MsgRead, 0, [2]uint32{1, 1}, 4, 3000, true, 0, 3},
			{MsgSend, 0, [2]uint32{2, 2}, 3, 3000, true, 0, 0},
		}, events: []EventKind{EventGap}},
		{name: "a bad CRC", crc: true, mangle: func(c *iwConn) {
			c.segs[4][len(c.segs[4])-10] ^= 1 // in the first Send
		}, want: append(slices.Clone(mpaStart), dataMsgs[1:]...), events: []EventKind{EventBadCRC}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &iwConn{split: tt.split}
			c.start(tt.reqM, tt.repM, tt.crc)
			build(c)
			if tt.mangle != nil {
				tt.mangle(c)
			}
			res := iwReassemble(c.frames())
			ms, es := summarize(res)
			if diff := cmp.Diff(tt.want, ms); diff != "" {
				t.Errorf("unexpected messages (-want +got):\n%s", diff)
				for _, e := range res.Events {
					t.Logf("event %+v", e)
				}
				for _, m := range res.Messages {
					t.Logf("message %s %v", m.Op, m.Problems)
				}
			}
			if diff := cmp.Diff(tt.events, es); diff != "" {
				t.Errorf("unexpected events (-want +got):\n%s", diff)
			}
			for _, m := range res.Messages {
				if m.Complete && m.Length == 3000 && !bytes.Equal(m.Payload, data) {
					t.Errorf("%s: the payload differs from the bytes sent", m.Op)
				}
			}
		})
	}
}

// TestIWARPRead: an RDMA Read over iWARP has the request's source STag and
// offset, so chunk reassembly finds it like a RoCE one.
func TestIWARPRead(t *testing.T) {
	c := &iwConn{}
	c.start(false, false, true)
	c.fpdu(1, iwReadReq(1, 0x99, 0x5000, 100, 0x88, 0x2000))
	c.fpdu(0, iwTagged(RDMAPReadResponse, 0x99, 0x5000, fill(1, 100), 64)...)
	res := iwReassemble(c.frames())
	if len(res.Messages) != 3 {
		t.Fatalf("%d messages, want the MPA Request and Reply and the read", len(res.Messages))
	}
	m := res.Messages[2]
	if m.Src != iwServer.String() || m.Dst != iwClient.String() || *m.RKey != 0x88 || *m.VA != 0x2000 || *m.DMALength != 100 || !m.Complete {
		t.Errorf("read: %s > %s rkey %#x va %#x len %d complete %v", m.Src, m.Dst, *m.RKey, *m.VA, *m.DMALength, m.Complete)
	}
	if q := res.QPs; len(q) != 2 || q[1].Reads != 1 || q[0].Transport != TransportIWARP {
		t.Errorf("stats: %+v %+v", q[0], q[1])
	}
}

// TestIWARPNotTCPNoise: TCP connections that are not iWARP are passed over.
func TestIWARPNotTCPNoise(t *testing.T) {
	c := &iwConn{}
	c.tcp(0, 0, []byte("GET / HTTP/1.1\r\nHost: example\r\n\r\n"))
	c.tcp(1, 0, []byte("HTTP/1.1 200 OK\r\n\r\n"))
	res := iwReassemble(c.frames())
	if len(res.Messages) != 0 || len(res.Events) != 0 || len(res.QPs) != 0 {
		t.Errorf("HTTP taken for iWARP: %+v", res)
	}
}

// FuzzDecodeDDP: arbitrary DDP segments never panic, and one that decodes
// encodes back to the same segment.
func FuzzDecodeDDP(f *testing.F) {
	for _, d := range []*DDPSegment{iwReadReq(1, 2, 3, 4, 5, 6), iwSend(1, fill(0, 10), 5)[0], iwTagged(RDMAPWrite, 1, 2, fill(0, 4), 4)[0]} {
		f.Add(d.AppendBinary(nil))
	}
	f.Add((&MPAStartFrame{Request: true, CRC: true, PrivateData: []byte{1}}).AppendBinary(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		DecodeMPAStart(b)
		looksLikeFPDU(b)
		d, err := DecodeDDP(b)
		if err != nil {
			return
		}
		e, err := DecodeDDP(d.AppendBinary(nil))
		if err != nil {
			t.Fatalf("re-encoded segment: %v", err)
		}
		if !cmp.Equal(d, e) {
			t.Fatalf("round trip changed the segment:\n%+v\n%+v", d, e)
		}
	})
}

// FuzzIWARP feeds arbitrary TCP payloads, after MPA start frames with the
// flags the fuzzer picks, to the iWARP reassembler: no panics, and the RPC
// layer on top holds too.
func FuzzIWARP(f *testing.F) {
	c := &iwConn{}
	c.start(true, true, true)
	seed := c.framer[0].Append(nil, iwSend(1, fill(0, 600), 600)[0].AppendBinary(nil))
	f.Add(byte(7), seed, []byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, flags byte, a, b []byte, cut uint16) {
		c := &iwConn{}
		c.start(flags&1 != 0, flags&2 != 0, flags&4 != 0)
		c.tcp(0, 0, a)
		c.tcp(1, 0, b)
		if flags&8 != 0 && int(cut) < len(a) {
			c.seq[0] -= uint32(len(a)) - uint32(cut) // a partial retransmission
			c.tcp(0, 0, a[cut:])
		}
		res := iwReassemble(c.frames())
		AssembleRPC(res.Messages, RPCOptions{Force: flags&16 != 0})
	})
}

// TestNFSOverIWARP: an NFSv3 WRITE whose read chunk the server pulls with
// two RDMA Reads, and a READ whose data it writes into a write chunk, all
// over iWARP with markers and CRCs, come out as over RoCE.
func TestNFSOverIWARP(t *testing.T) {
	data := fill(9, 5000)
	c := &iwConn{split: 1460}
	c.start(true, true, true)
	w := nfsCall(10, 3, 7)
	w.opaque(testFH)
	w.u64(0)
	xdrWords(w, 5000, 2, 5000)
	seg := RDMASegment{Handle: 0x1234, Length: 5000, Offset: 0x10000}
	call := RPCRDMAHeader{XID: 10, Vers: 1, Credits: 32, ReadList: []ReadSegment{{uint32(len(w.b)), seg}}}
	c.fpdu(0, iwSend(1, append(call.AppendBinary(nil), w.b...), 1024)...)
	c.fpdu(1, iwReadReq(1, 0x99, 0x8000, 4096, 0x1234, 0x10000), iwReadReq(2, 0x99, 0x9000, 904, 0x1234, 0x11000))
	c.fpdu(0, iwTagged(RDMAPReadResponse, 0x99, 0x8000, data[:4096], 1400)...)
	c.fpdu(0, iwTagged(RDMAPReadResponse, 0x99, 0x9000, data[4096:], 1400)...)
	c.fpdu(1, iwSend(1, append((&RPCRDMAHeader{XID: 10, Vers: 1, Credits: 32}).AppendBinary(nil),
		xdrWords(nfsReply(10), 0, 0, 0, 5000, 2, 0, 0).b...), 1024)...)

	r := nfsCall(11, 3, 6)
	r.opaque(testFH)
	r.u64(0)
	r.u32(5000)
	wseg := RDMASegment{Handle: 0x5678, Length: 8192, Offset: 0x20000}
	c.fpdu(0, iwSend(2, append((&RPCRDMAHeader{XID: 11, Vers: 1, Credits: 32, WriteList: [][]RDMASegment{{wseg}}}).AppendBinary(nil), r.b...), 1024)...)
	c.fpdu(1, iwTagged(RDMAPWrite, 0x5678, 0x20000, data, 1400)...)
	wseg.Length = 5000
	c.fpdu(1, iwSend(2, append((&RPCRDMAHeader{XID: 11, Vers: 1, Credits: 32, WriteList: [][]RDMASegment{{wseg}}}).AppendBinary(nil),
		xdrWords(nfsReply(11), 0, 0, 5000, 1, 5000).b...), 1024)...)

	res := iwReassemble(c.frames())
	if len(res.Events) != 0 {
		t.Errorf("events: %+v", res.Events)
	}
	rs := AssembleRPC(res.Messages, RPCOptions{})
	var lines []string
	for _, x := range rs {
		if !x.Complete || len(x.Problems) > 0 {
			t.Errorf("RPC %d: complete %v, problems %q", x.Index, x.Complete, x.Problems)
		}
		if x.NFS != nil {
			lines = append(lines, x.NFS.String())
			if io := x.NFS.IO; io != nil && len(io.Data) > 0 && !bytes.Equal(io.Data, data) {
				t.Errorf("RPC %d: %d bytes of NFS data differ from the file's", x.Index, len(io.Data))
			}
		}
	}
	want := []string{
		"NFS3 WRITE fh 0102030405060708090a0b0c0d0e0f1011121314 offset 0 count 5000 via read chunk: 5000 bytes in 4 READ responses",
		"NFS3 WRITE fh 0102030405060708090a0b0c0d0e0f1011121314 offset 0 count 5000",
		"NFS3 READ fh 0102030405060708090a0b0c0d0e0f1011121314 offset 0 count 5000",
		"NFS3 READ fh 0102030405060708090a0b0c0d0e0f1011121314 offset 0 count 5000 eof via write chunk: 5000 bytes in 4 WRITE packets",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("unexpected NFS lines (-want +got):\n%s", diff)
	}
}

// TestIWARPMidStream: a capture that starts in the middle of an FPDU and
// has no MPA start frames still finds the connection at the first segment
// that is one whole FPDU, with its CRC.
func TestIWARPMidStream(t *testing.T) {
	c := &iwConn{}
	c.start(false, false, true)
	c.fpdu(0, iwSend(1, fill(1, 100), 100)...)
	c.split = 60
	c.fpdu(0, iwSend(2, fill(2, 100), 100)...) // two segments
	c.split = 0
	c.fpdu(0, iwSend(3, fill(3, 100), 100)...)
	c.fpdu(0, iwTagged(RDMAPWrite, 7, 0x100, fill(4, 200), 200)...)
	c.segs = c.segs[6:] // from the second half of Send 2 on
	res := iwReassemble(c.frames())
	ms, es := summarize(res)
	want := []msgSum{{MsgSend, 0, [2]uint32{3, 3}, 1, 100, true, 0, 0}, {MsgWrite, 0, [2]uint32{0, 0}, 1, 200, true, 0, 0}}
	if diff := cmp.Diff(want, ms); diff != "" || len(es) != 0 {
		t.Errorf("unexpected messages (-want +got):\n%s\nevents %v", diff, es)
	}
}

// TestIWARPReadLost: when the responses to one RDMA Read are all lost,
// the next Read still finds its request, and the first says it had none.
func TestIWARPReadLost(t *testing.T) {
	c := &iwConn{}
	c.start(false, false, true)
	c.fpdu(1, iwReadReq(1, 0x91, 0x5000, 100, 0x81, 0x2000), iwReadReq(2, 0x92, 0x6000, 100, 0x82, 0x3000))
	n := len(c.segs)
	c.fpdu(0, iwTagged(RDMAPReadResponse, 0x91, 0x5000, fill(1, 100), 100)...)
	c.fpdu(0, iwTagged(RDMAPReadResponse, 0x92, 0x6000, fill(2, 100), 100)...)
	c.segs = append(c.segs[:n], c.segs[n+1:]...) // the first Read's response
	ms, es := summarize(iwReassemble(c.frames()))
	want := append(slices.Clone(mpaStart), msgSum{MsgRead, 0, [2]uint32{1, 1}, 1, 0, false, 1, 0}, msgSum{MsgRead, 0, [2]uint32{2, 2}, 2, 100, true, 0, 1})
	if diff := cmp.Diff(want, ms); diff != "" {
		t.Errorf("unexpected messages (-want +got):\n%s", diff)
	}
	if !cmp.Equal(es, []EventKind{EventGap}) {
		t.Errorf("events %v, want [gap]", es)
	}
}

// TestLooksLikeFPDU: a segment that is one FPDU has its CRC field whether
// or not CRCs were negotiated; without them it is zero (Linux's siw).
func TestLooksLikeFPDU(t *testing.T) {
	ddp := iwSend(1, fill(1, 30), 30)[0].AppendBinary(nil)
	with := (&MPAFramer{CRC: true}).Append(nil, ddp)
	without := (&MPAFramer{}).Append(nil, ddp)
	bad := slices.Clone(with)
	bad[len(bad)-1] ^= 1
	tests := []struct {
		name    string
		b       []byte
		crc, ok bool
	}{
		{"good CRC", with, true, true},
		{"zero CRC field", without, false, true},
		{"bad CRC", bad, true, false},
		{"no CRC field", without[:len(without)-4], false, false},
		{"a byte more", append(slices.Clone(without), 0), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crc, ok := looksLikeFPDU(tt.b)
			if crc != tt.crc || ok != tt.ok {
				t.Errorf("looksLikeFPDU = %v, %v, want %v, %v", crc, ok, tt.crc, tt.ok)
			}
		})
	}
}
