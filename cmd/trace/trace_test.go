package trace

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/trace"
)

func TestTraceArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    traceOptions
		wantErr string
	}{
		{"file", []string{"a.pcap"}, traceOptions{File: "a.pcap", QP: -1, Port: 4791}, ""},
		{"everything", []string{"-x", "--json", "--write", "d", "--qp", "0x11", "--port", "1234", "--check", "-v", "a.pcap"},
			traceOptions{File: "a.pcap", Hex: true, JSON: true, Write: "d", QP: 0x11, Port: 1234, Check: true, Verbose: 1}, ""},
		{"summary", []string{"--summary", "-"}, traceOptions{File: "-", Summary: true, QP: -1, Port: 4791}, ""},
		{"no file", nil, traceOptions{}, "argument"},
		{"two views", []string{"--summary", "--packets", "a"}, traceOptions{}, "pick one"},
		{"rpc", []string{"--rpc", "--rpcrdma", "--summary", "a"}, traceOptions{File: "a", RPC: true, RPCRDMA: true, Summary: true, QP: -1, Port: 4791}, ""},
		{"rpc and packets", []string{"--rpc", "--packets", "a"}, traceOptions{}, "pick one"},
		{"bad QP", []string{"--qp", "0x1000000", "a"}, traceOptions{}, "not a QP number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *traceOptions
			err := cmdtest.ParseToolArgs(t, "trace", func(f *cmdutil.Factory) *cobra.Command {
				return newTraceCmd(f, func(o *traceOptions) error { got = o; return nil })
			}, tt.args)
			if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
				return
			}
			got.IO = cmdutil.IOStreams{}
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
		})
	}
}

// traceFixture writes a pcap of an RDMA WRITE (3 packets, the middle one
// sent twice), a SEND whose middle packet is lost, and an RDMA READ and
// its responses, from 192.0.2.1 QP 0x12 to 192.0.2.2 QP 0x11.
func traceFixture(t *testing.T, dir string) string {
	t.Helper()
	req := func(op trace.Operation, psn uint32, payload []byte) *trace.Packet {
		return &trace.Packet{Encap: trace.EncapRoCEv2, Src: "192.0.2.1", Dst: "192.0.2.2", UDPSrcPort: 50000,
			BTH: trace.BTH{Opcode: trace.Opcode(op), PKey: 0xffff, DestQP: 0x11, PSN: psn}, Payload: payload}
	}
	resp := func(op trace.Operation, psn uint32, payload []byte) *trace.Packet {
		p := req(op, psn, payload)
		p.Src, p.Dst, p.BTH.DestQP = "192.0.2.2", "192.0.2.1", 0x12
		p.AETH = &trace.AETH{Syndrome: 0x1f, MSN: 1}
		return p
	}
	data := bytes.Repeat([]byte("ibtool!!"), 300) // 2400 bytes
	w1 := req(trace.OpWriteFirst, 0xfffffe, data[:1024])
	w1.RETH = &trace.RETH{VA: 0x7f0000001000, RKey: 0x1234, DMALength: 2400}
	rd := req(trace.OpReadRequest, 6, nil)
	rd.RETH = &trace.RETH{VA: 0x7f0000002000, RKey: 0x5678, DMALength: 2048}
	ps := []*trace.Packet{
		w1, req(trace.OpWriteMiddle, 0xffffff, data[1024:2048]), req(trace.OpWriteMiddle, 0xffffff, data[1024:2048]),
		req(trace.OpWriteLast, 0, data[2048:]),
		req(trace.OpSendFirst, 1, data[:1024]), req(trace.OpSendLast, 3, data[:10]),
		req(trace.OpSendOnly, 4, data[:3]), req(trace.OpSendOnly, 5, nil),
		rd, resp(trace.OpReadResponseFirst, 6, data[:1024]), resp(trace.OpReadResponseLast, 7, data[:1024]),
	}
	return writeCapture(t, dir, "fixture.pcapng", true, ps)
}

// writeCapture encodes ps as Ethernet frames a microsecond apart into a
// capture file (pcapng when ng, else pcap) named name in dir, and
// returns its path.
func writeCapture(t *testing.T, dir, name string, ng bool, ps []*trace.Packet) string {
	t.Helper()
	var buf bytes.Buffer
	newWriter := trace.NewPcapWriter
	if ng {
		newWriter = trace.NewPcapngWriter
	}
	w, err := newWriter(&buf, trace.LinkEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		b, err := trace.Encode(p, trace.EncodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFrame(time.Unix(1700000000, int64(i)*1000), b, 0); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runTrace(t *testing.T, o *traceOptions) (string, error) {
	t.Helper()
	f, out, _ := cmdutil.NewTestFactory(nil)
	o.IO = f.IO
	if o.QP == 0 {
		o.QP = -1
	}
	err := traceRun(o)
	return out.String(), err
}

func TestTraceRun(t *testing.T) {
	path := traceFixture(t, t.TempDir())
	got, err := runTrace(t, &traceOptions{File: path})
	if err != nil {
		t.Fatal(err)
	}
	want := `#1 frame 1-4 RC 192.0.2.1 > 192.0.2.2 QP 0x000011 RDMA WRITE PSN 0xfffffe-0x000000 (3 packets) rkey 0x00001234 va 0x00007f0000001000 length 2400
! frame 3 duplicate 192.0.2.1 > 192.0.2.2 QP 0x000011 PSN 0xffffff: RC RDMA WRITE Middle PSN 0xffffff seen before in frame 2: a retransmission
#2 frame 5-6 RC 192.0.2.1 > 192.0.2.2 QP 0x000011 SEND PSN 0x000001-0x000003 (2 packets) length 1034
    ! PSNs 0x000002 missing
! frame 6 gap 192.0.2.1 > 192.0.2.2 QP 0x000011 PSN 0x000002: PSNs 0x000002 never captured
#3 frame 7 RC 192.0.2.1 > 192.0.2.2 QP 0x000011 SEND PSN 0x000004 (1 packets) length 3
#4 frame 8 RC 192.0.2.1 > 192.0.2.2 QP 0x000011 SEND PSN 0x000005 (1 packets) length 0
#5 frame 9-11 RC 192.0.2.1 > 192.0.2.2 QP 0x000011 (from QP 0x000012) RDMA READ PSN 0x000006-0x000007 (3 packets) rkey 0x00005678 va 0x00007f0000002000 length 2048
# 11 frames, 11 RDMA packets, 5 messages (1 incomplete), 2 events
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected output (-want +got):\n%s", diff)
	}

	got, err = runTrace(t, &traceOptions{File: path, Summary: true})
	if err != nil {
		t.Fatal(err)
	}
	want = "192.0.2.1\t192.0.2.2\t0x000011\t0x000012\tRC\t11\t5\t3\t1\t1\t0\t5485\t1\t1\t0\t1\t0\t0\t0\t0\t-\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected summary (-want +got):\n%s", diff)
	}

	if _, err := runTrace(t, &traceOptions{File: path, Check: true}); cmdutil.ExitCode(err) != cmdutil.ExitFindings {
		t.Errorf("--check: %v (exit %d), want exit %d", err, cmdutil.ExitCode(err), cmdutil.ExitFindings)
	}

	got, err = runTrace(t, &traceOptions{File: path, Packets: true, QP: 0x12})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(got, "\n"); n != 2 || !strings.Contains(got, "RC RDMA READ Response First QP 0x000012 PSN 0x000006 AETH(ACK (credits invalid) MSN 0x000001) payload 1024 ICRC ok") {
		t.Errorf("--packets --qp 0x12: %d lines, want 2 with the READ responses:\n%s", n, got)
	}
}

// TestTraceWriteJSON: --write saves each message's bytes under a name a
// script can find, and --json lists them with the file.
func TestTraceWriteJSON(t *testing.T) {
	dir := t.TempDir()
	path := traceFixture(t, dir)
	out := filepath.Join(dir, "out")
	got, err := runTrace(t, &traceOptions{File: path, JSON: true, Write: out, Hex: true})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Frames   int
		Messages []struct {
			Index   int
			Op      string
			Length  int
			Payload string
			File    string
			RKey    *uint32
		}
		Events []struct{ Kind string }
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, got)
	}
	if doc.Frames != 11 || len(doc.Messages) != 5 || len(doc.Events) != 2 {
		t.Fatalf("%d frames, %d messages, %d events; want 11, 5, 2", doc.Frames, len(doc.Messages), len(doc.Events))
	}
	m := doc.Messages[0]
	if m.File != filepath.Join(out, "0001-qp000011-rdma_write.bin") || m.Length != 2400 || *m.RKey != 0x1234 {
		t.Errorf("first message: %+v", m)
	}
	b, err := os.ReadFile(m.File)
	if err != nil || !bytes.Equal(b, bytes.Repeat([]byte("ibtool!!"), 300)) {
		t.Errorf("%s: %d bytes (%v), want the 2400 bytes written", m.File, len(b), err)
	}
	if !strings.HasPrefix(m.Payload, "6962746f6f6c2121") {
		t.Errorf("payload %.20s..., want the bytes in hex", m.Payload)
	}
	if doc.Messages[3].File != "" {
		t.Errorf("an empty SEND was written to %s", doc.Messages[3].File)
	}
}

// TestTraceBadFiles: a missing file and a file that is no capture fail;
// a capture cut mid-record prints what it holds and says so.
func TestTraceBadFiles(t *testing.T) {
	dir := t.TempDir()
	path := traceFixture(t, dir)
	if _, err := runTrace(t, &traceOptions{File: filepath.Join(dir, "none")}); err == nil {
		t.Error("a missing file: no error")
	}
	text := filepath.Join(dir, "text")
	os.WriteFile(text, []byte("not a capture at all, just some text"), 0o644)
	if _, err := runTrace(t, &traceOptions{File: text}); err == nil || !strings.Contains(err.Error(), "not a pcap") {
		t.Errorf("a text file: %v", err)
	}
	b, _ := os.ReadFile(path)
	cut := filepath.Join(dir, "cut.pcapng")
	os.WriteFile(cut, b[:len(b)-20], 0o644)
	f, out, errOut := cmdutil.NewTestFactory(nil)
	err := traceRun(&traceOptions{IO: f.IO, File: cut, QP: -1, Check: true})
	if cmdutil.ExitCode(err) != cmdutil.ExitFindings || !strings.Contains(errOut.String(), "unexpected EOF") ||
		!strings.Contains(out.String(), "# 10 frames") {
		t.Errorf("a cut capture: %v, stderr %q, stdout:\n%s", err, errOut, out)
	}
}

// TestTraceMAD: a MAD on QP0 is one message, its header on the line and,
// with -v, its attribute field by field as decode_mad prints it.
func TestTraceMAD(t *testing.T) {
	h := mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSMI, ClassVersion: 1, Method: mad.MethodGetResp, AttrID: mad.AttrNodeInfo}
	m, err := h.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	m = append(m, bytes.Repeat([]byte{0}, mad.SMPDataOffset-len(m))...)
	if m, err = (&mad.NodeInfo{BaseVersion: 1, ClassVersion: 1}).AppendBinary(m); err != nil {
		t.Fatal(err)
	}
	m = append(m, bytes.Repeat([]byte{0}, mad.Size-len(m))...)
	p := &trace.Packet{Encap: trace.EncapIB, Src: trace.LIDAddr(1), Dst: trace.LIDAddr(2), LRH: &trace.LRH{SLID: 1, DLID: 2},
		BTH:        trace.BTH{Opcode: trace.Opcode(trace.TransportUD)<<5 | trace.Opcode(trace.OpSendOnly), PKey: 0xffff, PSN: 7},
		ExtHeaders: trace.ExtHeaders{DETH: &trace.DETH{SrcQP: 0}}, Payload: m}
	b, err := trace.Encode(p, trace.EncodeOptions{Link: trace.LinkERF})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, _ := trace.NewPcapWriter(&buf, trace.LinkERF)
	w.WriteFrame(time.Unix(1, 0), b, 0)
	path := filepath.Join(t.TempDir(), "mad.pcap")
	os.WriteFile(path, buf.Bytes(), 0o644)
	got, err := runTrace(t, &traceOptions{File: path, Verbose: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"#1 frame 1 UD LID 1 > LID 2 QP 0x000000 (from QP 0x000000) SEND PSN 0x000007 (1 packets) length 256 MAD SMI GetResp attr 0x0011",
		"    # NodeInfo\n", "    BaseVers:",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
