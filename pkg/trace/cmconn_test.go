package trace

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
)

// cmPacket is a CM MAD from src to dst, QP1 to QP1, as a RoCEv2 UD SEND.
func cmPacket(src, dst string, psn uint32, m *CMMessage) *Packet {
	b := cmMADBytes(uint16(m.Type), func(d []byte) { copy(d, m.AppendBinary(nil)) })
	return &Packet{Encap: EncapRoCEv2, Src: src, Dst: dst, UDPSrcPort: 49152,
		BTH:        BTH{Opcode: Opcode(TransportUD)<<5 | Opcode(OpSendOnly), PKey: 0xffff, DestQP: 1, PSN: psn},
		ExtHeaders: ExtHeaders{DETH: &DETH{QKey: 0x80010000, SrcQP: 1}}, Payload: b}
}

// cmScenario is two rdma_cm connections from hostA to hostB, port 7174:
// the first set up (its REQ sent twice, an MRA while the server thinks),
// used both ways and disconnected; the second rejected. Then a SEND on a
// QP no connection in the capture set up.
func cmScenario() []*Packet {
	sid := uint64(0x0000000001061c06)
	pd := (&RDMACMHeader{IPVersion: 4, SrcPort: 40000, Src: netip.MustParseAddr(hostA), Dst: netip.MustParseAddr(hostB)}).AppendBinary(nil)
	req := &CMMessage{Type: CMREQ, REQ: &CMReq{LocalCommID: 0x10, ServiceID: sid, LocalQPN: 0x11, StartingPSN: 0x100,
		PKey: 0xffff, PathMTU: 3, ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}, PrivateData: pd}
	rej := *req
	rej.REQ = &CMReq{LocalCommID: 0x30, ServiceID: sid, LocalQPN: 0x33, StartingPSN: 0x300, PKey: 0xffff, PathMTU: 3}
	back := func(p *Packet) *Packet { p.Src, p.Dst = hostB, hostA; return p }
	return []*Packet{
		cmPacket(hostA, hostB, 1, req),
		cmPacket(hostA, hostB, 2, req),
		cmPacket(hostB, hostA, 1, &CMMessage{Type: CMMRA, MRA: &CMMra{CMCommIDs: CMCommIDs{0x20, 0x10}, ServiceTimeout: 20}}),
		cmPacket(hostB, hostA, 2, &CMMessage{Type: CMREP, REP: &CMRep{CMCommIDs: CMCommIDs{0x20, 0x10}, LocalQPN: 0x22,
			StartingPSN: 0x500, ResponderResources: 1, InitiatorDepth: 1, RNRRetryCount: 7}}),
		cmPacket(hostA, hostB, 3, &CMMessage{Type: CMRTU, RTU: &CMCommIDs{0x10, 0x20}}),
		rc(OpSendOnly, 0x22, 0x500, fill(1, 64)),
		back(rc(OpSendOnly, 0x11, 0x100, fill(2, 32))),
		cmPacket(hostA, hostB, 4, &CMMessage{Type: CMDREQ, DREQ: &CMDreq{CMCommIDs: CMCommIDs{0x10, 0x20}, RemoteQPN: 0x22}}),
		cmPacket(hostB, hostA, 3, &CMMessage{Type: CMDREP, DREP: &CMCommIDs{0x20, 0x10}}),
		cmPacket(hostA, hostB, 5, &rej),
		cmPacket(hostB, hostA, 4, &CMMessage{Type: CMREJ, REJ: &CMRej{CMCommIDs: CMCommIDs{0, 0x30}, Reason: 28}}),
		rc(OpSendOnly, 0x44, 7, fill(3, 16)),
	}
}

func TestCMConnections(t *testing.T) {
	res := reassemble(encodeAll(t, cmScenario(), EncodeOptions{}))
	sid := uint64(0x0000000001061c06)
	want := []*Connection{
		{Index: 1, Transport: TransportRC, Service: "rdma_cm TCP port 7174", ServiceID: &sid, Active: hostA, Passive: hostB,
			ActiveQP: u32p(0x11), PassiveQP: u32p(0x22), ActivePSN: u32p(0x500), PassivePSN: u32p(0x100),
			ActiveCommID: u32p(0x10), PassiveCommID: u32p(0x20), State: ConnDisconnected, Frames: []int{1, 2, 3, 4, 5, 8, 9}},
		{Index: 2, Transport: TransportRC, Service: "rdma_cm TCP port 7174", ServiceID: &sid, Active: hostA, Passive: hostB,
			ActiveQP: u32p(0x33), PassivePSN: u32p(0x300), ActiveCommID: u32p(0x30), State: ConnRejected,
			Reject: "consumer reject", Frames: []int{10, 11}},
	}
	if diff := cmp.Diff(want, res.Connections); diff != "" {
		t.Errorf("unexpected connections (-want +got):\n%s", diff)
	}
	var got [][2]int
	for _, m := range res.Messages {
		got = append(got, [2]int{m.Frame, m.Connection})
		if m.Frame <= 11 && m.Transport == TransportUD && (m.CM == nil || m.MAD.MgmtClass != mad.ClassCM) {
			t.Errorf("frame %d: no CM message decoded", m.Frame)
		}
	}
	wantMsgs := [][2]int{{1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {7, 1}, {8, 1}, {9, 1}, {10, 2}, {11, 2}, {12, 0}}
	if diff := cmp.Diff(wantMsgs, got); diff != "" {
		t.Errorf("unexpected message connections [frame, connection] (-want +got):\n%s", diff)
	}
	qps := map[string]int{}
	for _, s := range res.QPs {
		qps[s.Src+">"+s.Dst+" "+fmt.Sprintf("%#06x", s.QP)] = s.Connection
	}
	wantQPs := map[string]int{hostA + ">" + hostB + " 0x000001": 0, hostB + ">" + hostA + " 0x000001": 0,
		hostA + ">" + hostB + " 0x000022": 1, hostB + ">" + hostA + " 0x000011": 1, hostA + ">" + hostB + " 0x000044": 0}
	if diff := cmp.Diff(wantQPs, qps); diff != "" {
		t.Errorf("unexpected queue pair connections (-want +got):\n%s", diff)
	}
}

// connLines is one line a connection of res, as line writes it.
func connLines(res *Result, line func(*Connection) string) []string {
	var out []string
	for _, c := range res.Connections {
		out = append(out, line(c))
	}
	return out
}

// TestCMConnectionsReusedID: a REQ with the communication ID of a
// connection that was rejected starts a new one.
func TestCMConnectionsReusedID(t *testing.T) {
	req := func(qp uint32) *CMMessage {
		return &CMMessage{Type: CMREQ, REQ: &CMReq{LocalCommID: 0x40, ServiceID: 0x99, LocalQPN: qp}}
	}
	ps := []*Packet{
		cmPacket(hostA, hostB, 1, req(0x41)),
		cmPacket(hostB, hostA, 1, &CMMessage{Type: CMREJ, REJ: &CMRej{CMCommIDs: CMCommIDs{0, 0x40}, Reason: 4}}),
		cmPacket(hostA, hostB, 2, req(0x42)),
		cmPacket(hostB, hostA, 2, &CMMessage{Type: CMREP, REP: &CMRep{CMCommIDs: CMCommIDs{0x50, 0x40}, LocalQPN: 0x51}}),
	}
	res := reassemble(encodeAll(t, ps, EncodeOptions{}))
	got := connLines(res, func(c *Connection) string {
		return fmt.Sprintf("%d %#x %s %s %v", c.Index, *c.ActiveQP, c.State, c.Reject, c.Frames)
	})
	want := []string{"1 0x41 rejected timeout [1 2]", "2 0x42 replied  [3 4]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected connections (-want +got):\n%s", diff)
	}
}

// TestCMConnectionsSIDRThenREQ: a REQ whose communication ID is the
// request ID of an open SIDR exchange between the same hosts starts a
// connection of its own, and the answers go to theirs: the SIDR_REP to
// the exchange, the REP to the connection.
func TestCMConnectionsSIDRThenREQ(t *testing.T) {
	ps := []*Packet{
		cmPacket(hostA, hostB, 1, &CMMessage{Type: CMSIDRREQ, SIDRREQ: &CMSIDRReq{RequestID: 0x40, ServiceID: 0x1111000}}),
		cmPacket(hostA, hostB, 2, &CMMessage{Type: CMREQ, REQ: &CMReq{LocalCommID: 0x40, ServiceID: 0x99, LocalQPN: 0x41}}),
		cmPacket(hostA, hostB, 3, &CMMessage{Type: CMSIDRREQ, SIDRREQ: &CMSIDRReq{RequestID: 0x40, ServiceID: 0x1111000}}),
		cmPacket(hostB, hostA, 1, &CMMessage{Type: CMSIDRREP, SIDRREP: &CMSIDRRep{RequestID: 0x40, QPN: 0x77}}),
		cmPacket(hostB, hostA, 2, &CMMessage{Type: CMREP, REP: &CMRep{CMCommIDs: CMCommIDs{0x50, 0x40}, LocalQPN: 0x51}}),
	}
	res := reassemble(encodeAll(t, ps, EncodeOptions{}))
	got := connLines(res, func(c *Connection) string {
		return fmt.Sprintf("%d %v %s %v", c.Index, c.Transport, c.State, c.Frames)
	})
	want := []string{"1 UD established [1 3 4]", "2 RC replied [2 5]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected connections (-want +got):\n%s", diff)
	}
}

// TestCMConnectionsUnanswered: a REQ or SIDR_REQ alone is a requested
// connection; a REP whose REQ the capture lacks starts none.
func TestCMConnectionsUnanswered(t *testing.T) {
	ps := []*Packet{
		cmPacket(hostB, hostA, 1, &CMMessage{Type: CMREP, REP: &CMRep{CMCommIDs: CMCommIDs{0x20, 0x10}, LocalQPN: 0x22}}),
		cmPacket(hostA, hostB, 1, &CMMessage{Type: CMSIDRREQ, SIDRREQ: &CMSIDRReq{RequestID: 1, ServiceID: 0x1111000}}),
		cmPacket(hostA, hostB, 2, &CMMessage{Type: CMREQ, REQ: &CMReq{LocalCommID: 0x40, ServiceID: 0x99, LocalQPN: 0x41}}),
	}
	res := reassemble(encodeAll(t, ps, EncodeOptions{}))
	got := connLines(res, func(c *Connection) string {
		return fmt.Sprintf("%d %v %s %s", c.Index, c.Transport, c.Service, c.State)
	})
	want := []string{"1 UD rdma_cm UDP port 4096 requested", "2 RC service 0x0000000000000099 requested"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected connections (-want +got):\n%s", diff)
	}
	if c := []int{res.Messages[0].Connection, res.Messages[1].Connection, res.Messages[2].Connection}; !cmp.Equal(c, []int{0, 1, 2}) {
		t.Errorf("message connections %v, want [0 1 2]", c)
	}
}

// TestSIDRConnections: a SIDR_REQ answered with a QP makes a UD
// connection its datagrams to that QP name; one answered with a bad
// status is rejected. rdma_cm's header is in the SIDR_REQ too.
func TestSIDRConnections(t *testing.T) {
	sid := uint64(0x0000000001111c06) // rdma_cm UDP port 7174
	pd := (&RDMACMHeader{IPVersion: 4, SrcPort: 40001, Src: netip.MustParseAddr(hostA), Dst: netip.MustParseAddr(hostB)}).AppendBinary(nil)
	ud := func(qp uint32) *Packet {
		p := rc(OpSendOnly, qp, 9, fill(0, 20))
		p.BTH.Opcode = Opcode(TransportUD)<<5 | Opcode(OpSendOnly)
		p.DETH = &DETH{QKey: 0x11111111, SrcQP: 0x66}
		return p
	}
	ps := []*Packet{
		cmPacket(hostA, hostB, 1, &CMMessage{Type: CMSIDRREQ, SIDRREQ: &CMSIDRReq{RequestID: 7, PKey: 0xffff, ServiceID: sid}, PrivateData: pd}),
		cmPacket(hostB, hostA, 1, &CMMessage{Type: CMSIDRREP, SIDRREP: &CMSIDRRep{RequestID: 7, QPN: 0x55, ServiceID: sid, QKey: 0x11111111}}),
		ud(0x55),
		cmPacket(hostA, hostB, 2, &CMMessage{Type: CMSIDRREQ, SIDRREQ: &CMSIDRReq{RequestID: 8, PKey: 0xffff, ServiceID: sid + 1}}),
		cmPacket(hostB, hostA, 2, &CMMessage{Type: CMSIDRREP, SIDRREP: &CMSIDRRep{RequestID: 8, Status: 1, ServiceID: sid + 1}}),
	}
	res := reassemble(encodeAll(t, ps, EncodeOptions{}))
	if h := res.Messages[0].CM.RDMACM; h == nil || h.SrcPort != 40001 || h.DstPort != 7174 || h.Protocol != 0x11 {
		t.Errorf("SIDR_REQ's rdma_cm header %+v", h)
	}
	var got []string
	for _, c := range res.Connections {
		qp := "-"
		if c.PassiveQP != nil {
			qp = fmt.Sprintf("%#x", *c.PassiveQP)
		}
		got = append(got, fmt.Sprintf("%d %v %s %s QP %s %s %v", c.Index, c.Transport, c.Service, c.State, qp, c.Reject, c.Frames))
	}
	want := []string{"1 UD rdma_cm UDP port 7174 established QP 0x55  [1 2]",
		"2 UD rdma_cm UDP port 7175 rejected QP - service ID not supported [4 5]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected connections (-want +got):\n%s", diff)
	}
	var conns []int
	for _, m := range res.Messages {
		conns = append(conns, m.Connection)
	}
	if !cmp.Equal(conns, []int{1, 1, 1, 2, 2}) {
		t.Errorf("message connections %v, want [1 1 1 2 2]", conns)
	}
	for _, s := range res.QPs {
		if want := map[uint32]int{1: 0, 0x55: 1}[s.QP]; s.Connection != want {
			t.Errorf("queue pair %s > %s %#x: connection %d, want %d", s.Src, s.Dst, s.QP, s.Connection, want)
		}
	}
}

// TestRealCMConnections pins the connections in the real NFS captures:
// the kernel's NFS client connects twice through rdma_cm over Soft-RoCE
// (REQ, REP, RTU, and DREQ and DREP at the unmount), and siw's MPA
// frames set up the iWARP ones.
func TestRealCMConnections(t *testing.T) {
	type connSum struct {
		Service, Active, Passive string
		QPs, PSNs                [2]uint32
		State                    ConnState
		Frames                   []int
	}
	tests := []struct {
		file string
		want []connSum
	}{
		{"nfs-rxe-v41.pcap", []connSum{
			{"rdma_cm TCP port 20049", "203.0.113.1", "203.0.113.2", [2]uint32{0x11, 0x11}, [2]uint32{0x190c2c, 0xdf090d},
				ConnDisconnected, []int{1, 2, 3, 134, 135}},
			{"rdma_cm TCP port 20049", "203.0.113.1", "203.0.113.2", [2]uint32{0x12, 0x12}, [2]uint32{0x434aad, 0x08faf4},
				ConnDisconnected, []int{136, 137, 138, 257, 258}},
		}},
		{"nfs-siw-v41.pcap", []connSum{
			{"TCP port 20049", "203.0.113.1:37094", "203.0.113.2:20049", [2]uint32{}, [2]uint32{}, ConnDisconnected, []int{4, 6}},
			{"TCP port 20049", "203.0.113.1:38895", "203.0.113.2:20049", [2]uint32{}, [2]uint32{}, ConnDisconnected, []int{109, 111}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res := readCaptureResult(t, "testdata/"+tt.file)
			var got []connSum
			for _, c := range res.Connections {
				s := connSum{Service: c.Service, Active: c.Active, Passive: c.Passive, State: c.State, Frames: c.Frames}
				if c.ActiveQP != nil && c.PassiveQP != nil {
					s.QPs = [2]uint32{*c.ActiveQP, *c.PassiveQP}
					s.PSNs = [2]uint32{*c.ActivePSN, *c.PassivePSN}
				}
				got = append(got, s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected connections (-want +got):\n%s", diff)
			}
			// Every data message belongs to a connection, and each data
			// queue pair names it.
			for _, m := range res.Messages {
				if m.Connection == 0 && m.Transport != TransportUD {
					t.Errorf("message #%d (frame %d %s) names no connection", m.Index, m.Frame, m.Op)
				}
			}
			for _, s := range res.QPs {
				if s.Connection == 0 && s.Transport != TransportUD {
					t.Errorf("queue pair %s > %s %#x names no connection", s.Src, s.Dst, s.QP)
				}
			}
		})
	}
}

// FuzzCMConnections feeds arbitrary CM messages, from either side and
// with data SENDs between them, to the reassembler: no panic, and every
// connection number a message or queue pair names is one of the result's.
func FuzzCMConnections(f *testing.F) {
	var seed []byte
	for _, p := range cmScenario() {
		if p.BTH.DestQP != 1 {
			continue
		}
		dir := byte(0)
		if p.Src == hostB {
			dir = 1
		}
		seed = append(append(seed, p.Payload[17]-0x10, dir|2), p.Payload[mad.HeaderLen:]...)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		var ps []*Packet
		for len(b) >= 2+cmDataLen && len(ps) < 64 {
			attr, dir, d := b[0], b[1], b[2:2+cmDataLen]
			b = b[2+cmDataLen:]
			src, dst := hostA, hostB
			if dir&1 != 0 {
				src, dst = dst, src
			}
			mb := cmMADBytes(0x10+uint16(attr%11), func(x []byte) { copy(x, d) })
			ps = append(ps, &Packet{Encap: EncapRoCEv2, Src: src, Dst: dst, UDPSrcPort: 49152,
				BTH:        BTH{Opcode: Opcode(TransportUD)<<5 | Opcode(OpSendOnly), PKey: 0xffff, DestQP: 1, PSN: uint32(len(ps))},
				ExtHeaders: ExtHeaders{DETH: &DETH{QKey: 0x80010000, SrcQP: 1}}, Payload: mb})
			if dir&2 != 0 {
				// A SEND to the QP a REQ or REP names (bytes 32 and 12 of the CM data).
				qp := binary.BigEndian.Uint32(d[12:]) >> 8
				if attr%11 == 0 {
					qp = binary.BigEndian.Uint32(d[32:]) >> 8
				}
				p := rc(OpSendOnly, qp, uint32(len(ps)), d[:8])
				p.Src, p.Dst = dst, src
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 {
			return
		}
		res := reassemble(encodeAll(t, ps, EncodeOptions{}))
		for i, c := range res.Connections {
			if c.Index != i+1 || len(c.Frames) == 0 {
				t.Fatalf("connection %d: %+v", i+1, c)
			}
		}
		for _, m := range res.Messages {
			if m.Connection < 0 || m.Connection > len(res.Connections) {
				t.Fatalf("message #%d names connection %d of %d", m.Index, m.Connection, len(res.Connections))
			}
		}
		for _, s := range res.QPs {
			if s.Connection < 0 || s.Connection > len(res.Connections) {
				t.Fatalf("queue pair %+v names connection %d of %d", s, s.Connection, len(res.Connections))
			}
		}
	})
}

// TestIWARPConnections: an MPA Request and Reply make a connection that
// a FIN ends; a Reply with R rejects it; a Request alone is requested.
func TestIWARPConnections(t *testing.T) {
	start := func(c *iwConn, reject, reply bool) {
		c.seq = [2]uint32{1000, 5000}
		c.tcp(0, tcpSYN, nil)
		c.tcp(1, tcpSYN, nil)
		c.tcp(0, 0, (&MPAStartFrame{Request: true, Rev: 1}).AppendBinary(nil))
		if reply {
			c.tcp(1, 0, (&MPAStartFrame{Rev: 1, Reject: reject}).AppendBinary(nil))
		}
		c.framer = [2]*MPAFramer{{}, {}}
	}
	tests := []struct {
		name          string
		reject, reply bool
		fin           bool
		state         ConnState
		frames        []int
	}{
		{"established", false, true, false, ConnEstablished, []int{3, 4}},
		{"closed by a FIN", false, true, true, ConnDisconnected, []int{3, 4}},
		{"rejected", true, true, false, ConnRejected, []int{3, 4}},
		{"no reply", false, false, false, ConnRequested, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &iwConn{}
			start(c, tt.reject, tt.reply)
			c.fpdu(0, iwSend(1, fill(1, 40), 40)...)
			if tt.fin {
				c.tcp(1, tcpFIN, nil)
			}
			res := iwReassemble(c.frames())
			if len(res.Connections) != 1 {
				t.Fatalf("%d connections, want 1", len(res.Connections))
			}
			conn := res.Connections[0]
			if conn.State != tt.state || !cmp.Equal(conn.Frames, tt.frames) || conn.Service != "TCP port 20049" ||
				conn.Active != iwClient.String() || conn.Passive != iwServer.String() {
				t.Errorf("connection %+v, want %s in frames %v", conn, tt.state, tt.frames)
			}
			for _, m := range res.Messages {
				if m.Connection != 1 {
					t.Errorf("%s in frame %d names connection %d", m.Op, m.Frame, m.Connection)
				}
			}
		})
	}
}
