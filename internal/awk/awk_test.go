package awk

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSubstr(t *testing.T) {
	tests := []struct {
		s    string
		m, n int
		want string
	}{
		{`"S-0000000000200000"`, 4, 16, "0000000000200000"},
		{"hello", 1, 5, "hello"},
		{"hello", 2, 100, "ello"},
		{"hello", 5, 1, "o"},
		{"hello", 6, 1, ""},
		{"hello", 1, 0, ""},
		{"hello", 1, -1, ""},
		{"hello", 0, 2, "h"}, // positions 0 and 1: only 1 is in s
		{"hello", -3, 2, ""},
		{"", 1, 3, ""},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Substr(tt.s, tt.m, tt.n)); diff != "" {
			t.Errorf("Substr(%q, %d, %d): unexpected result (-want +got):\n%s", tt.s, tt.m, tt.n, diff)
		}
	}
}

// FuzzSubstr checks Substr never panics and gives a piece of s no longer
// than asked.
func FuzzSubstr(f *testing.F) {
	f.Add("hello", 2, 3)
	f.Fuzz(func(t *testing.T, s string, m, n int) {
		if m > 1<<30 || m < -1<<30 || n > 1<<30 || n < -1<<30 {
			return
		}
		got := Substr(s, m, n)
		if len(got) > max(n, 0) || len(got) > len(s) {
			t.Fatalf("Substr(%q, %d, %d) = %q: longer than asked", s, m, n, got)
		}
	})
}
