package main

import (
	"testing"
	"time"
)

func TestProbeMachine(t *testing.T) {
	m, err := probeMachine(3, 100)
	if err != nil {
		t.Fatal(err)
	}
	// A page's first write and a system call each take some time, and
	// neither a millisecond on any machine this bench runs on.
	for name, d := range map[string]time.Duration{"page": m.Page, "system call": m.Syscall} {
		if d <= 0 || d > time.Millisecond {
			t.Errorf("%s: %v, want between 0 and 1ms", name, d)
		}
	}
}

func TestMachineCostString(t *testing.T) {
	got := machineCost{Page: 6400 * time.Nanosecond, Syscall: 250 * time.Nanosecond}.String()
	want := "first write to a page 6.40 µs, a system call 0.25 µs"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
