package simfabric

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// fakeTB records what requireBench does with a test. Like testing's, its
// Skip and Fatal end the goroutine, so run must be used.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skip(args ...any) {
	f.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls fn with the fake in a goroutine of its own.
func (f *fakeTB) run(fn func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
}

func TestRequireBenchMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("requireBench skips everything with -short")
	}
	t.Setenv("PATH", t.TempDir())
	saved, savedShim := sbinDirs, shimPath
	sbinDirs, shimPath = nil, "/nonexistent/libumad2sim.so"
	t.Cleanup(func() { sbinDirs, shimPath = saved, savedShim })

	err := Available()
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "ibsim, opensm, /nonexistent/libumad2sim.so, gcc missing") ||
		!strings.Contains(err.Error(), "libc6-dev") {
		t.Errorf("Available: got %v", err)
	}

	t.Setenv(EnvRequire, "")
	tb := &fakeTB{}
	tb.run(requireBench)
	if tb.failed != "" || !strings.Contains(tb.skipped, "ibsim, opensm") || !strings.Contains(tb.skipped, EnvRequire+"=1") {
		t.Errorf("without %s: skipped %q, failed %q; want a skip naming what is missing", EnvRequire, tb.skipped, tb.failed)
	}

	t.Setenv(EnvRequire, "1")
	tb = &fakeTB{}
	tb.run(requireBench)
	if tb.skipped != "" || !strings.Contains(tb.failed, "ibsim, opensm") {
		t.Errorf("with %s=1: skipped %q, failed %q; want a failure", EnvRequire, tb.skipped, tb.failed)
	}
}
