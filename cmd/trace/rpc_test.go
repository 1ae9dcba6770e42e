package trace

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/trace"
)

// nfsFixture writes a pcap of NFSv3 over RDMA between client 192.0.2.1
// (QP 0x12) and server 192.0.2.2 (QP 0x11): a WRITE of 3000 bytes at
// offset 8192 whose read chunk the server pulls with two RDMA READs, then
// a READ of them back through a write chunk.
func nfsFixture(t *testing.T, dir string, data []byte) string {
	t.Helper()
	var ps []*trace.Packet
	cpsn, spsn := uint32(0), uint32(100)
	pkt := func(server bool, op trace.Operation, psn uint32, payload []byte) *trace.Packet {
		p := &trace.Packet{Encap: trace.EncapRoCEv2, Src: "192.0.2.1", Dst: "192.0.2.2", UDPSrcPort: 50000,
			BTH: trace.BTH{Opcode: trace.Opcode(op), PKey: 0xffff, DestQP: 0x11, PSN: psn}, Payload: payload}
		if server {
			p.Src, p.Dst, p.BTH.DestQP = p.Dst, p.Src, 0x12
		}
		ps = append(ps, p)
		return p
	}
	words := func(b []byte, vs ...uint32) []byte {
		for _, v := range vs {
			b = binary.BigEndian.AppendUint32(b, v)
		}
		return b
	}
	send := func(server bool, h trace.RPCRDMAHeader, rpc []byte) {
		psn := &cpsn
		if server {
			psn = &spsn
		}
		*psn++
		pkt(server, trace.OpSendOnly, *psn, append(h.AppendBinary(nil), rpc...))
	}
	read := func(rkey uint32, va uint64, b []byte) {
		spsn++
		pkt(true, trace.OpReadRequest, spsn, nil).RETH = &trace.RETH{VA: va, RKey: rkey, DMALength: uint32(len(b))}
		pkt(false, trace.OpReadResponseOnly, spsn, b).AETH = &trace.AETH{Syndrome: 0x1f}
	}
	fh := []byte{0xfe, 0xed, 0xfa, 0xce}
	call := func(xid, proc uint32) []byte {
		return append(words(nil, xid, 0, 2, 100003, 3, proc, 0, 0, 0, 0, uint32(len(fh))), fh...)
	}
	reply := func(xid uint32) []byte { return words(nil, xid, 1, 0, 0, 0, 0) }
	seg := func(h, l uint32, o uint64) trace.RDMASegment {
		return trace.RDMASegment{Handle: h, Length: l, Offset: o}
	}

	w := words(call(1, 7), 0, 8192, 3000, 2, 3000)
	send(false, trace.RPCRDMAHeader{XID: 1, Vers: 1, Credits: 32, ReadList: []trace.ReadSegment{{Position: uint32(len(w)),
		RDMASegment: seg(0x1234, 3000, 0x7f0000)}}}, w)
	read(0x1234, 0x7f0000+2048, data[2048:])
	read(0x1234, 0x7f0000, data[:2048])
	send(true, trace.RPCRDMAHeader{XID: 1, Vers: 1, Credits: 32}, words(reply(1), 0, 0, 0, 3000, 2, 0, 0))

	send(false, trace.RPCRDMAHeader{XID: 2, Vers: 1, Credits: 32, WriteList: [][]trace.RDMASegment{{seg(0x5678, 4096, 0x7f8000)}}},
		words(call(2, 6), 0, 8192, 3000))
	spsn++
	pkt(true, trace.OpWriteOnly, spsn, data).RETH = &trace.RETH{VA: 0x7f8000, RKey: 0x5678, DMALength: 3000}
	send(true, trace.RPCRDMAHeader{XID: 2, Vers: 1, Credits: 32, WriteList: [][]trace.RDMASegment{{seg(0x5678, 3000, 0x7f8000)}}},
		words(reply(2), 0, 0, 3000, 1, 3000))

	return writeCapture(t, dir, "nfs.pcap", false, ps)
}

func TestTraceRPC(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("NFS/RDMA"), 375)
	path := nfsFixture(t, dir, data)
	got, err := runTrace(t, &traceOptions{File: path, RPC: true, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `@1 frame 1 192.0.2.1 > 192.0.2.2 QP 0x000011 send #1 RPC-over-RDMA RDMA_MSG xid 0x00000001 credits 32 read [pos 68 0x00001234:3000@0x7f0000]
  read chunk 1 position 68: 3000 bytes in 1 segments, 2 RDMA READs (2 packets)
  RPC call xid 0x00000001 prog 100003 vers 3 proc 7, 3068 bytes (reply @2)
  NFS3 WRITE fh feedface offset 8192 count 3000 via read chunk: 3000 bytes in 2 READ responses
@2 frame 6 192.0.2.2 > 192.0.2.1 QP 0x000012 send #4 RPC-over-RDMA RDMA_MSG xid 0x00000001 credits 32
  RPC reply success xid 0x00000001 prog 100003 vers 3 proc 7, 52 bytes (call @1)
  NFS3 WRITE fh feedface offset 8192 count 3000
@3 frame 7 192.0.2.1 > 192.0.2.2 QP 0x000011 send #5 RPC-over-RDMA RDMA_MSG xid 0x00000002 credits 32 write1 [0x00005678:4096@0x7f8000]
  RPC call xid 0x00000002 prog 100003 vers 3 proc 6, 60 bytes (reply @4)
  NFS3 READ fh feedface offset 8192 count 3000
@4 frame 9 192.0.2.2 > 192.0.2.1 QP 0x000012 send #7 RPC-over-RDMA RDMA_MSG xid 0x00000002 credits 32 write1 [0x00005678:3000@0x7f8000]
  write chunk 1: 3000 bytes in 1 segments, 1 RDMA WRITEs (1 packets)
  RPC reply success xid 0x00000002 prog 100003 vers 3 proc 6, 3044 bytes (call @3)
  NFS3 READ fh feedface offset 8192 count 3000 eof via write chunk: 3000 bytes in 1 WRITE packets
# 4 RPC-over-RDMA messages (0 incomplete)
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected --rpc output (-want +got):\n%s", diff)
	}

	got, err = runTrace(t, &traceOptions{File: path})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "SEND PSN 0x000001 (1 packets) length 120\n    RPC-over-RDMA RDMA_MSG xid 0x00000001") ||
		!strings.Contains(got, "\n      NFS3 READ fh feedface offset 8192 count 3000 eof via write chunk") {
		t.Errorf("the message view lacks the RPCs under their SENDs:\n%s", got)
	}

	got, err = runTrace(t, &traceOptions{File: path, Summary: true, RPC: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "192.0.2.1\t192.0.2.2\t2\t2\t0\t6224\t3\t1\t3000\t1\t3000\n"; got != want {
		t.Errorf("--summary --rpc: %q, want %q", got, want)
	}

	out := filepath.Join(dir, "out")
	got, err = runTrace(t, &traceOptions{File: path, JSON: true, Write: out})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		RPCs []struct {
			Index int
			Call  bool
			NFS   *struct{ IO *struct{ Op, FH, Via string } }
			Files []string
		}
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.RPCs) != 4 || doc.RPCs[0].NFS.IO.Via != "read chunk" || doc.RPCs[0].NFS.IO.FH != "feedface" {
		t.Fatalf("JSON rpcs: %+v", doc.RPCs)
	}
	for _, i := range []int{0, 3} {
		fs := doc.RPCs[i].Files
		if len(fs) != 2 || !strings.HasSuffix(fs[1], "-off8192.bin") {
			t.Fatalf("RPC %d files %q, want the RPC message and the NFS data", i+1, fs)
		}
		if b, err := os.ReadFile(fs[1]); err != nil || !bytes.Equal(b, data) {
			t.Errorf("%s: %d bytes (%v), want the 3000 bytes", fs[1], len(b), err)
		}
	}
}
