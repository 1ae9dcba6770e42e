package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rpcCaptureSum is what a real NFS-over-RDMA capture reassembles to.
type rpcCaptureSum struct {
	Frames, Messages, Events, RPCs, Incomplete int
	Chunks                                     map[ChunkKind]int
	// IO lists the NFS READs and WRITEs: op, how the data came, bytes,
	// packets, and the first 8 bytes of the data's SHA-256.
	IO []string
}

// readCaptureResult runs a capture through what the trace command does:
// RoCE/IB and iWARP reassembly.
func readCaptureResult(t *testing.T, path string) *Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := ReadAll(f, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// readRPCCapture runs a capture through what the trace command does:
// RoCE/IB and iWARP reassembly, then RPC-over-RDMA.
func readRPCCapture(t *testing.T, path string) ([]*RPCRDMAMessage, rpcCaptureSum) {
	t.Helper()
	res := readCaptureResult(t, path)
	rs := AssembleRPC(res.Messages, RPCOptions{})
	s := rpcCaptureSum{Frames: res.Frames, Messages: len(res.Messages), Events: len(res.Events), RPCs: len(rs),
		Chunks: map[ChunkKind]int{}}
	for _, x := range rs {
		if !x.Complete {
			s.Incomplete++
		}
		for _, ch := range x.Chunks {
			s.Chunks[ch.Kind]++
		}
		if x.NFS != nil && x.NFS.IO != nil && len(x.NFS.IO.Data) > 0 {
			io := x.NFS.IO
			sum := sha256.Sum256(io.Data)
			s.IO = append(s.IO, io.Op+" "+io.Via+" "+itoa(len(io.Data))+" bytes "+itoa(io.ViaPackets)+" packets "+hex.EncodeToString(sum[:8]))
		}
	}
	return rs, s
}

// TestRealNFSCaptures pins what the NFS-over-RDMA captures in testdata/
// reassemble to. scripts/vm/checks/50-nfs-rdma.sh took them in the test
// guest (Debian bookworm, kernel 6.1.0-50, nfs-kernel-server 2.6.2):
// kernel nfsd with "rdma 20049" in its portlist, its client mounting over
// Soft-RoCE (two rxe devices on a veth pair, path MTU 1024) with
// vers=4.1 and then vers=3, proto=rdma, copying a file of 29999 random
// bytes in, remounting and reading it back, tcpdump on one end of the
// pair. The WRITE's data came in a read chunk the server pulled with two
// RDMA READs, the READ's in a write chunk it filled with two RDMA WRITEs;
// both are the file's bytes (the same file in both captures). The siw
// capture is described at its entry.
func TestRealNFSCaptures(t *testing.T) {
	const file = "474eaf2b6f5f6553"       // the SHA-256 of the 29999 bytes, cut to 8
	const siwFile = "354e6cab7cbdf8e4"    // the siw runs' files
	const siwCRCFile = "25346dc7a222611f" // (one each)
	const reorderedFile = "b1ff5b9a8897e7f1"
	tests := []struct {
		file string
		want rpcCaptureSum
	}{
		{"nfs-rxe-v41.pcap", rpcCaptureSum{Frames: 258, Messages: 106, RPCs: 86,
			Chunks: map[ChunkKind]int{ChunkRead: 1, ChunkWrite: 1, ChunkReply: 6},
			IO:     []string{"WRITE read chunk 29999 bytes 30 packets " + file, "READ write chunk 29999 bytes 30 packets " + file}}},
		{"nfs-rxe-v3.pcap", rpcCaptureSum{Frames: 172, Messages: 63, RPCs: 48,
			Chunks: map[ChunkKind]int{ChunkRead: 1, ChunkWrite: 1, ChunkReply: 1},
			IO:     []string{"WRITE read chunk 29999 bytes 30 packets " + file, "READ write chunk 29999 bytes 30 packets " + file}}},
		// Soft-iWARP (siw), NFSv4.1 only, from a later run of the check
		// (so another file of 29999 random bytes): siw.ko built by
		// scripts/vm/build-image.sh from Debian's linux-source 6.1.176-1,
		// MPA rev 2 without CRCs (6.1's siw does not ask for them) and
		// without markers, tcpdump on "tcp port 20049". Every FPDU carries
		// a zero CRC field, which trace once took for the next FPDU.
		{"nfs-siw-v41.pcap", rpcCaptureSum{Frames: 201, Messages: 99, RPCs: 86,
			Chunks: map[ChunkKind]int{ChunkRead: 1, ChunkWrite: 1, ChunkReply: 6},
			IO: []string{"WRITE read chunk 29999 bytes 22 packets " + siwFile,
				"READ write chunk 29999 bytes 22 packets " + siwFile}}},
		// The same from a later run, siw.ko built with its
		// mpa_crc_required constant turned on: both start frames ask for
		// CRCs and every FPDU's CRC32c is good (sent little-endian).
		{"nfs-siw-crc-v41.pcap", rpcCaptureSum{Frames: 200, Messages: 99, RPCs: 86,
			Chunks: map[ChunkKind]int{ChunkRead: 1, ChunkWrite: 1, ChunkReply: 6},
			IO: []string{"WRITE read chunk 29999 bytes 22 packets " + siwCRCFile,
				"READ write chunk 29999 bytes 22 packets " + siwCRCFile}}},
		// NFSv4.1 over rxe again, from a later run (another file): rxe
		// dropped part of the READ's RDMA WRITEs and resent them after a
		// NAK, and the capture has the last WRITE's packets, the first
		// time and again, after the reply that they went before (by
		// PSN). trace once took that WRITE for no part of the chunk.
		{"nfs-rxe-v41-reordered.pcap", rpcCaptureSum{Frames: 284, Messages: 106, Events: 27, RPCs: 86,
			Chunks: map[ChunkKind]int{ChunkRead: 1, ChunkWrite: 1, ChunkReply: 6},
			IO: []string{"WRITE read chunk 29999 bytes 30 packets " + reorderedFile,
				"READ write chunk 29999 bytes 30 packets " + reorderedFile}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			rs, got := readRPCCapture(t, filepath.Join("testdata", tt.file))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected reassembly (-want +got):\n%s", diff)
			}
			for _, x := range rs {
				// Every COMPOUND the Linux client sent here (OPEN with
				// CREATE, SETATTR, CLOSE ...) is walked to its end.
				if x.NFS != nil && slices.Contains(x.NFS.Ops, "...") {
					t.Errorf("RPC %d: %v not walked to the end", x.Index, x.NFS)
				}
				if len(x.Problems) > 0 {
					t.Errorf("RPC %d: %q", x.Index, x.Problems)
				}
				if x.NFS == nil || x.NFS.IO == nil || len(x.NFS.IO.Data) == 0 {
					continue
				}
				io := x.NFS.IO
				if !bytes.Equal(x.RPC[io.DataOffset:io.DataOffset+len(io.Data)], io.Data) {
					t.Errorf("RPC %d: the %s data is not where it says in the whole RPC message", x.Index, io.Op)
				}
			}
		})
	}
}

// TestRealNFSCaptureLoss: with one RDMA READ response of the real NFSv4.1
// WRITE taken out, the WRITE call is incomplete and says which chunk,
// handle and bytes are missing.
func TestRealNFSCaptureLoss(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "nfs-rxe-v41.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadCapture(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var fs []Frame
	dropped := false
	for {
		f, err := c.Next()
		if err != nil {
			break
		}
		if p := Decode(f, DecodeOptions{}); !dropped && p.BTH.Opcode.Operation() == OpReadResponseMiddle {
			dropped = true // the first Middle response in the capture
			continue
		}
		fs = append(fs, f)
	}
	rs := AssembleRPC(reassemble(fs).Messages, RPCOptions{})
	var probs []string
	for _, x := range rs {
		if !x.Complete {
			probs = append(probs, x.Problems...)
		}
	}
	want := []string{"read chunk 1 (position 176): handle 0x00000c15 bytes 19456-20479 of 29999 not in the capture"}
	if diff := cmp.Diff(want, probs); diff != "" {
		t.Errorf("unexpected problems (-want +got):\n%s", diff)
	}
}

// TestRealSiwCRC: the CRCs of the real siw capture are checked, not
// passed over: one bit flipped in the first FPDU's CRC field (the last
// byte of frame 8, the client's first Send) is one bad-crc event there.
func TestRealSiwCRC(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "nfs-siw-crc-v41.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	for _, flip := range []bool{false, true} {
		c, err := ReadCapture(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r := NewIWARPReassembler()
		for {
			f, err := c.Next()
			if err != nil {
				break
			}
			if flip && f.Number == 8 {
				f.Data = slices.Clone(f.Data)
				f.Data[len(f.Data)-1] ^= 1
			}
			r.Add(f)
		}
		var got []string
		for _, e := range r.Finish().Events {
			got = append(got, string(e.Kind)+" frame "+itoa(e.Frame))
		}
		var want []string
		if flip {
			want = []string{"bad-crc frame 8"}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("flip %v: unexpected events (-want +got):\n%s", flip, diff)
		}
	}
}
