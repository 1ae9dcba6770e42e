package simfabric

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiff(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"both empty", "", "", ""},
		{"changed line", "a\nb\nc\n", "a\nB\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"added at end", "a\n", "a\nb\n", "@@ -1,1 +1,2 @@\n a\n+b\n"},
		{"removed at start", "a\nb\n", "b\n", "@@ -1,2 +1,1 @@\n-a\n b\n"},
		{"from empty", "", "x\n", "@@ -0,0 +1,1 @@\n+x\n"},
		{"to empty", "x\n", "", "@@ -1,1 +0,0 @@\n-x\n"},
		{"no newline", "a\n", "a", "\\ + side has no newline at end of file\n"},
		{
			"context trimmed",
			"1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\n5\n6\n7\nx\n",
			"@@ -5,4 +5,4 @@\n 5\n 6\n 7\n-8\n+x\n",
		},
		{
			"two hunks",
			"a\n1\n2\n3\n4\n5\n6\n7\n8\nb\n", "A\n1\n2\n3\n4\n5\n6\n7\n8\nB\n",
			"@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n@@ -7,4 +7,4 @@\n 6\n 7\n 8\n-b\n+B\n",
		},
		{
			"one hunk when close",
			"a\n1\n2\n3\nb\n", "A\n1\n2\n3\nB\n",
			"@@ -1,5 +1,5 @@\n-a\n+A\n 1\n 2\n 3\n-b\n+B\n",
		},
		{
			"interleaved",
			"a\nb\nc\nd\n", "b\nx\nd\ne\n",
			"@@ -1,4 +1,4 @@\n-a\n b\n-c\n+x\n d\n+e\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Diff([]byte(tt.a), []byte(tt.b))); diff != "" {
				t.Errorf("unexpected Diff (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDiffEditsRebuild checks that the edit script covers both sides, in
// order.
func TestDiffEditsRebuild(t *testing.T) {
	cases := [][2]string{
		{"a b c d e f g", "a x c d y f g z"},
		{"", "a b"},
		{"a a a a", "a a"},
		{"a b a b a b", "b a b a"},
		{"1 2 3 4 5 6 7 8 9", "9 8 7 6 5 4 3 2 1"},
	}
	for _, c := range cases {
		x, y := strings.Fields(c[0]), strings.Fields(c[1])
		ops := diffLines(x, y)
		var gotX, gotY []string
		for _, e := range ops {
			switch e.op {
			case ' ':
				gotX, gotY = append(gotX, x[e.x]), append(gotY, y[e.y])
			case '-':
				gotX = append(gotX, x[e.x])
			case '+':
				gotY = append(gotY, y[e.y])
			}
		}
		if diff := cmp.Diff(x, gotX, cmp.Comparer(eqEmpty)); diff != "" {
			t.Errorf("%q -> %q: edits do not cover x (-want +got):\n%s", c[0], c[1], diff)
		}
		if diff := cmp.Diff(y, gotY, cmp.Comparer(eqEmpty)); diff != "" {
			t.Errorf("%q -> %q: edits do not cover y (-want +got):\n%s", c[0], c[1], diff)
		}
	}
}

func eqEmpty(a, b []string) bool { return len(a) == 0 && len(b) == 0 || fmt.Sprint(a) == fmt.Sprint(b) }

func TestDiffBig(t *testing.T) {
	// Past maxEdits the middle is replaced whole, quickly.
	var a, b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	d := Diff([]byte(a.String()), []byte(b.String()))
	if got := strings.Count(d, "\n-"); got != 5000 {
		t.Errorf("%d removed lines, want 5000", got)
	}
	if !strings.HasPrefix(d, "@@ -1,5000 +1,5000 @@\n") {
		t.Errorf("unexpected header: %q", d[:40])
	}
}
