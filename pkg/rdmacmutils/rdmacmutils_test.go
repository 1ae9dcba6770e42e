package rdmacmutils

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The bytes are rping.c's: struct rping_rdma_info is buf (htobe64), rkey
// and size (htobe32), packed, and rping_test_client advertises its start
// buffer's address, rkey and size this way.
func TestRpingInfo(t *testing.T) {
	tests := []struct {
		name string
		m    RpingInfo
		wire []byte
	}{
		{"the client's start buffer", RpingInfo{Addr: 0x000055d5c0a1b2c0, RKey: 0x1a2b, Size: 64},
			[]byte{0, 0, 0x55, 0xd5, 0xc0, 0xa1, 0xb2, 0xc0, 0, 0, 0x1a, 0x2b, 0, 0, 0, 64}},
		{"the server's go-ahead", RpingInfo{}, make([]byte, 16)},
		{"every bit", RpingInfo{Addr: ^uint64(0), RKey: ^uint32(0), Size: ^uint32(0)}, bytes.Repeat([]byte{0xff}, 16)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.m.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wire, got); diff != "" {
				t.Errorf("MarshalBinary (-want +got):\n%s", diff)
			}
			var back RpingInfo
			if err := back.UnmarshalBinary(tt.wire); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.m, back); diff != "" {
				t.Errorf("UnmarshalBinary (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRpingInfoBogus(t *testing.T) {
	for _, n := range []int{0, 15, 17, 64} {
		var m RpingInfo
		err := m.UnmarshalBinary(make([]byte, n))
		var se *SizeError
		if !errors.As(err, &se) || se.Got != n || se.Want != RpingInfoSize {
			t.Errorf("%d bytes: error %v, want a *SizeError of %d bytes against 16", n, err, n)
		}
	}
	want := "rping message: 15 bytes, want 16"
	var m RpingInfo
	if err := m.UnmarshalBinary(make([]byte, 15)); err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// rdma_xserver.c puts its SRQ number in the accept's private data with
// htobe32; rdma_xclient.c reads it back with be32toh.
func TestXRCSRQNumber(t *testing.T) {
	tests := []struct {
		name string
		wire []byte
		want XRCSRQNumber
		err  string
	}{
		{"4 bytes", []byte{0, 0, 0x01, 0x23}, 0x123, ""},
		{"padded as an IB REP", append([]byte{0x00, 0xab, 0xcd, 0xef}, make([]byte, 192)...), 0xabcdef, ""},
		{"3 bytes", []byte{1, 2, 3}, 0, "XRC SRQ number: 3 bytes, want at least 4"},
		{"none", nil, 0, "XRC SRQ number: 0 bytes, want at least 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got XRCSRQNumber
			err := got.UnmarshalBinary(tt.wire)
			if tt.err != "" {
				var se *SizeError
				if !errors.As(err, &se) || err.Error() != tt.err {
					t.Fatalf("error %v, want the *SizeError %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("number %#x, want %#x", got, tt.want)
			}
			b, _ := got.MarshalBinary()
			if diff := cmp.Diff(tt.wire[:4], b); diff != "" {
				t.Errorf("MarshalBinary (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzRpingInfo(f *testing.F) {
	f.Add(make([]byte, 16))
	f.Add([]byte{0, 0, 0x55, 0xd5, 0xc0, 0xa1, 0xb2, 0xc0, 0, 0, 0x1a, 0x2b, 0, 0, 0, 64})
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m RpingInfo
		if err := m.UnmarshalBinary(b); err != nil {
			if len(b) == RpingInfoSize {
				t.Fatalf("16 bytes refused: %v", err)
			}
			return
		}
		again, err := m.MarshalBinary()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%x decoded to %+v, which encodes to %x (%v)", b, m, again, err)
		}
	})
}

func FuzzXRCSRQNumber(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0x23})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var n XRCSRQNumber
		if err := n.UnmarshalBinary(b); err != nil {
			if len(b) >= XRCSRQNumberSize {
				t.Fatalf("%d bytes refused: %v", len(b), err)
			}
			return
		}
		again, err := n.MarshalBinary()
		if err != nil || !bytes.Equal(again, b[:XRCSRQNumberSize]) {
			t.Fatalf("%x decoded to %#x, which encodes to %x (%v)", b, n, again, err)
		}
	})
}
