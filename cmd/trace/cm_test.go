package trace

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/trace"
)

// cmFixture writes a pcap of an rdma_cm connection from 192.0.2.1 to
// port 7174 at 192.0.2.2 (REQ with rdma_cm's header and "hello", REP,
// RTU), a SEND each way, DREQ and DREP, then a second REQ the server
// rejects.
func cmFixture(t *testing.T) string {
	t.Helper()
	const a, b = "192.0.2.1", "192.0.2.2"
	sid := uint64(0x0000000001061c06)
	cmPkt := func(src, dst string, psn uint32, m *trace.CMMessage) *trace.Packet {
		h := mad.Header{BaseVersion: 1, MgmtClass: mad.ClassCM, ClassVersion: 2, Method: mad.MethodSend,
			TID: 0x1000, AttrID: mad.AttrID(m.Type)}
		body, err := h.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		return &trace.Packet{Encap: trace.EncapRoCEv2, Src: src, Dst: dst, UDPSrcPort: 50000,
			BTH:        trace.BTH{Opcode: trace.Opcode(trace.TransportUD)<<5 | trace.Opcode(trace.OpSendOnly), PKey: 0xffff, DestQP: 1, PSN: psn},
			ExtHeaders: trace.ExtHeaders{DETH: &trace.DETH{QKey: 0x80010000, SrcQP: 1}}, Payload: m.AppendBinary(body)}
	}
	send := func(src, dst string, qp, psn uint32, data string) *trace.Packet {
		return &trace.Packet{Encap: trace.EncapRoCEv2, Src: src, Dst: dst, UDPSrcPort: 50001,
			BTH: trace.BTH{Opcode: trace.Opcode(trace.OpSendOnly), PKey: 0xffff, DestQP: qp, PSN: psn}, Payload: []byte(data)}
	}
	hdr := (&trace.RDMACMHeader{IPVersion: 4, SrcPort: 40000, Src: netip.MustParseAddr(a), Dst: netip.MustParseAddr(b)}).AppendBinary(nil)
	req := func(comm, qp, psn uint32) *trace.CMMessage {
		return &trace.CMMessage{Type: trace.CMREQ, REQ: &trace.CMReq{LocalCommID: comm, ServiceID: sid, LocalCAGUID: 0x0002c90300a1b2c4,
			LocalQPN: qp, StartingPSN: psn, PKey: 0xffff, PathMTU: 3, ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7,
			RNRRetryCount: 7}, PrivateData: append(append([]byte(nil), hdr...), "hello"...)}
	}
	ps := []*trace.Packet{
		cmPkt(a, b, 1, req(0x10, 0x11, 0x100)),
		cmPkt(b, a, 1, &trace.CMMessage{Type: trace.CMREP, REP: &trace.CMRep{CMCommIDs: trace.CMCommIDs{LocalCommID: 0x20, RemoteCommID: 0x10},
			LocalQPN: 0x22, StartingPSN: 0x500, ResponderResources: 1, InitiatorDepth: 1, RNRRetryCount: 7, LocalCAGUID: 0x0002c90300a1b2c5}}),
		cmPkt(a, b, 2, &trace.CMMessage{Type: trace.CMRTU, RTU: &trace.CMCommIDs{LocalCommID: 0x10, RemoteCommID: 0x20}}),
		send(a, b, 0x22, 0x500, "ping"),
		send(b, a, 0x11, 0x100, "pong"),
		cmPkt(a, b, 3, &trace.CMMessage{Type: trace.CMDREQ, DREQ: &trace.CMDreq{CMCommIDs: trace.CMCommIDs{LocalCommID: 0x10, RemoteCommID: 0x20}, RemoteQPN: 0x22}}),
		cmPkt(b, a, 2, &trace.CMMessage{Type: trace.CMDREP, DREP: &trace.CMCommIDs{LocalCommID: 0x20, RemoteCommID: 0x10}}),
		cmPkt(a, b, 4, req(0x30, 0x33, 0x300)),
		cmPkt(b, a, 3, &trace.CMMessage{Type: trace.CMREJ, REJ: &trace.CMRej{CMCommIDs: trace.CMCommIDs{RemoteCommID: 0x30}, Reason: 28},
			PrivateData: []byte("busy")}),
	}
	return writeCapture(t, t.TempDir(), "cm.pcap", false, ps)
}

// TestTraceSIDR: a SIDR_REQ and its SIDR_REP print the UD connection
// they make, with the status's name.
func TestTraceSIDR(t *testing.T) {
	const a, b = "192.0.2.1", "192.0.2.2"
	sid := uint64(0x0000000001111c06)
	pkt := func(src, dst string, m *trace.CMMessage) *trace.Packet {
		h := mad.Header{BaseVersion: 1, MgmtClass: mad.ClassCM, ClassVersion: 2, Method: mad.MethodSend, AttrID: mad.AttrID(m.Type)}
		body, _ := h.AppendBinary(nil)
		return &trace.Packet{Encap: trace.EncapRoCEv2, Src: src, Dst: dst, UDPSrcPort: 50000,
			BTH:        trace.BTH{Opcode: trace.Opcode(trace.TransportUD)<<5 | trace.Opcode(trace.OpSendOnly), PKey: 0xffff, DestQP: 1},
			ExtHeaders: trace.ExtHeaders{DETH: &trace.DETH{QKey: 0x80010000, SrcQP: 1}}, Payload: m.AppendBinary(body)}
	}
	ps := []*trace.Packet{
		pkt(a, b, &trace.CMMessage{Type: trace.CMSIDRREQ, SIDRREQ: &trace.CMSIDRReq{RequestID: 7, PKey: 0xffff, ServiceID: sid}}),
		pkt(b, a, &trace.CMMessage{Type: trace.CMSIDRREP, SIDRREP: &trace.CMSIDRRep{RequestID: 7, QPN: 0x55, ServiceID: sid, QKey: 0x11111111}}),
	}
	path := writeCapture(t, t.TempDir(), "sidr.pcap", false, ps)
	got, err := runTrace(t, &traceOptions{File: path})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\n    CM SIDR_REQ request 0x00000007 service 0x0000000001111c06 (rdma_cm UDP port 7174) pkey 0xffff\n" +
			"    connection 1 rdma_cm UDP port 7174 UD, established: 192.0.2.1 > 192.0.2.2 QP 0x000055\n",
		"\n    CM SIDR_REP request 0x00000007 status 0 (valid) QP 0x000055 qkey 0x11111111 service 0x0000000001111c06\n    connection 1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// TestTraceCM: the CM messages are printed under their MAD lines, the
// connection in full under its REQ; the data lines name the requester's
// QP the CM gave, and the summary names each data QP's connection.
func TestTraceCM(t *testing.T) {
	path := cmFixture(t)
	got, err := runTrace(t, &traceOptions{File: path})
	if err != nil {
		t.Fatal(err)
	}
	mad := func(n, from, to string, psn, attr string) string {
		return "#" + n + " frame " + n + " UD " + from + " > " + to + " QP 0x000001 (from QP 0x000001) SEND PSN " + psn +
			" (1 packets) length 256 MAD CM Send attr " + attr + " mod 0x0 tid 0x0000000000001000\n"
	}
	const a, b = "192.0.2.1", "192.0.2.2"
	want := mad("1", a, b, "0x000001", "0x0010") +
		"    CM REQ comm 0x00000010 service 0x0000000001061c06 (rdma_cm TCP port 7174) QP 0x000011 starting PSN 0x000100 RC pkey 0xffff MTU 1024 resp res 1 init depth 1 retry 7 rnr retry 7 guid 0x0002c90300a1b2c4\n" +
		"    rdma_cm 192.0.2.1 port 40000 > 192.0.2.2 port 7174\n" +
		"    private data 92 bytes (zeros after 41): 00409c40000000000000000000000000c0000201000000000000000000000000c000020268656c6c6f\n" +
		"    connection 1 rdma_cm TCP port 7174 RC, disconnected: 192.0.2.1 > 192.0.2.2 QP 0x000022 from PSN 0x000500, 192.0.2.2 > 192.0.2.1 QP 0x000011 from PSN 0x000100\n" +
		mad("2", b, a, "0x000001", "0x0013") +
		"    CM REP comm 0x00000020 remote comm 0x00000010 QP 0x000022 starting PSN 0x000500 resp res 1 init depth 1 rnr retry 7 guid 0x0002c90300a1b2c5\n" +
		"    connection 1\n" +
		mad("3", a, b, "0x000002", "0x0014") +
		"    CM RTU comm 0x00000010 remote comm 0x00000020\n" +
		"    connection 1\n" +
		"#4 frame 4 RC 192.0.2.1 > 192.0.2.2 QP 0x000022 (from QP 0x000011) SEND PSN 0x000500 (1 packets) length 4\n" +
		"#5 frame 5 RC 192.0.2.2 > 192.0.2.1 QP 0x000011 (from QP 0x000022) SEND PSN 0x000100 (1 packets) length 4\n" +
		mad("6", a, b, "0x000003", "0x0015") +
		"    CM DREQ comm 0x00000010 remote comm 0x00000020 QP 0x000022\n" +
		"    connection 1\n" +
		mad("7", b, a, "0x000002", "0x0016") +
		"    CM DREP comm 0x00000020 remote comm 0x00000010\n" +
		"    connection 1\n" +
		mad("8", a, b, "0x000004", "0x0010") +
		"    CM REQ comm 0x00000030 service 0x0000000001061c06 (rdma_cm TCP port 7174) QP 0x000033 starting PSN 0x000300 RC pkey 0xffff MTU 1024 resp res 1 init depth 1 retry 7 rnr retry 7 guid 0x0002c90300a1b2c4\n" +
		"    rdma_cm 192.0.2.1 port 40000 > 192.0.2.2 port 7174\n" +
		"    private data 92 bytes (zeros after 41): 00409c40000000000000000000000000c0000201000000000000000000000000c000020268656c6c6f\n" +
		"    connection 2 rdma_cm TCP port 7174 RC, rejected (consumer reject): 192.0.2.1 > 192.0.2.2, 192.0.2.2 > 192.0.2.1 QP 0x000033 from PSN 0x000300\n" +
		mad("9", b, a, "0x000003", "0x0012") +
		"    CM REJ comm 0x00000000 remote comm 0x00000030 REQ rejected: consumer reject (28)\n" +
		"    private data 148 bytes (zeros after 4): 62757379\n" +
		"    connection 2\n" +
		"# 9 frames, 9 RDMA packets, 9 messages (0 incomplete), 0 events\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected output (-want +got):\n%s", diff)
	}

	// --qp keeps the CM messages of the connection that set the QP up.
	got, err = runTrace(t, &traceOptions{File: path, QP: 0x22})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"#1 frame 1 ", "#2 frame 2 ", "#3 frame 3 ", "#4 frame 4 ", "#5 frame 5 ", "#6 frame 6 ", "#7 frame 7 "} {
		if !strings.Contains(got, "\n"+line) && !strings.HasPrefix(got, line) {
			t.Errorf("--qp 0x22 lacks %q:\n%s", line, got)
		}
	}
	if strings.Contains(got, "frame 8 ") {
		t.Errorf("--qp 0x22 shows the other connection's REQ:\n%s", got)
	}
	got, err = runTrace(t, &traceOptions{File: path, Verbose: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "\n    primary path LID 0 > 0 GID :: > :: flow label 0x00000 traffic class 0 hop limit 0 SL 0 rate 0 ack timeout 0\n") {
		t.Errorf("-v lacks the REQ's primary path:\n%s", got)
	}
	got, err = runTrace(t, &traceOptions{File: path, Packets: true, Verbose: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "\n    CM REJ comm 0x00000000 remote comm 0x00000030 REQ rejected: consumer reject (28)\n") {
		t.Errorf("--packets -v lacks the REJ's fields:\n%s", got)
	}

	got, err = runTrace(t, &traceOptions{File: path, Summary: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		"192.0.2.1\t192.0.2.2\t0x000001\t",
		"192.0.2.1\t192.0.2.2\t0x000022\t0x000011\tRC\t1\t1\t1\t0\t0\t0\t4\t0\t0\t0\t0\t0\t0\t0\t0\t1 rdma_cm TCP port 7174\n",
		"192.0.2.2\t192.0.2.1\t0x000011\t0x000022\tRC\t1\t1\t1\t0\t0\t0\t4\t0\t0\t0\t0\t0\t0\t0\t0\t1 rdma_cm TCP port 7174\n",
	} {
		if !strings.Contains(got, row) {
			t.Errorf("--summary lacks %q:\n%s", row, got)
		}
	}

	js, err := runTrace(t, &traceOptions{File: path, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Messages []struct {
			Connection int
			CM         *struct {
				Type   string
				REQ    *struct{ LocalQPN, StartingPSN uint32 }
				REJ    *struct{ Reason uint16 }
				RDMACM *struct {
					Src, Dst         string
					SrcPort, DstPort uint16
				}
				PrivateDataUsed int
			}
		}
		QueuePairs []struct {
			QP         uint32
			Connection int
		}
		Connections []struct {
			Index               int
			Service, State      string
			ActiveQP, PassiveQP *uint32
			Frames              []int
		}
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Messages) != 9 || doc.Messages[0].CM == nil || doc.Messages[0].CM.Type != "REQ" || doc.Messages[0].CM.REQ.LocalQPN != 0x11 ||
		doc.Messages[0].CM.RDMACM == nil || doc.Messages[0].CM.RDMACM.Src != a || doc.Messages[0].CM.RDMACM.DstPort != 7174 ||
		doc.Messages[8].CM.REJ == nil || doc.Messages[8].CM.REJ.Reason != 28 || doc.Messages[3].Connection != 1 || doc.Messages[3].CM != nil {
		t.Errorf("unexpected JSON messages:\n%s", js)
	}
	if len(doc.Connections) != 2 || doc.Connections[0].State != "disconnected" || *doc.Connections[0].PassiveQP != 0x22 ||
		!cmp.Equal(doc.Connections[0].Frames, []int{1, 2, 3, 6, 7}) || doc.Connections[1].State != "rejected" {
		t.Errorf("unexpected JSON connections:\n%s", js)
	}
}
