package mad

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHeaderUnmarshalCaptured(t *testing.T) {
	tests := []struct {
		name string
		mad  string
		want Header
	}{
		{
			name: "DR NodeInfo Get",
			mad:  capturedDRNodeInfoGet,
			want: Header{
				BaseVersion: 1, MgmtClass: ClassSMIDirect, ClassVersion: 1,
				Method: MethodGet, Status: 0, ClassSpecific: 0x0001,
				TID: 0x000000016171b1e5, AttrID: attrNodeInfo, AttrMod: 0,
			},
		},
		{
			name: "DR NodeInfo GetResp",
			mad:  capturedDRNodeInfoGetResp,
			want: Header{
				BaseVersion: 1, MgmtClass: ClassSMIDirect, ClassVersion: 1,
				Method: MethodGetResp, Status: DirectionBit, ClassSpecific: 0x0001,
				TID: 0x000200016171b1e5, AttrID: attrNodeInfo, AttrMod: 0,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := unhex(t, tt.mad)
			var got Header
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected header (-want +got):\n%s", diff)
			}
			enc, err := got.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(b[:HeaderLen], enc); diff != "" {
				t.Errorf("unexpected encoding (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeaderShortBuffer(t *testing.T) {
	var h Header
	err := h.UnmarshalBinary(make([]byte, HeaderLen-1))
	var se *ShortError
	if !errors.As(err, &se) || se.Need != HeaderLen || se.Have != HeaderLen-1 {
		t.Errorf("UnmarshalBinary(23 bytes) = %v, want *ShortError need 24 have 23", err)
	}
	if err := h.MarshalTo(make([]byte, 10)); !errors.As(err, &se) {
		t.Errorf("MarshalTo(10 bytes) = %v, want *ShortError", err)
	}
}

func TestHeaderMarshalToKeepsRest(t *testing.T) {
	b := bytes.Repeat([]byte{0xaa}, Size)
	h := Header{BaseVersion: 1, MgmtClass: ClassPerf, ClassVersion: 1, Method: MethodGet,
		TID: 0x0102030405060708, AttrID: 0x12, AttrMod: 0x01000000}
	if err := h.MarshalTo(b); err != nil {
		t.Fatal(err)
	}
	want := unhex(t, "01040101 00000000 0102030405060708 0012 0000 01000000")
	if diff := cmp.Diff(want, b[:HeaderLen]); diff != "" {
		t.Errorf("unexpected header bytes (-want +got):\n%s", diff)
	}
	if !bytes.Equal(b[HeaderLen:], bytes.Repeat([]byte{0xaa}, Size-HeaderLen)) {
		t.Error("MarshalTo wrote past the header")
	}
	app, err := h.AppendBinary([]byte{9})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append([]byte{9}, want...), app); diff != "" {
		t.Errorf("unexpected AppendBinary (-want +got):\n%s", diff)
	}
}

func FuzzHeader(f *testing.F) {
	f.Add(unhex(f, capturedDRNodeInfoGet))
	f.Add(unhex(f, capturedDRNodeInfoGetResp))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var h Header
		if err := h.UnmarshalBinary(b); err != nil {
			if len(b) >= HeaderLen {
				t.Fatalf("UnmarshalBinary(%d bytes): %v", len(b), err)
			}
			return
		}
		enc, err := h.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var h2 Header
		if err := h2.UnmarshalBinary(enc); err != nil {
			t.Fatal(err)
		}
		if h != h2 {
			t.Fatalf("round trip changed header: %+v != %+v", h, h2)
		}
		want := append([]byte(nil), b[:HeaderLen]...)
		want[18], want[19] = 0, 0 // reserved
		if !bytes.Equal(enc, want) {
			t.Fatalf("re-encoding differs:\n got %x\nwant %x", enc, want)
		}
	})
}
