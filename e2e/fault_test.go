package e2e

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// The fault tests break the simulator under running tools, as an operator
// would: ibsim stopped (SIGSTOP) during directed-route, LID-routed and SA
// work; SIGTERM while it is stopped; bursts of SIGINT in a tool's first
// milliseconds; ibsim killed mid-run. Each tool must end by itself, say
// what happened, and leave ibsim running with its client slots free.

// faultTree is the fabric of the fault tests: a 2-level fat tree of 200
// hosts, big enough that its fabric-wide tools run for a while.
func faultTree(t *testing.T) *simfabric.Fabric {
	t.Helper()
	net, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 2, Hosts: 200, Radix: 24})
	if err != nil {
		t.Fatal(err)
	}
	return simfabric.StartForTest(t, simfabric.Options{Net: net})
}

// faultHost is where the fault tests' tools attach.
const faultHost = "H-0001"

// timedTool is a tool run under faults, with its fault-free output.
type timedTool struct {
	name string
	args []string
	// want is its output with no fault; took how long that run took.
	want []byte
	took time.Duration
}

func (tt *timedTool) String() string { return strings.Join(append([]string{tt.name}, tt.args...), " ") }

// measure runs the tool once without faults.
func (tt *timedTool) measure(t *testing.T, f *simfabric.Fabric) {
	t.Helper()
	r, err := f.RunIbtoolTimed(context.Background(), ibtoolBin, faultHost, nil, tt.name, tt.args...)
	if err != nil || r.Exit != 0 {
		t.Fatalf("%s with no fault: exit %d, %v\n%s", tt, r.Exit, err, r.Stderr)
	}
	tt.want, tt.took = dropGenerated(r.Stdout), r.Ended
}

// generatedLine is the line of ibnetdiscover's output that says when.
var generatedLine = regexp.MustCompile(`(?m)^# Topology file: generated on .*\n`)

// dropGenerated returns out without the time it was generated.
func dropGenerated(out []byte) []byte { return generatedLine.ReplaceAll(out, nil) }

// checkSimulatorFine checks that ibsim still runs and that every client
// slot is free again (a keeper may take a moment to disconnect).
func checkSimulatorFine(t *testing.T, f *simfabric.Fabric) {
	t.Helper()
	ctx := context.Background()
	var clients []string
	for end := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		reply, err := f.Console(ctx, "Attached")
		if err != nil {
			t.Fatalf("ibsim's console: %v", err)
		}
		clients = clients[:0]
		for _, l := range strings.Split(reply, "\n") {
			// opensm is the one client that stays.
			if strings.Contains(l, "connected") && !strings.HasSuffix(strings.TrimSpace(l), " SM") {
				clients = append(clients, l)
			}
		}
		if len(clients) == 0 || time.Now().After(end) {
			break
		}
	}
	if len(clients) > 0 {
		t.Errorf("ibsim still has clients attached:\n%s", strings.Join(clients, "\n"))
	}
	out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, faultHost, "smpquery", "-D", "nodeinfo", "0")
	if err != nil || exit != 0 || !bytes.Contains(out, []byte("PortGuid:")) {
		t.Fatalf("ibsim does not answer after the fault: exit %d, %v\n%s", exit, err, errOut)
	}
}

// timeoutLine matches what a tool may say when the simulator stops
// answering: a MAD's TimeoutError, an attach request's, or a summary.
var timeoutLine = regexp.MustCompile(`no response after \d+ tr(y|ies)|[A-Z_]+: no answer within|discovery incomplete|the fabric shown is partial|queries failed|reads failed`)

// TestFaultStoppedSimulator stops ibsim (SIGSTOP) at three points of
// directed-route, LID-routed and SA work, and keeps it stopped until the
// tool ends: the tool must give up by itself after its timeouts and
// retries, with timeout errors, or finish with the fault-free output when
// the freeze came too late.
func TestFaultStoppedSimulator(t *testing.T) {
	f := faultTree(t)
	mad := []string{"-t", "100", "--retries", "1"}
	tools := []*timedTool{
		{name: "ibnetdiscover", args: mad},                                   // directed routes
		{name: "ibqueryerrors", args: append([]string{"--skip-sl"}, mad...)}, // then PMA queries by LID
		{name: "dump_lfts", args: mad},
		{name: "ibnetdiscover", args: append([]string{"--discovery", "sa"}, mad...)}, // SA tables in RMPP
		{name: "saquery", args: append([]string{"PIR"}, mad...)},
	}
	for _, tt := range tools {
		t.Run(tt.String(), func(t *testing.T) {
			tt.measure(t, f)
			for _, frac := range []float64{0.3, 0.5, 0.7} {
				// An attach takes the first few milliseconds.
				at := max(time.Duration(float64(tt.took)*frac), 4*time.Millisecond)
				checkStopped(t, f, tt, at)
			}
		})
	}
}

// checkStopped runs tt with ibsim stopped at time at, until it ends.
func checkStopped(t *testing.T, f *simfabric.Fabric, tt *timedTool, at time.Duration) {
	t.Helper()
	r, err := f.RunIbtoolTimed(context.Background(), ibtoolBin, faultHost,
		[]simfabric.Event{{At: at, Do: f.Freeze, Name: "freeze"}}, tt.name, tt.args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fault-free run %v; stopped at %v; ended at %v, exit %d", tt.took, at, r.Ended, r.Exit)
	switch {
	case r.Signal != 0:
		t.Fatalf("killed by %v", r.Signal)
	case r.Exit == 0:
		if got := dropGenerated(r.Stdout); !bytes.Equal(got, tt.want) {
			t.Errorf("exit 0 with output that differs from the fault-free run:\n%s", simfabric.Diff(tt.want, got))
		}
	case r.Exit != 3:
		t.Errorf("exit %d, want 3 (or 0 when it finished first)\n%s", r.Exit, r.Stderr)
	case !timeoutLine.Match(r.Stderr):
		t.Errorf("exit 3 without a timeout error:\n%s", r.Stderr)
	}
	// The MAD timeouts bound the run; an attach that the freeze caught
	// waits ibsim's 5 s control timeout (fabric-wide tools attach again
	// after the discovery).
	if limit := at + 10*time.Second; r.Ended > limit {
		t.Errorf("ended %v after it started, want before %v", r.Ended, limit)
	}
	if err := f.Thaw(); err != nil {
		t.Fatal(err)
	}
	checkSimulatorFine(t, f)
}

// TestFaultSIGTERMWhileStopped sends SIGTERM while ibsim is stopped under
// a running tool: the tool ends within a second, whatever its transport
// was doing, saying so, and dies of SIGTERM once it has left ibsim as it
// found it (the shell's status 143); ibsim, continued, lives on.
func TestFaultSIGTERMWhileStopped(t *testing.T) {
	f := faultTree(t)
	tools := []*timedTool{
		{name: "ibnetdiscover"},
		{name: "ibqueryerrors"},
		{name: "iblinkinfo", args: []string{"--discovery", "sa"}},
		{name: "smpquery", args: []string{"-D", "nodeinfo", "0"}}, // caught attaching
	}
	for _, tt := range tools {
		t.Run(tt.String(), func(t *testing.T) {
			tt.measure(t, f)
			at := tt.took / 2
			events := []simfabric.Event{
				{At: at, Do: f.Freeze, Name: "freeze"},
				{At: at + 300*time.Millisecond, Signal: syscall.SIGTERM},
				{At: at + 1500*time.Millisecond, Do: f.Thaw, Name: "thaw"},
			}
			r, err := f.RunIbtoolTimed(context.Background(), ibtoolBin, faultHost, events, tt.name, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("fault-free run %v; frozen at %v; ended at %v, exit %d, signal %v", tt.took, at, r.Ended, r.Exit, r.Signal)
			if r.Sent() == 0 {
				// It finished before the freeze could stop it.
				if got := dropGenerated(r.Stdout); r.Exit != 0 || !bytes.Equal(got, tt.want) {
					t.Errorf("ended before SIGTERM: exit %d, output (-want +got):\n%s", r.Exit, simfabric.Diff(tt.want, got))
				}
			} else {
				if r.Signal != syscall.SIGTERM {
					t.Errorf("exit %d (signal %v) after SIGTERM, want death by SIGTERM\n%s", r.Exit, r.Signal, r.Stderr)
				}
				if d := r.AfterSignal(); d > time.Second {
					t.Errorf("ended %v after SIGTERM, want within 1 s", d)
				}
				if want := tt.name + ": interrupted by SIGTERM\n"; string(r.Stderr) != want {
					t.Errorf("stderr %q, want %q", r.Stderr, want)
				}
				if got := dropGenerated(r.Stdout); !bytes.HasPrefix(tt.want, got) {
					t.Errorf("output is not a start of the fault-free run's:\n%s", simfabric.Diff(tt.want, got))
				}
			}
			checkSimulatorFine(t, f)
		})
	}
}

// TestFaultSIGINTBursts sends 100 SIGINTs over the first 20 ms of a tool:
// it dies of the first, either at once (before it catches SIGINT) or soon
// after, having said so and left ibsim as it found it; ibsim survives
// every run. 8 to 13.5 ms in, a tool is attaching: ibsim aborted when a
// client left mid-attach.
func TestFaultSIGINTBursts(t *testing.T) {
	f := faultTree(t)
	tools := []*timedTool{
		{name: "smpquery", args: []string{"-D", "nodeinfo", "0"}},
		{name: "ibnetdiscover"},
		{name: "saquery", args: []string{"NR"}},
		{name: "smpquery", args: []string{"-D", "portinfo", "0,1", "1"}},
	}
	for _, tt := range tools {
		tt.measure(t, f)
	}
	burst := simfabric.SignalEvents(syscall.SIGINT, 100, 0, 20*time.Millisecond)
	for i := range 12 {
		tt := tools[i%len(tools)]
		// Start the burst a little later each run, so the first SIGINT
		// lands at every stage of the start.
		shift := time.Duration(i) * 1500 * time.Microsecond
		events := make([]simfabric.Event, len(burst))
		for j, e := range burst {
			e.At += shift
			events[j] = e
		}
		r, err := f.RunIbtoolTimed(context.Background(), ibtoolBin, faultHost, events, tt.name, tt.args...)
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("run %d (%s, SIGINTs from %v)", i, tt, shift)
		switch {
		case r.Signal == syscall.SIGINT:
			// Killed before it caught SIGINT, or caught it, ended and
			// raised it again: what it printed before the signal is
			// right, and nothing follows.
			if want := tt.name + ": interrupted by SIGINT\n"; len(r.Stderr) > 0 && string(r.Stderr) != want {
				t.Errorf("%s: stderr %q, want %q or nothing", what, r.Stderr, want)
			}
			if got := dropGenerated(r.Stdout); !bytes.HasPrefix(tt.want, got) {
				t.Errorf("%s: output is not a start of the fault-free run's:\n%s", what, simfabric.Diff(tt.want, got))
			}
		case r.Exit == 0:
			// Done before the burst (a signal sent as the process
			// exited counts as sent).
			if got := dropGenerated(r.Stdout); !bytes.Equal(got, tt.want) {
				t.Errorf("%s: exit 0 with output that differs from the fault-free run:\n%s", what, simfabric.Diff(tt.want, got))
			}
		default:
			t.Errorf("%s: exit %d, signal %v; want death by SIGINT or the fault-free result\n%s", what, r.Exit, r.Signal, r.Stderr)
		}
		if d := r.AfterSignal(); d > time.Second {
			t.Errorf("%s: ended %v after the first SIGINT, want within 1 s", what, d)
		}
	}
	checkSimulatorFine(t, f)
}

// TestFaultSimulatorDies kills ibsim half way through fabric-wide tools:
// each ends within one MAD timeout, with one line that says ibsim has
// gone, and none of the per-node errors that followed from it.
func TestFaultSimulatorDies(t *testing.T) {
	tools := []*timedTool{
		{name: "ibqueryerrors", args: []string{"--skip-sl", "-t", "300"}},
		{name: "dump_mfts", args: []string{"-t", "300"}},
		{name: "ibchecknet", args: []string{"-t", "300"}},
	}
	for _, tt := range tools {
		t.Run(tt.String(), func(t *testing.T) {
			f := faultTree(t)
			tt.measure(t, f)
			at := tt.took / 2
			r, err := f.RunIbtoolTimed(context.Background(), ibtoolBin, faultHost,
				[]simfabric.Event{{At: at, Do: f.KillSimulator, Name: "kill ibsim"}}, tt.name, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("fault-free run %v; ibsim killed at %v; ended at %v, exit %d", tt.took, at, r.Ended, r.Exit)
			if r.Exit == 0 && bytes.Equal(dropGenerated(r.Stdout), tt.want) {
				return // done before ibsim died
			}
			// Killed before the tool attached, it cannot connect.
			gone := regexp.MustCompile(`has gone|connection refused \(is ibsim running`)
			if r.Exit != 3 || bytes.Count(r.Stderr, []byte("\n")) != 1 || !gone.Match(r.Stderr) {
				t.Errorf("exit %d with stderr:\n%s\nwant exit 3 and one line saying ibsim has gone", r.Exit, r.Stderr)
			}
			if d := r.Ended - at; d > 300*time.Millisecond+time.Second {
				t.Errorf("ended %v after ibsim died, want within one timeout (300 ms) and a second", d)
			}
		})
	}
}
