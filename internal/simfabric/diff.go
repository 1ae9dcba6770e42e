package simfabric

import (
	"bytes"
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines surround a hunk.
const diffContext = 3

// maxEdits bounds the edit distance Diff searches for; past it, the
// differing middle of the inputs is shown as removed, then added, whole.
const maxEdits = 1000

// Diff returns a unified diff of a (the reference, "-") and b ("+") by
// lines, with three lines of context and "@@ -l,n +l,n @@" hunk headers,
// or "" when a and b are equal.
func Diff(a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	ops := diffLines(x, y)
	var out strings.Builder
	writeHunks(&out, ops, x, y)
	if ea, eb := endsInNewline(a), endsInNewline(b); ea != eb {
		which := "-"
		if !eb {
			which = "+"
		}
		fmt.Fprintf(&out, "\\ %s side has no newline at end of file\n", which)
	}
	return out.String()
}

func endsInNewline(s []byte) bool { return len(s) == 0 || s[len(s)-1] == '\n' }

func splitLines(s []byte) []string {
	if len(s) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(s), "\n"), "\n")
}

// edit is one line of the diff: ' ' kept, '-' only in x, '+' only in y.
type edit struct {
	op   byte
	x, y int // line indexes in x and y (the one of the other side is where it would go)
}

// diffLines returns the edit script from x to y: common prefix and suffix
// kept, Myers' O(ND) algorithm on the middle.
func diffLines(x, y []string) []edit {
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var ops []edit
	for i := range pre {
		ops = append(ops, edit{' ', i, i})
	}
	mid := myers(x[pre:len(x)-suf], y[pre:len(y)-suf])
	for _, e := range mid {
		ops = append(ops, edit{e.op, e.x + pre, e.y + pre})
	}
	for i := range suf {
		ops = append(ops, edit{' ', len(x) - suf + i, len(y) - suf + i})
	}
	return ops
}

// myers returns a shortest edit script from x to y, or, when that needs
// more than maxEdits edits, all of x removed then all of y added.
func myers(x, y []string) []edit {
	n, m := len(x), len(y)
	maxD := min(n+m, maxEdits)
	off := maxD + 2
	v := make([]int, 2*maxD+4)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		// Keep the frontier's live part, k from -d-1 to d+1.
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				i = v[off+k+1] // down: insertion
			} else {
				i = v[off+k-1] + 1 // right: deletion
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i, j = i+1, j+1
			}
			v[off+k] = i
			if i >= n && j >= m {
				return backtrack(trace, n, m)
			}
		}
	}
	var ops []edit
	for i := range n {
		ops = append(ops, edit{'-', i, 0})
	}
	for j := range m {
		ops = append(ops, edit{'+', n, j})
	}
	return ops
}

// backtrack walks the saved frontiers back from (n, m) to (0, 0);
// trace[d] is the frontier before step d, for k from -d-1 to d+1.
func backtrack(trace [][]int, n, m int) []edit {
	var rev []edit
	i, j := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		v, off := trace[d], d+1
		k := i - j
		pk := k - 1
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			pk = k + 1
		}
		pi := v[off+pk]
		pj := pi - pk
		for i > pi && j > pj {
			i, j = i-1, j-1
			rev = append(rev, edit{' ', i, j})
		}
		if d > 0 {
			if i == pi {
				rev = append(rev, edit{'+', pi, pj})
			} else {
				rev = append(rev, edit{'-', pi, pj})
			}
		}
		i, j = pi, pj
	}
	ops := make([]edit, len(rev))
	for k, e := range rev {
		ops[len(rev)-1-k] = e
	}
	return ops
}

// writeHunks prints the changed edits with diffContext kept lines around
// them, merging hunks whose context overlaps.
func writeHunks(out *strings.Builder, ops []edit, x, y []string) {
	for start := 0; start < len(ops); {
		for start < len(ops) && ops[start].op == ' ' {
			start++
		}
		if start == len(ops) {
			return
		}
		lo := max(0, start-diffContext)
		hi := start
		for kept := 0; hi < len(ops) && kept <= 2*diffContext; hi++ {
			if ops[hi].op == ' ' {
				kept++
			} else {
				kept = 0
			}
		}
		// hi is past a run of more than 2*diffContext kept lines, or at the
		// end: trim the run to diffContext lines.
		for hi > start && ops[hi-1].op == ' ' {
			hi--
		}
		hi = min(len(ops), hi+diffContext)
		writeHunk(out, ops[lo:hi], x, y)
		start = hi
	}
}

func writeHunk(out *strings.Builder, h []edit, x, y []string) {
	var nx, ny int
	for _, e := range h {
		if e.op != '+' {
			nx++
		}
		if e.op != '-' {
			ny++
		}
	}
	sx, sy := h[0].x+1, h[0].y+1
	if nx == 0 {
		sx--
	}
	if ny == 0 {
		sy--
	}
	fmt.Fprintf(out, "@@ -%d,%d +%d,%d @@\n", sx, nx, sy, ny)
	for _, e := range h {
		line := ""
		if e.op == '+' {
			line = y[e.y]
		} else {
			line = x[e.x]
		}
		out.WriteByte(e.op)
		out.WriteString(line)
		out.WriteByte('\n')
	}
}
