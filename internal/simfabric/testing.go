package simfabric

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// shared holds the fabrics ForTest started, one per distinct Options.
var shared struct {
	sync.Mutex
	main    bool // Main is running the tests
	fabrics map[string]*sharedFabric
}

type sharedFabric struct {
	once sync.Once
	f    *Fabric
	err  error
}

// Main runs a test binary's tests and stops every fabric ForTest started,
// and on SIGINT or SIGTERM every fabric the binary started, even one still
// starting. Call it from TestMain:
//
//	func TestMain(m *testing.M) { simfabric.Main(m) }
//
// A test that panics kills the binary before Main can stop anything; ibsim
// and opensm then die with it (PR_SET_PDEATHSIG) and the fabric directory,
// with its logs, stays in the temporary directory.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main without the exit: it runs the tests, stops the fabrics and
// returns m.Run's code, for a TestMain with its own clean-up to do.
func Run(m *testing.M) int {
	shared.Lock()
	shared.main = true
	shared.Unlock()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sig
		live.stopAll()
		fmt.Fprintf(os.Stderr, "simfabric: %v: fabrics stopped\n", s)
		os.Exit(128 + int(s.(syscall.Signal)))
	}()
	code := m.Run()
	live.stopAll() // the shared fabrics, and any a test forgot to stop
	signal.Stop(sig)
	return code
}

// requireBench skips tb when the bench cannot run: with -short, or when
// ibsim or opensm is missing (then it fails tb instead when
// IBTOOL_REQUIRE_BENCH=1).
func requireBench(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("simfabric: needs the simulated fabric; skipped with -short")
	}
	if err := Available(); err != nil {
		if os.Getenv(EnvRequire) == "1" {
			tb.Fatalf("simfabric: %v (%s=1)", err, EnvRequire)
		}
		tb.Skipf("simfabric: %v; set %s=1 to fail instead", err, EnvRequire)
	}
}

// ForTest returns a running fabric for opts, shared by every test of the
// test binary that asks for the same options: the first call starts it,
// Main stops it after the last test. Tests that change the fabric (faults,
// links) should use StartForTest instead. Without Main, the fabric is not
// shared: it is stopped when tb's test ends.
//
// ForTest skips tb when the bench cannot run (see Available), or fails it
// when IBTOOL_REQUIRE_BENCH=1; it fails tb when the fabric does not start.
func ForTest(tb testing.TB, opts Options) *Fabric {
	tb.Helper()
	requireBench(tb)
	shared.Lock()
	if !shared.main {
		shared.Unlock()
		return StartForTest(tb, opts)
	}
	if shared.fabrics == nil {
		shared.fabrics = make(map[string]*sharedFabric)
	}
	key := opts.key()
	s := shared.fabrics[key]
	if s == nil {
		s = &sharedFabric{}
		shared.fabrics[key] = s
	}
	shared.Unlock()
	s.once.Do(func() {
		s.f, s.err = Start(context.Background(), opts)
		if s.err == nil {
			tb.Logf("simfabric: shared fabric %s up in %v", s.f.Dir(), s.f.Timing())
		}
	})
	if s.err != nil {
		tb.Fatal(s.err)
	}
	return s.f
}

// StartForTest starts a fabric for tb alone and stops it when tb's test
// ends. It skips or fails tb as ForTest does.
func StartForTest(tb testing.TB, opts Options) *Fabric {
	tb.Helper()
	requireBench(tb)
	f, err := Start(context.Background(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := f.Stop(); err != nil {
			tb.Errorf("stopping fabric: %v", err)
		}
	})
	tb.Logf("simfabric: fabric %s up in %v", f.Dir(), f.Timing())
	return f
}

// key identifies the fabric opts describe, for sharing.
func (o Options) key() string {
	return fmt.Sprintf("%s\x00%x\x00%s\x00%s\x00%t\x00%s", o.NetFile, sha256.Sum256(o.Net),
		o.SMNode, o.RoutingEngine, o.NoSM, strings.Join(o.OpenSMArgs, "\x00"))
}
