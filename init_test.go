package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

// envInitProbe makes the test binary exit as main would start: what it
// did before is every linked package's init, ibtool's as the binary's.
const envInitProbe = "IBTOOL_INIT_PROBE"

func TestMain(m *testing.M) {
	if os.Getenv(envInitProbe) == "1" {
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Package inits run on every start of every tool, whichever tool runs, so
// their allocations are paid thousands of times by a script's loop. These
// budgets hold what ibtool's packages and their dependencies allocate
// before main with some room (docs/bench.md, Start-up); a new dependency
// or a table built at init that goes over them is a start-up cost to
// measure and justify, or to make lazy (sync.OnceValue, static data).
//
// 520 allocations and 72 KB: 460 and 62 KB are used, most of them by
// dependencies (tablewriter and go-runewidth about 220 and 26 KB), since
// ibtool's own tables are static data or built on first use (below), and
// the exporter's net/http and crypto/tls (about 190 allocations and 25 KB
// when ibtool linked them) are ibtool-exporter's (TestNoServerDeps).
const (
	initAllocsBudget   = 520
	initBytesBudget    = 72 << 10
	packageBytesBudget = 32 << 10 // one package's init
)

// staticInit are ibtool's packages whose init allocates nothing: their
// tables are laid out by the compiler (arrays, switches, slices of
// constants; a map literal is built at init) or built on first use. The
// registry's families still allocate the closures of the tools they
// register in loops.
var staticInit = []string{
	"github.com/ibtool/ibtool/cmd/internal/cmdutil",
	"github.com/ibtool/ibtool/cmd/sa",
	"github.com/ibtool/ibtool/pkg/endport",
	"github.com/ibtool/ibtool/pkg/mad",
	"github.com/ibtool/ibtool/pkg/madrpc",
	"github.com/ibtool/ibtool/pkg/subnet",
	"github.com/ibtool/ibtool/pkg/trace",
}

// TestInitBudget counts the allocations of every package's init, from
// GODEBUG=inittrace=1 (counts, not timings: they do not vary from run to
// run), and fails when the sum or one package is over budget.
func TestInitBudget(t *testing.T) {
	inits := probeInits(t)
	var allocs, bytes int
	for _, in := range inits {
		if slices.Contains(staticInit, in.pkg) && in.allocs != 0 {
			t.Errorf("init of %s allocates %d bytes in %d allocations; want none (a table built at init?)", in.pkg, in.bytes, in.allocs)
		}
		allocs += in.allocs
		bytes += in.bytes
		if in.bytes > packageBytesBudget {
			t.Errorf("init of %s allocates %d bytes (%d allocations), over the %d of one package", in.pkg, in.bytes, in.allocs, packageBytesBudget)
		}
	}
	if allocs > initAllocsBudget || bytes > initBytesBudget {
		t.Errorf("package inits allocate %d bytes in %d allocations, over the budget of %d bytes in %d; the largest:\n%s",
			bytes, allocs, initBytesBudget, initAllocsBudget, largest(inits, 8))
	}
	t.Logf("package inits: %d bytes in %d allocations; the largest:\n%s", bytes, allocs, largest(inits, 5))
}

// TestOneProcFirst: internal/oneproc's init, which puts the process on one
// scheduler processor, runs before os and before every package outside
// the standard library, so that the inits after it (and the threads the
// runtime starts for them) run on that one processor.
func TestOneProcFirst(t *testing.T) {
	inits := probeInits(t)
	const oneproc = "github.com/ibtool/ibtool/internal/oneproc"
	at := slices.IndexFunc(inits, func(in packageInit) bool { return in.pkg == oneproc })
	if at < 0 {
		t.Fatalf("no init of %s in the trace: is it imported by main?", oneproc)
	}
	for _, in := range inits[:at] {
		if in.pkg == "os" || strings.Contains(strings.SplitN(in.pkg, "/", 2)[0], ".") {
			t.Errorf("init of %s runs before %s", in.pkg, oneproc)
		}
	}
}

// probeInits runs this test binary again as far as main would start, with
// GODEBUG=inittrace=1, and returns its package inits in the order they ran.
func probeInits(t *testing.T) []packageInit {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envInitProbe+"=1", "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("init probe: %v\n%s", err, stderr.String())
	}
	inits, err := parseInitTrace(stderr.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return inits
}

// packageInit is one line of GODEBUG=inittrace=1.
type packageInit struct {
	pkg           string
	bytes, allocs int
}

// parseInitTrace reads the "init PKG @T ms, C ms clock, B bytes, A allocs"
// lines, leaving out the testing packages that only the test binary links.
func parseInitTrace(trace []byte) ([]packageInit, error) {
	var out []packageInit
	sc := bufio.NewScanner(bytes.NewReader(trace))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "init ") {
			continue
		}
		var in packageInit
		var at, clock float64
		if _, err := fmt.Sscanf(line, "init %s @%f ms, %f ms clock, %d bytes, %d allocs", &in.pkg, &at, &clock, &in.bytes, &in.allocs); err != nil {
			return nil, fmt.Errorf("inittrace line %q: %v", line, err)
		}
		if in.pkg == "testing" || strings.HasPrefix(in.pkg, "testing/") {
			continue
		}
		out = append(out, in)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no inittrace lines in %q", trace)
	}
	return out, sc.Err()
}

// largest lists the n packages whose inits allocate the most bytes.
func largest(inits []packageInit, n int) string {
	s := append([]packageInit(nil), inits...)
	sort.Slice(s, func(i, j int) bool { return s[i].bytes > s[j].bytes })
	var b strings.Builder
	for _, in := range s[:min(n, len(s))] {
		fmt.Fprintf(&b, "  %8d bytes %5d allocs  %s\n", in.bytes, in.allocs, in.pkg)
	}
	return b.String()
}
