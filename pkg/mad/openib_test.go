package mad

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOpenIBText(t *testing.T) {
	long := strings.Repeat("cpu 0: model M MHZ 1\n", 20)
	tests := []struct {
		name    string
		text    OpenIBText
		wantLen int
	}{
		{"empty", "", Vendor2DataLen},
		{"host", "node1.example", Vendor2DataLen},
		{"fits with its NUL", OpenIBText(strings.Repeat("x", Vendor2DataLen-1)), Vendor2DataLen},
		{"a CPU list for RMPP", OpenIBText(long), len(long) + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.text.AppendBinary([]byte{0xee})
			if err != nil {
				t.Fatal(err)
			}
			if len(b)-1 != tt.wantLen || b[0] != 0xee || b[1+len(tt.text)] != 0 {
				t.Fatalf("%d bytes (want %d), NUL at the end of the text: %v", len(b)-1, tt.wantLen, b[1+len(tt.text)] == 0)
			}
			var got OpenIBText
			if err := got.UnmarshalBinary(b[1:]); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.text, got); diff != "" {
				t.Errorf("decode(encode(x)) (-want +got):\n%s", diff)
			}
		})
	}
	if got := OpenIBText(long).Fit(); len(got) != Vendor2DataLen-1 || !strings.HasPrefix(long, string(got)) {
		t.Errorf("Fit: %d bytes", len(got))
	}
	var nonul OpenIBText
	_ = nonul.UnmarshalBinary([]byte("abc"))
	if nonul != "abc" {
		t.Errorf("text without a NUL: %q", nonul)
	}
}

func TestOpenIBResponse(t *testing.T) {
	req := make([]byte, Size)
	h := Header{BaseVersion: 1, MgmtClass: ClassOpenIBSysstat, ClassVersion: 1, Method: MethodGet, TID: 7, AttrID: AttrSysstatCPU}
	if err := h.MarshalTo(req); err != nil {
		t.Fatal(err)
	}
	req[37], req[38], req[39] = 0x00, 0x14, 0x05
	if got := Vendor2OUI(req); got != OUIOpenIB {
		t.Errorf("Vendor2OUI = %#x", got)
	}
	if got := Vendor2OUI(req[:39]); got != 0 {
		t.Errorf("Vendor2OUI of a short MAD = %#x", got)
	}
	if got := OUIBytes(OUIOpenIB); got != [3]byte{0, 0x14, 5} {
		t.Errorf("OUIBytes = %x", got)
	}
	for _, tt := range []struct {
		text          OpenIBText
		wantLen       int
		wantSegmented bool
	}{
		{"host", Size, false},
		{OpenIBText(strings.Repeat("c", 300)), Vendor2DataOffset + 301, true},
	} {
		msg, segmented, err := OpenIBResponse(req, tt.text)
		if err != nil {
			t.Fatal(err)
		}
		var rh Header
		var rr RMPPHeader
		if err := rh.UnmarshalBinary(msg); err != nil {
			t.Fatal(err)
		}
		_ = rr.UnmarshalBinary(msg)
		if len(msg) != tt.wantLen || segmented != tt.wantSegmented || rh.Method != MethodGetResp || rh.TID != 7 ||
			Vendor2OUI(msg) != OUIOpenIB || (rr.Flags&RMPPActive != 0) != tt.wantSegmented {
			t.Errorf("%d bytes (want %d), segmented %v, %v, RMPP %+v", len(msg), tt.wantLen, segmented, rh, rr)
		}
		if !bytes.HasPrefix(msg[Vendor2DataOffset:], []byte(tt.text+"\x00")) {
			t.Errorf("data %q", msg[Vendor2DataOffset:])
		}
	}
	if _, _, err := OpenIBResponse(req[:20], "x"); err == nil {
		t.Error("a 20-byte request: no error")
	}
}

func FuzzOpenIBText(f *testing.F) {
	f.Add([]byte("node1.example\x00"), []byte(nil))
	f.Add(bytes.Repeat([]byte("cpu 0\n"), 60), make([]byte, Size))
	f.Fuzz(func(t *testing.T, data, req []byte) {
		var text OpenIBText
		if err := text.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		b, err := text.MarshalBinary()
		if err != nil || len(b) < Vendor2DataLen || len(b) < len(text)+1 {
			t.Fatalf("%d bytes, %v", len(b), err)
		}
		var again OpenIBText
		if err := again.UnmarshalBinary(b); err != nil || again != text {
			t.Fatalf("decode(encode(%q)) = %q, %v", text, again, err)
		}
		msg, segmented, err := OpenIBResponse(req, text)
		if err != nil {
			if len(req) >= Vendor2DataOffset {
				t.Fatal(err)
			}
			return
		}
		if segmented != (len(msg) > Size) || len(msg) < Size {
			t.Fatalf("%d bytes, segmented %v", len(msg), segmented)
		}
		_ = Vendor2OUI(req)
	})
}
