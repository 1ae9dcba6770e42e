package mad

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestDRSMPHeaderCaptured(t *testing.T) {
	tests := []struct {
		name string
		mad  string
		want DRSMPHeader
	}{
		{
			name: "request",
			mad:  capturedDRNodeInfoGet,
			want: DRSMPHeader{
				HopCount: 1, DrSLID: rdma.PermissiveLID, DrDLID: rdma.PermissiveLID,
				InitialPath: [MaxHops]byte{0, 1},
			},
		},
		{
			name: "response",
			mad:  capturedDRNodeInfoGetResp,
			want: DRSMPHeader{
				Direction: true, HopCount: 1, DrSLID: rdma.PermissiveLID, DrDLID: rdma.PermissiveLID,
				InitialPath: [MaxHops]byte{0, 1}, ReturnPath: [MaxHops]byte{1, 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := unhex(t, tt.mad)
			var got DRSMPHeader
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected DR header (-want +got):\n%s", diff)
			}

			// Rebuild the MAD from its parts: header, DR fields, SMP data.
			var h Header
			if err := h.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			h.Status &^= DirectionBit // DRSMPHeader owns the D bit
			h.ClassSpecific = 0       // and the hop pointer and count
			enc := make([]byte, Size)
			copy(enc[SMPDataOffset:], b[SMPDataOffset:SMPDataOffset+SMPDataLen])
			if err := h.MarshalTo(enc); err != nil {
				t.Fatal(err)
			}
			if err := got.MarshalTo(enc); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(b, enc); diff != "" {
				t.Errorf("unexpected encoding (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDRSMPHeaderMarshalClearsDirection(t *testing.T) {
	b := make([]byte, Size)
	b[4] = 0x80 | 0x7f
	d := DRSMPHeader{}
	if err := d.MarshalTo(b); err != nil {
		t.Fatal(err)
	}
	if b[4] != 0x7f {
		t.Errorf("byte 4 = %#x, want D cleared and status bits kept (0x7f)", b[4])
	}
}

func TestDRSMPHeaderShort(t *testing.T) {
	var d DRSMPHeader
	var se *ShortError
	if err := d.UnmarshalBinary(make([]byte, Size-1)); !errors.As(err, &se) {
		t.Errorf("UnmarshalBinary(255 bytes) = %v, want *ShortError", err)
	}
	if err := d.MarshalTo(make([]byte, HeaderLen)); !errors.As(err, &se) {
		t.Errorf("MarshalTo(24 bytes) = %v, want *ShortError", err)
	}
}

func FuzzDRSMPHeader(f *testing.F) {
	f.Add(unhex(f, capturedDRNodeInfoGet))
	f.Add(unhex(f, capturedDRNodeInfoGetResp))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d DRSMPHeader
		if err := d.UnmarshalBinary(b); err != nil {
			if len(b) >= Size {
				t.Fatalf("UnmarshalBinary(%d bytes): %v", len(b), err)
			}
			return
		}
		enc := append([]byte(nil), b[:Size]...)
		if err := d.MarshalTo(enc); err != nil {
			t.Fatal(err)
		}
		want := append([]byte(nil), b[:Size]...)
		clear(want[36:SMPDataOffset]) // reserved, zeroed by MarshalTo
		if !bytes.Equal(enc, want) {
			t.Fatalf("re-encoding differs:\n got %x\nwant %x", enc, want)
		}
		var d2 DRSMPHeader
		if err := d2.UnmarshalBinary(enc); err != nil {
			t.Fatal(err)
		}
		if d != d2 {
			t.Fatalf("round trip changed DR header: %+v != %+v", d, d2)
		}
	})
}
