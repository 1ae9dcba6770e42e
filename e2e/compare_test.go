package e2e

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// smallFabric is ibsim's two-switch example: Switch1 and Switch2 joined by
// two links, Hca1..Hca4 (two ports each, port 1 cabled); opensm runs on
// Switch1.
func smallFabric(t *testing.T) *simfabric.Fabric {
	t.Helper()
	return simfabric.ForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
}

// result is what one run printed.
type result struct {
	stdout, stderr []byte
	exit           int
}

// run runs one command on f attached at simHost, failing t when it cannot
// run at all.
func run(t *testing.T, what string, do func(ctx context.Context) ([]byte, []byte, int, error)) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, errOut, exit, err := do(ctx)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return result{out, errOut, exit}
}

// sameAsReference runs the infiniband-diags tool and ibtool, as "ibtool
// TOOL" and through the TOOL symlink, attached at simHost, and fails t
// unless all three exit 0 with the same standard output and nothing on
// standard error.
func sameAsReference(t *testing.T, f *simfabric.Fabric, simHost, tool string, args ...string) {
	t.Helper()
	sameAsReferenceAfter(t, f, func() {}, simHost, tool, args...)
}

// sameAsReferenceAfter is sameAsReference with prepare run before each of
// the three commands, to put the fabric in the same state for each (reset
// the counters their own MADs move, say).
func sameAsReferenceAfter(t *testing.T, f *simfabric.Fabric, prepare func(), simHost, tool string, args ...string) {
	t.Helper()
	compareWithReference(t, f, prepare, func(b []byte) []byte { return b }, simHost, tool, args...)
}

// sameAsReferenceMasked is sameAsReference comparing the outputs after
// normalize, for values that move on their own between runs (opensm's
// SMInfo activity count, say).
func sameAsReferenceMasked(t *testing.T, f *simfabric.Fabric, normalize func([]byte) []byte, simHost, tool string, args ...string) {
	t.Helper()
	compareWithReference(t, f, func() {}, normalize, simHost, tool, args...)
}

func compareWithReference(t *testing.T, f *simfabric.Fabric, prepare func(), normalize func([]byte) []byte, simHost, tool string, args ...string) {
	t.Helper()
	prepare()
	ref := run(t, tool, func(ctx context.Context) ([]byte, []byte, int, error) {
		return f.RunReference(ctx, simHost, tool, args...)
	})
	if ref.exit != 0 || len(shimNoise.ReplaceAll(ref.stderr, nil)) != 0 {
		t.Fatalf("reference %s %q at %s: exit %d, stderr %q", tool, args, simHost, ref.exit, ref.stderr)
	}
	if len(ref.stdout) == 0 {
		t.Fatalf("reference %s %q at %s printed nothing", tool, args, simHost)
	}
	for _, form := range ibtoolForms(f, simHost, tool, args) {
		prepare()
		got := run(t, form.name, form.do)
		if got.exit != 0 || len(got.stderr) != 0 {
			t.Errorf("%s at %s: exit %d, stderr %q", form.name, simHost, got.exit, got.stderr)
		}
		if want, got := normalize(ref.stdout), normalize(got.stdout); !bytes.Equal(want, got) {
			t.Errorf("%s at %s differs from infiniband-diags (-want +got):\n%s", form.name, simHost, simfabric.Diff(want, got))
		}
	}
}

// shimNoise matches what libumad2sim itself prints when SIM_HOST is unset.
var shimNoise = regexp.MustCompile(`(?m)^ibwarn: \[\d+\] sim_connect: attached as client \d+ at node "[^"]*"\n`)

// form is one way to invoke an ibtool tool.
type form struct {
	name string
	do   func(ctx context.Context) ([]byte, []byte, int, error)
}

// ibtoolForms returns "ibtool TOOL ARGS" and "TOOL ARGS" through the
// symlink.
func ibtoolForms(f *simfabric.Fabric, simHost, tool string, args []string) []form {
	line := strings.TrimSpace(tool + " " + strings.Join(args, " "))
	return []form{
		{"ibtool " + line, func(ctx context.Context) ([]byte, []byte, int, error) {
			return f.RunIbtool(ctx, ibtoolBin, simHost, tool, args...)
		}},
		{line + " (symlink)", func(ctx context.Context) ([]byte, []byte, int, error) {
			return f.RunCommand(ctx, simHost, filepath.Join(linkDir, tool), args...)
		}},
	}
}

// failsCleanly runs ibtool's tool where the reference fails, and checks
// that ibtool fails too, with exit code wantExit, nothing on standard
// output, and one line on standard error naming the tool and containing
// wantMsg.
func failsCleanly(t *testing.T, f *simfabric.Fabric, simHost string, wantExit int, wantMsg, tool string, args ...string) {
	t.Helper()
	ref := run(t, tool, func(ctx context.Context) ([]byte, []byte, int, error) {
		return f.RunReference(ctx, simHost, tool, args...)
	})
	if ref.exit == 0 {
		t.Errorf("reference %s %q at %s succeeded; the test expects it to fail", tool, args, simHost)
	}
	ibtoolFails(t, f, simHost, wantExit, wantMsg, tool, args...)
}

// ibtoolFails checks that ibtool's tool fails with exit code wantExit,
// nothing on standard output, and one line on standard error naming the
// tool and containing wantMsg: failsCleanly without running the reference,
// for failures infiniband-diags does not report.
func ibtoolFails(t *testing.T, f *simfabric.Fabric, simHost string, wantExit int, wantMsg, tool string, args ...string) {
	t.Helper()
	for _, form := range ibtoolForms(f, simHost, tool, args) {
		got := run(t, form.name, form.do)
		msg := string(got.stderr)
		if got.exit != wantExit || len(got.stdout) != 0 || strings.Count(msg, "\n") != 1 ||
			!strings.HasPrefix(msg, tool+": ") || !strings.Contains(msg, wantMsg) {
			t.Errorf("%s at %s: exit %d, stdout %q, stderr %q; want exit %d and one line \"%s: ...%s...\"",
				form.name, simHost, got.exit, got.stdout, msg, wantExit, tool, wantMsg)
		}
	}
}

// compareExit runs the infiniband-diags tool and ibtool (both forms) and
// fails t unless all exit with wantExit and print the same standard
// output: for tools whose findings exit 1.
func compareExit(t *testing.T, f *simfabric.Fabric, host string, wantExit int, tool string, args ...string) {
	t.Helper()
	compareExitMasked(t, f, host, func() {}, func(b []byte) []byte { return b }, wantExit, tool, args...)
}

// compareExitMasked is compareExit with prepare run before each command
// and the outputs compared after mask.
func compareExitMasked(t *testing.T, f *simfabric.Fabric, host string, prepare func(), mask func([]byte) []byte, wantExit int, tool string, args ...string) {
	t.Helper()
	prepare()
	ref := run(t, tool, func(ctx context.Context) ([]byte, []byte, int, error) {
		return f.RunReference(ctx, host, tool, args...)
	})
	if ref.exit != wantExit {
		t.Fatalf("reference %s %q: exit %d, want %d; stderr %q", tool, args, ref.exit, wantExit, ref.stderr)
	}
	for _, form := range ibtoolForms(f, host, tool, args) {
		prepare()
		got := run(t, form.name, form.do)
		if got.exit != wantExit {
			t.Errorf("%s: exit %d, want %d; stderr %q", form.name, got.exit, wantExit, got.stderr)
		}
		if !bytes.Equal(mask(ref.stdout), mask(got.stdout)) {
			t.Errorf("%s differs from infiniband-diags (-want +got):\n%s", form.name, simfabric.Diff(mask(ref.stdout), mask(got.stdout)))
		}
	}
}

// sameOutput runs infiniband-diags' ref[0] with ref's arguments and
// ibtool's ours[0] with ours', and fails t unless both succeed and print
// the same (after mask): ibtool options infiniband-diags does not have.
func sameOutput(t *testing.T, f *simfabric.Fabric, host string, mask func([]byte) []byte, ref, ours []string) {
	t.Helper()
	r := run(t, ref[0], func(ctx context.Context) ([]byte, []byte, int, error) {
		return f.RunReference(ctx, host, ref[0], ref[1:]...)
	})
	got := run(t, "ibtool "+ours[0], func(ctx context.Context) ([]byte, []byte, int, error) {
		return f.RunIbtool(ctx, ibtoolBin, host, ours[0], ours[1:]...)
	})
	if r.exit != 0 || got.exit != 0 || len(got.stderr) != 0 {
		t.Fatalf("reference exit %d; ibtool %q exit %d, stderr %q", r.exit, ours, got.exit, got.stderr)
	}
	if want, have := mask(r.stdout), mask(got.stdout); !bytes.Equal(want, have) {
		t.Errorf("ibtool %q differs from infiniband-diags %q (-want +got):\n%s", ours, ref, simfabric.Diff(want, have))
	}
}

// counterSet is a counter value ibsim's PerformanceSet gives a port.
type counterSet struct {
	node  string
	port  int
	field string
	value uint64
}

// countersFabric starts a fabric of its own for t from net; prepare gives
// the ports the counter values sets holds, again before each run (a tool
// may clear them).
func countersFabric(t *testing.T, net []byte, sets []counterSet) (f *simfabric.Fabric, prepare func()) {
	t.Helper()
	f = simfabric.StartForTest(t, simfabric.Options{Net: net})
	return f, func() {
		t.Helper()
		setCounters(t, f, sets)
	}
}

// setCounters gives each port its counter value, failing t on an error.
func setCounters(t *testing.T, f *simfabric.Fabric, sets []counterSet) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range sets {
		if err := f.PerformanceSet(ctx, simfabric.Port(c.node, c.port), c.field, c.value); err != nil {
			t.Fatal(err)
		}
	}
}
