package subnet

import "testing"

// TestRingFIFO pushes and pops across the ring's wrap and its growth:
// items come out in the order they went in.
func TestRingFIFO(t *testing.T) {
	var r ring
	next, want := 0, 0
	push := func(k int) {
		for range k {
			r.push(qitem{num: next})
			next++
		}
	}
	pop := func(k int) {
		for range k {
			if got := r.pop().num; got != want {
				t.Fatalf("popped %d, want %d", got, want)
			}
			want++
		}
	}
	push(1000)
	pop(900)  // the head is near the end of the buffer
	push(500) // wraps round
	pop(300)
	push(3000) // grows while wrapped
	pop(r.n)
	if r.n != 0 || want != next {
		t.Fatalf("%d left, popped %d of %d", r.n, want, next)
	}
}
