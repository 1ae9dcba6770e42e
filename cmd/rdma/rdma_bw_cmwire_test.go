package rdma

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ptDestBytes is a pingpong_dest as perftest 4.5's rdma_write_keys lays
// it out on x86-64 (fields big-endian at their C offsets, 4 bytes of
// padding after rkey): LID 0, out_reads 0, QPN 0x11, PSN 0x62f4bc, rkey
// 0xa32, vaddr 0x7f0765113000, a link-local GID, SRQ number 0, GID index
// 1.
var ptDestBytes = mustHex("00000000" + "00000000" + "00000011" + "0062f4bc" + "00000a32" + "00000000" + "00007f0765113000" +
	"fe800000000000005054fffe123456" + "78" + "00000000" + "00000001")

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func TestPTDest(t *testing.T) {
	want := ptDest{QPN: 0x11, PSN: 0x62f4bc, RKey: 0xa32, VAddr: 0x7f0765113000,
		GID: [16]byte{0xfe, 0x80, 8: 0x50, 0x54, 0xff, 0xfe, 0x12, 0x34, 0x56, 0x78}, GIDIndex: 1}
	got, err := parsePTDest(ptDestBytes)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected dest (-want +got):\n%s", diff)
	}
	if b := appendPTDest(nil, want); !bytes.Equal(b, ptDestBytes) {
		t.Errorf("encoded\n%x\nwant\n%x", b, ptDestBytes)
	}
	if _, err := parsePTDest(ptDestBytes[:48]); err == nil {
		t.Error("a short dest parsed")
	}
}

func TestPTMessages(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		dec  func([]byte) (any, error)
		want any
		err  string
	}{
		{"version", appendPTVersion(nil, "6.06"), func(b []byte) (any, error) { return parsePTVersion(b) }, "6.06", ""},
		{"version 5.70", append([]byte("5.70"), make([]byte, 12)...), func(b []byte) (any, error) { return parsePTVersion(b) }, "5.70", ""},
		{"old version", append([]byte("5.60"), make([]byte, 12)...), func(b []byte) (any, error) { return parsePTVersion(b) }, "5.60",
			"the peer's perftest version 5.60 is older than 5.70, whose exchange this follows"},
		{"version not a number", append([]byte("x"), make([]byte, 15)...), func(b []byte) (any, error) { return parsePTVersion(b) }, "x",
			`the peer's version "x" is not a number`},
		{"version short", []byte("6.06\x00"), func(b []byte) (any, error) { return parsePTVersion(b) }, "",
			"a version message of 5 bytes, perftest's has 16"},
		{"MTU 1024", appendPTMTU(nil, 3), func(b []byte) (any, error) { return parsePTMTU(b) }, 3, ""},
		{"MTU as perftest writes 4096", []byte("5\x00"), func(b []byte) (any, error) { return parsePTMTU(b) }, 5, ""},
		{"MTU out of range", []byte("7\x00"), func(b []byte) (any, error) { return parsePTMTU(b) }, 0,
			`the peer's MTU "7" is not one of 1 (256 bytes) to 5 (4096)`},
		{"MTU long", []byte("3\x00\x00"), func(b []byte) (any, error) { return parsePTMTU(b) }, 0, "an MTU message of 3 bytes, perftest's has 2"},
		{"page size", appendPTU32(nil, 4096), func(b []byte) (any, error) { return parsePTU32(b) }, uint32(4096), ""},
		{"page size short", []byte{0, 16}, func(b []byte) (any, error) { return parsePTU32(b) }, uint32(0), "a 4-byte number in 2 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.dec(tt.b)
			if diff := cmp.Diff(tt.err, errString(err)); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected value (-want +got):\n%s", diff)
			}
		})
	}
	if b := appendPTVersion(nil, ptVersion); len(b) != ptVersionSize || string(b[:5]) != "6.06\x00" {
		t.Errorf("version message %q", b)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestPTReport(t *testing.T) {
	r := ptReport{Size: 65536, Iters: 5000, Peak: 43.82, Average: 41.39, MsgRate: 0.000662}
	msgs := ptReportMessages(r)
	// 41.39 as a big-endian IEEE double, as hton_double sends it.
	if want := mustHex("4044b1eb851eb852"); !bytes.Equal(msgs[3], want) {
		t.Errorf("average sent as %x, want %x", msgs[3], want)
	}
	got, err := parsePTReport(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("unexpected report (-want +got):\n%s", diff)
	}
	line := got.result(false)
	if diff := cmp.Diff(" 65536      5000             43.82              41.39  \t\t   0.000662\n", string(appendResult(nil, line))); diff != "" {
		t.Errorf("unexpected line (-want +got):\n%s", diff)
	}
	if _, err := parsePTReport(msgs[:4]); fmt.Sprint(err) != "a report in 4 messages, perftest's has 5" {
		t.Errorf("short report: %v", err)
	}
	msgs[1] = msgs[1][:4]
	if _, err := parsePTReport(msgs); fmt.Sprint(err) != "report field 2: an 8-byte number in 4 bytes" {
		t.Errorf("short field: %v", err)
	}
}

// FuzzPTDest decodes any bytes a peer sends as a QP address, and
// round-trips what decodes.
func FuzzPTDest(f *testing.F) {
	f.Add(ptDestBytes)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parsePTDest(b)
		if err != nil {
			return
		}
		e := appendPTDest(nil, d)
		// The padding after rkey is not kept.
		want := append([]byte(nil), b...)
		clear(want[20:24])
		if !bytes.Equal(e, want) {
			t.Fatalf("round trip of %x gave %x", b, e)
		}
	})
}

// FuzzPTMessages decodes any bytes as each of the other messages.
func FuzzPTMessages(f *testing.F) {
	f.Add(appendPTVersion(nil, "6.06"))
	f.Add([]byte("3\x00"))
	f.Add(appendPTU64(nil, 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := parsePTVersion(b); err == nil {
			if again, err := parsePTVersion(appendPTVersion(nil, v)); err != nil || again != v {
				t.Fatalf("version %q: %q, %v", v, again, err)
			}
		}
		if m, err := parsePTMTU(b); err == nil {
			if again, err := parsePTMTU(appendPTMTU(nil, m)); err != nil || again != m {
				t.Fatalf("MTU %d: %d, %v", m, again, err)
			}
		}
		_, _ = parsePTU32(b)
		_, _ = parsePTReport([][]byte{b, b, b, b, b})
	})
}

// TestBwReportRdmaCM checks the settings lines perftest prints
// differently over rdma_cm: rdma_cm QPs, the exchange, and the -R
// server's wait.
func TestBwReportRdmaCM(t *testing.T) {
	tests := []struct {
		name       string
		server     string
		rdmaCM, cm bool
		want       string
	}{
		{"TCP", "h", false, false, " rdma_cm QPs\t : OFF\n Data ex. method : Ethernet\n" + resultLine},
		{"-z", "h", false, true, " rdma_cm QPs\t : OFF\n Data ex. method : rdma_cm\n" + resultLine},
		{"-R client", "h", true, false, " rdma_cm QPs\t : ON\n Data ex. method : rdma_cm\n" + resultLine},
		{"-R server", "", true, false, " rdma_cm QPs\t : ON\n Data ex. method : rdma_cm\n" + resultLine +
			" Waiting for client rdma_cm QP to connect\n Please run the same command with the IB/RoCE interface IP\n" + resultLine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			o := &rdmaBwOptions{Server: tt.server, RDMACM: tt.rdmaCM, CommCM: tt.cm}
			o.IO.Out = &out
			r := &bwReport{o: o, p: bwParams{TxDepth: 128, CQMod: 1}, s: &bwSession{gidIndex: -1, inline: 220}, device: "rxe0"}
			if err := r.begin(); err != nil {
				t.Fatal(err)
			}
			s := out.String()
			from := strings.Index(s, " rdma_cm QPs")
			to := strings.Index(s, " local address")
			if from < 0 || to < from {
				t.Fatalf("no settings lines in\n%s", s)
			}
			if diff := cmp.Diff(tt.want, s[from:to]); diff != "" {
				t.Errorf("unexpected settings (-want +got):\n%s", diff)
			}
		})
	}
}
