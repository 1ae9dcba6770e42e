package oneproc

import (
	"runtime"
	"testing"
)

// TestInit: a program that links the package runs on one processor.
func TestInit(t *testing.T) {
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS after init = %d, want 1", got)
	}
}
