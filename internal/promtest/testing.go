package promtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// EnvRequire set to 1 turns StartForTest's skip for a missing Prometheus
// into a failure; it is the bench's variable (internal/simfabric), which
// make test sets.
const EnvRequire = "IBTOOL_REQUIRE_BENCH"

// ErrNotInstalled is wrapped by Available's error when prometheus or
// promtool is missing.
var ErrNotInstalled = errors.New("prometheus not installed")

// Available reports whether the prometheus and promtool programs are in
// PATH.
func Available() error {
	for _, prog := range []string{"prometheus", "promtool"} {
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Errorf("%w: %s missing (apt-get install prometheus, or make deps)", ErrNotInstalled, prog)
		}
	}
	return nil
}

// Require skips tb when Prometheus is not installed, or with -short, and
// fails it instead when IBTOOL_REQUIRE_BENCH=1.
func Require(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("promtest: runs a Prometheus server; skipped with -short")
	}
	if err := Available(); err != nil {
		if os.Getenv(EnvRequire) == "1" {
			tb.Fatalf("promtest: %v (%s=1)", err, EnvRequire)
		}
		tb.Skipf("promtest: %v; set %s=1 to fail instead", err, EnvRequire)
	}
}

// startTimeout bounds StartForTest's start; Prometheus is ready in about a
// second on the bench, longer while other tests load both cores.
const startTimeout = time.Minute

// StartForTest starts a server for tb (see Start) and stops it when tb's
// test ends, failing the test if it does not stop cleanly. It skips or
// fails tb as Require does, and fails tb when the server does not start.
func StartForTest(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	Require(tb)
	if cfg.TempDir == "" {
		cfg.TempDir = tb.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	s, err := Start(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("stopping prometheus: %v", err)
		}
	})
	tb.Logf("promtest: prometheus at %s, directory %s", s.URL, s.Dir())
	return s
}
