package mad

import (
	"bytes"
	"strings"
	"testing"
)

// nodeInfoHca1 is the NodeInfo data ibsim returns for Hca1 of its
// net.2sw2path4hca example, read through port 1 (captured with the
// transactor; the text is what smpquery nodeinfo prints for it).
const nodeInfoHca1 = "0101010200000000001000000000000000100000000000000010000100400000" +
	"000000a101000000" + "00000000000000000000000000000000000000000000000000000000"

func TestFieldUint(t *testing.T) {
	data := []byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0}
	tests := []struct {
		f    Field
		want uint64
	}{
		{Field{Offset: 0, Width: 8}, 0x12},
		{Field{Offset: 4, Width: 4}, 0x2},
		{Field{Offset: 12, Width: 12}, 0x456},
		{Field{Offset: 16, Width: 16}, 0x5678},
		{Field{Offset: 32, Width: 32}, 0x9abcdef0},
		{Field{Offset: 0, Width: 64}, 0x123456789abcdef0},
		{Field{Offset: 40, Width: 24}, 0xbcdef0},
		{Field{Offset: 60, Width: 4}, 0x0},
		{Field{Offset: 56, Width: 16}, 0}, // past the end
		{Field{Offset: 0, Width: 128}, 0}, // too wide for an integer
	}
	for _, tt := range tests {
		tt.f.DumpOffset = tt.f.Offset
		if got := tt.f.Uint(data); got != tt.want {
			t.Errorf("Field{%d, %d}.Uint = %#x, want %#x", tt.f.Offset, tt.f.Width, got, tt.want)
		}
	}
}

func TestFieldString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Hca1", "'Hca1'"},
		{strings.Repeat("x", 61), "'" + strings.Repeat("x", 61) + "'"},
		{strings.Repeat("x", 62), "'" + strings.Repeat("x", 62)},
		{strings.Repeat("x", 64), "'" + strings.Repeat("x", 62)},
	}
	for _, tt := range tests {
		data := make([]byte, 64)
		copy(data, tt.in)
		if got := string(layoutNodeDescription.Fields[0].AppendValue(nil, data)); got != tt.want {
			t.Errorf("%d bytes: %q, want %q", len(tt.in), got, tt.want)
		}
	}
}

func TestFieldSetValue(t *testing.T) {
	data := []byte{0xff, 0xff, 0x00, 0x00}
	f := Field{Offset: 4, Width: 8}
	f.SetValue(data, 0x5a)
	if want := []byte{0xf5, 0xaf, 0, 0}; !bytes.Equal(data, want) {
		t.Errorf("SetValue: % x, want % x", data, want)
	}
	if got := f.Value(data); got != 0x5a {
		t.Errorf("Value = %#x, want 0x5a", got)
	}
	f.SetValue(data, 0x1ff) // cut to 8 bits
	if got := f.Value(data); got != 0xff {
		t.Errorf("Value after an oversize set = %#x, want 0xff", got)
	}
	Field{Offset: 24, Width: 16}.SetValue(data, 1) // past the end: no change
	if data[3] != 0 {
		t.Errorf("SetValue past the end wrote % x", data)
	}
}
