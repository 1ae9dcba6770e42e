package mad

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// saGetTableRespHead is the first 56 bytes of a GetTableResp of
// LinkRecords (AttributeOffset 1: 8-byte records) with an SM_Key and a
// component mask set, as decode_mad's tests build one.
var saGetTableRespHead = []byte{
	1, 3, 2, 0x81, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
	0, 0x20, 0, 0, 0, 0, 0, 0,
	1, 1, 0xe0, 0, 0, 0, 0, 1, 0, 0, 0, 0x14, // RMPP
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // SM_Key
	0, 1, 0, 0, // AttributeOffset, reserved
	0, 0, 0, 0, 0, 0, 0, 0x05, // ComponentMask
}

func TestSAHeader(t *testing.T) {
	var h SAHeader
	if err := h.UnmarshalBinary(saGetTableRespHead); err != nil {
		t.Fatal(err)
	}
	want := SAHeader{SMKey: 0x0102030405060708, AttributeOffset: 1, ComponentMask: 5}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("unexpected SA header (-want +got):\n%s", diff)
	}
	if got := h.RecordLen(); got != 8 {
		t.Errorf("RecordLen %d, want 8", got)
	}
	m := bytes.Repeat([]byte{0xff}, SAHeaderEnd)
	copy(m, saGetTableRespHead[:36])
	if err := h.MarshalTo(m); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(saGetTableRespHead, m); diff != "" {
		t.Errorf("unexpected encoding (-want +got):\n%s", diff)
	}
	var short *ShortError
	if err := h.UnmarshalBinary(m[:55]); !errors.As(err, &short) || short.Need != SAHeaderEnd {
		t.Errorf("55 bytes: %v", err)
	}
	if err := h.MarshalTo(m[:55]); !errors.As(err, &short) {
		t.Errorf("MarshalTo into 55 bytes: %v", err)
	}
}

// FuzzSAHeader round-trips any input: decode, encode, decode gives the
// same header, and the encoding is the input with the reserved bytes
// zeroed.
func FuzzSAHeader(f *testing.F) {
	f.Add(saGetTableRespHead)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var h SAHeader
		if err := h.UnmarshalBinary(b); err != nil {
			if len(b) >= SAHeaderEnd {
				t.Fatalf("UnmarshalBinary(%d bytes): %v", len(b), err)
			}
			return
		}
		enc := append([]byte(nil), b[:SAHeaderEnd]...)
		if err := h.MarshalTo(enc); err != nil {
			t.Fatal(err)
		}
		var h2 SAHeader
		if err := h2.UnmarshalBinary(enc); err != nil || h2 != h {
			t.Fatalf("round trip: %+v, %v; want %+v", h2, err, h)
		}
		want := append([]byte(nil), b[:SAHeaderEnd]...)
		want[46], want[47] = 0, 0
		if !bytes.Equal(enc, want) {
			t.Fatalf("re-encoding differs:\n got %x\nwant %x", enc, want)
		}
	})
}
