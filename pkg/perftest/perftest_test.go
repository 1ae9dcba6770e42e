package perftest_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/perftest"
)

// destBytes is a pingpong_dest as perftest 4.5's rdma_write_keys lays it
// out on x86-64 (fields big-endian at their C offsets, 4 bytes of padding
// after rkey): LID 0, out_reads 0, QPN 0x11, PSN 0x62f4bc, rkey 0xa32,
// vaddr 0x7f0765113000, a link-local GID, SRQ number 0, GID index 1.
var destBytes = mustHex("00000000" + "00000000" + "00000011" + "0062f4bc" + "00000a32" + "00000000" + "00007f0765113000" +
	"fe800000000000005054fffe123456" + "78" + "00000000" + "00000001")

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestDest(t *testing.T) {
	want := perftest.Dest{QPN: 0x11, PSN: 0x62f4bc, RKey: 0xa32, VAddr: 0x7f0765113000,
		GID: [16]byte{0xfe, 0x80, 8: 0x50, 0x54, 0xff, 0xfe, 0x12, 0x34, 0x56, 0x78}, GIDIndex: 1}
	var got perftest.Dest
	if err := got.UnmarshalBinary(destBytes); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected dest (-want +got):\n%s", diff)
	}
	if b, _ := want.MarshalBinary(); !bytes.Equal(b, destBytes) {
		t.Errorf("encoded\n%x\nwant\n%x", b, destBytes)
	}
	err := got.UnmarshalBinary(destBytes[:48])
	var se *perftest.SizeError
	if !errors.As(err, &se) || se.Got != 48 || se.Want != perftest.DestSize {
		t.Errorf("48 bytes: got %v", err)
	}
	if diff := cmp.Diff("a QP address of 48 bytes, perftest's has 56", errString(err)); diff != "" {
		t.Errorf("unexpected error (-want +got):\n%s", diff)
	}
}

func TestMessages(t *testing.T) {
	version := func(b []byte) (any, error) { return perftest.ParseVersion(b) }
	mtu := func(b []byte) (any, error) { return perftest.ParseMTU(b) }
	u32 := func(b []byte) (any, error) { return perftest.ParseUint32(b) }
	tests := []struct {
		name string
		b    []byte
		dec  func([]byte) (any, error)
		want any
		err  string
	}{
		{"version", perftest.AppendVersion(nil, "6.06"), version, "6.06", ""},
		{"version 5.70", append([]byte("5.70"), make([]byte, 12)...), version, "5.70", ""},
		{"old version", append([]byte("5.60"), make([]byte, 12)...), version, "5.60",
			"the peer's perftest version 5.60 is older than 5.70, whose exchange this follows"},
		{"version not a number", append([]byte("x"), make([]byte, 15)...), version, "x", `the peer's version "x" is not a number`},
		{"version without NUL", bytes.Repeat([]byte("6"), 16), version, "", "the peer's version message has no NUL"},
		{"version short", []byte("6.06\x00"), version, "", "a version message of 5 bytes, perftest's has 16"},
		{"MTU 1024", perftest.AppendMTU(nil, 3), mtu, 3, ""},
		{"MTU as perftest writes 4096", []byte("5\x00"), mtu, 5, ""},
		{"MTU out of range", []byte("7\x00"), mtu, 0, `the peer's MTU "7" is not one of 1 (256 bytes) to 5 (4096)`},
		{"MTU long", []byte("3\x00\x00"), mtu, 0, "an MTU message of 3 bytes, perftest's has 2"},
		{"page size", perftest.AppendUint32(nil, 4096), u32, uint32(4096), ""},
		{"page size short", []byte{0, 16}, u32, uint32(0), "a 4-byte number of 2 bytes, perftest's has 4"},
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
	if b := perftest.AppendVersion(nil, perftest.Version); len(b) != perftest.VersionSize || string(b[:5]) != "6.06\x00" {
		t.Errorf("version message %q", b)
	}
}

func TestReport(t *testing.T) {
	r := perftest.Report{Size: 65536, Iters: 5000, Peak: 43.82, Average: 41.39, MsgRate: 0.000662}
	msgs := r.Messages()
	// 41.39 as a big-endian IEEE double, as hton_double sends it.
	if want := mustHex("4044b1eb851eb852"); !bytes.Equal(msgs[3], want) {
		t.Errorf("average sent as %x, want %x", msgs[3], want)
	}
	got, err := perftest.ParseReport(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("unexpected report (-want +got):\n%s", diff)
	}
	if _, err := perftest.ParseReport(msgs[:4]); fmt.Sprint(err) != "a report of 4 messages, perftest's has 5" {
		t.Errorf("short report: %v", err)
	}
	msgs[1] = msgs[1][:4]
	_, err = perftest.ParseReport(msgs)
	if diff := cmp.Diff("report field 2: an 8-byte number of 4 bytes, perftest's has 8", errString(err)); diff != "" {
		t.Errorf("short field (-want +got):\n%s", diff)
	}
	var se *perftest.SizeError
	if !errors.As(err, &se) || se.Got != 4 {
		t.Errorf("short field: %v is not a *SizeError of 4 bytes", err)
	}
}

// FuzzDest decodes any bytes a peer sends as a QP address, and
// round-trips what decodes.
func FuzzDest(f *testing.F) {
	f.Add(destBytes)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d perftest.Dest
		if d.UnmarshalBinary(b) != nil {
			return
		}
		e, _ := d.MarshalBinary()
		// The padding after rkey is not kept.
		want := append([]byte(nil), b...)
		clear(want[20:24])
		if !bytes.Equal(e, want) {
			t.Fatalf("round trip of %x gave %x", b, e)
		}
	})
}

// FuzzMessages decodes any bytes as each of the other messages, and
// round-trips what decodes.
func FuzzMessages(f *testing.F) {
	f.Add(perftest.AppendVersion(nil, "6.06"))
	f.Add([]byte("3\x00"))
	f.Add(binaryU64(1))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := perftest.ParseVersion(b); err == nil {
			if again, err := perftest.ParseVersion(perftest.AppendVersion(nil, v)); err != nil || again != v {
				t.Fatalf("version %q: %q, %v", v, again, err)
			}
		}
		if m, err := perftest.ParseMTU(b); err == nil {
			if again, err := perftest.ParseMTU(perftest.AppendMTU(nil, m)); err != nil || again != m {
				t.Fatalf("MTU %d: %d, %v", m, again, err)
			}
		}
		if v, err := perftest.ParseUint32(b); err == nil {
			if again := perftest.AppendUint32(nil, v); !bytes.Equal(again, b) {
				t.Fatalf("number %x: %x", b, again)
			}
		}
		if r, err := perftest.ParseReport([][]byte{b, b, b, b, b}); err == nil {
			again, err := perftest.ParseReport(r.Messages())
			if err != nil || !bytes.Equal(again.Messages()[0], b) {
				t.Fatalf("report of %x: %+v, %v", b, again, err)
			}
		}
	})
}

func binaryU64(v uint64) []byte {
	return perftest.Report{Size: v}.Messages()[0]
}
