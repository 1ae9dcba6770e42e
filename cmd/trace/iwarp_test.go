package trace

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/trace"
)

// iwarpFixture writes a pcap of an NFSv3 WRITE over iWARP (markers and
// CRC negotiated) from 192.0.2.1:40000 to 192.0.2.2:20049: the call, the
// server's RDMA Read of its read chunk, the reply; one TCP segment is
// sent twice.
func iwarpFixture(t *testing.T, dir string, data []byte) string {
	t.Helper()
	cli, srv := netip.MustParseAddrPort("192.0.2.1:40000"), netip.MustParseAddrPort("192.0.2.2:20049")
	var frames [][]byte
	seq := [2]uint32{100, 5000}
	framer := [2]*trace.MPAFramer{{Markers: true, CRC: true}, {Markers: true, CRC: true}}
	tcp := func(side int, payload []byte) {
		src, dst := cli, srv
		if side == 1 {
			src, dst = srv, cli
		}
		frames = append(frames, trace.AppendTCPFrame(nil, src, dst, seq[side], 0, payload))
		seq[side] += uint32(len(payload))
	}
	fpdu := func(side int, d *trace.DDPSegment) { tcp(side, framer[side].Append(nil, d.AppendBinary(nil))) }
	tcp(0, (&trace.MPAStartFrame{Request: true, Markers: true, CRC: true, Rev: 1}).AppendBinary(nil))
	tcp(1, (&trace.MPAStartFrame{Markers: true, CRC: true, Rev: 1}).AppendBinary(nil))
	words := func(b []byte, vs ...uint32) []byte {
		for _, v := range vs {
			b = binary.BigEndian.AppendUint32(b, v)
		}
		return b
	}
	call := words(nil, 7, 0, 2, 100003, 3, 7, 0, 0, 0, 0, 4, 0xfeedface, 0, 0, uint32(len(data)), 2, uint32(len(data)))
	h := trace.RPCRDMAHeader{XID: 7, Vers: 1, Credits: 32, ReadList: []trace.ReadSegment{{Position: uint32(len(call)),
		RDMASegment: trace.RDMASegment{Handle: 0xabc, Length: uint32(len(data)), Offset: 0x40000}}}}
	fpdu(0, &trace.DDPSegment{Opcode: trace.RDMAPSend, Last: true, MSN: 1, Payload: append(h.AppendBinary(nil), call...)})
	fpdu(1, &trace.DDPSegment{Opcode: trace.RDMAPReadRequest, QN: 1, MSN: 1, Last: true,
		Read: &trace.ReadRequest{SinkSTag: 0x99, SinkTO: 0x1000, Size: uint32(len(data)), SrcSTag: 0xabc, SrcTO: 0x40000}})
	for off := 0; off < len(data); off += 1000 {
		end := min(off+1000, len(data))
		fpdu(0, &trace.DDPSegment{Tagged: true, Opcode: trace.RDMAPReadResponse, STag: 0x99, TO: 0x1000 + uint64(off),
			Last: end == len(data), Payload: data[off:end]})
	}
	frames = append(frames, frames[len(frames)-1]) // a retransmission
	rh := trace.RPCRDMAHeader{XID: 7, Vers: 1, Credits: 32}
	fpdu(1, &trace.DDPSegment{Opcode: trace.RDMAPSend, Last: true, MSN: 1,
		Payload: append(rh.AppendBinary(nil), words(nil, 7, 1, 0, 0, 0, 0, 0, 0, 0, uint32(len(data)), 2, 0, 0)...)})

	var buf bytes.Buffer
	w, _ := trace.NewPcapWriter(&buf, trace.LinkEthernet)
	for i, f := range frames {
		w.WriteFrame(time.Unix(1700000000, int64(i)*1000), f, 0)
	}
	path := filepath.Join(dir, "iwarp.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTraceIWARP(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("iWARP..."), 400)
	path := iwarpFixture(t, dir, data)
	got, err := runTrace(t, &traceOptions{File: path})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"#1 frame 1 iWARP 192.0.2.1:40000 > 192.0.2.2:20049 MPA Request rev 1 M 1 C 1 R 0 private data 0\n" +
			"    connection 1 TCP port 20049 iWARP, established: 192.0.2.1:40000 > 192.0.2.2:20049\n" +
			"#2 frame 2 iWARP 192.0.2.2:20049 > 192.0.2.1:40000 MPA Reply rev 1 M 1 C 1 R 0 private data 0\n    connection 1\n",
		"#3 frame 3 iWARP 192.0.2.1:40000 > 192.0.2.2:20049 SEND MSN 1 (1 segments) length 120\n    RPC-over-RDMA RDMA_MSG xid 0x00000007",
		"      NFS3 WRITE fh feedface offset 0 count 3200 via read chunk: 3200 bytes in 4 READ responses\n",
		"#4 frame 4-8 iWARP 192.0.2.2:20049 > 192.0.2.1:40000 RDMA READ (5 segments) stag 0x00000abc to 0x0000000000040000 length 3200\n",
		"! frame 9 duplicate 192.0.2.1:40000 > 192.0.2.2:20049 seq ",
		"# 10 frames, 10 RDMA packets, 5 messages (0 incomplete), 1 events\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if _, err := runTrace(t, &traceOptions{File: path, Check: true}); err != nil {
		t.Errorf("--check: %v; a retransmission that got through is no problem", err)
	}
	// A flipped byte in an FPDU: its CRC32c fails, and --check says so.
	b, _ := os.ReadFile(path)
	b[len(b)-30] ^= 1 // in the reply's FPDU
	bad := filepath.Join(dir, "bad.pcap")
	os.WriteFile(bad, b, 0o644)
	got, err = runTrace(t, &traceOptions{File: bad, Check: true})
	if cmdutil.ExitCode(err) != cmdutil.ExitFindings || !strings.Contains(got, " bad-crc 192.0.2.2:20049 > 192.0.2.1:40000 seq ") {
		t.Errorf("a bad CRC: %v, output:\n%s", err, got)
	}
	out := filepath.Join(dir, "out")
	if _, err := runTrace(t, &traceOptions{File: path, RPC: true, Write: out}); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(out, "rpc0001-xid00000007-nfs-write-off0.bin"))
	if err != nil || !bytes.Equal(b, data) {
		t.Errorf("the NFS WRITE's data: %d bytes (%v), want the 3200 written", len(b), err)
	}
	got, err = runTrace(t, &traceOptions{File: path, Summary: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "192.0.2.1:40000\t192.0.2.2:20049\t-\t-\tiWARP\t") || !strings.Contains(got, "\t1 TCP port 20049\n") {
		t.Errorf("--summary:\n%s", got)
	}
}
