package verbs

import (
	"bytes"
	"fmt"
	"testing"
)

func TestPattern(t *testing.T) {
	// Both sides of a test generate the pattern: its bytes for a seed
	// must not change between versions.
	first := make([]byte, 16)
	Pattern(1).Fill(first)
	if got, want := fmt.Sprintf("%x", first), "3f7829631da0078764b577a4d41bdf07"; got != want {
		t.Errorf("seed 1's first bytes %s, want %s", got, want)
	}
	a, b := make([]byte, 1003), make([]byte, 1003)
	Pattern(42).Fill(a)
	Pattern(42).Fill(b[:500])
	if !bytes.Equal(a[:500], b[:500]) {
		t.Error("a shorter fill is not a prefix of a longer one")
	}
	if got := Pattern(42).FirstDiff(a); got != -1 {
		t.Errorf("FirstDiff of the pattern %d, want -1", got)
	}
	if got := Pattern(42).FirstDiff(a[:5]); got != -1 {
		t.Errorf("FirstDiff of a prefix %d, want -1", got)
	}
	for _, at := range []int{0, 7, 8, 700, 1002} {
		c := bytes.Clone(a)
		c[at] ^= 1
		if got := Pattern(42).FirstDiff(c); got != at {
			t.Errorf("FirstDiff with byte %d changed: %d", at, got)
		}
	}
	Pattern(43).Fill(b)
	if bytes.Equal(a, b) {
		t.Error("two seeds, one pattern")
	}
	if got := Pattern(43).FirstDiff(a); got < 0 {
		t.Errorf("FirstDiff against another seed's bytes %d", got)
	}
}

// FuzzPattern checks FirstDiff against a byte-by-byte comparison with a
// fill, for any seed, length and changed byte.
func FuzzPattern(f *testing.F) {
	f.Add(uint64(42), uint16(1003), uint16(700))
	f.Add(uint64(0), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, seed uint64, n, at uint16) {
		p := Pattern(seed)
		b := make([]byte, n)
		p.Fill(b)
		want := -1
		if int(at) < len(b) {
			b[at] ^= 0x80
			want = int(at)
		}
		if got := p.FirstDiff(b); got != want {
			t.Fatalf("FirstDiff %d, want %d", got, want)
		}
	})
}
