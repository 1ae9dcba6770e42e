//go:build linux && cgo

package main

import "testing"

// TestOneMallocArena: threads that malloc at the same time share one
// arena, which the constructor in arena.go asked glibc for before any
// thread started. Without it, glibc gives each of them an arena.
func TestOneMallocArena(t *testing.T) {
	if got := mallocArenas(4); got != 1 {
		t.Errorf("malloc arenas after 4 threads malloc at once: %d, want 1", got)
	}
}
