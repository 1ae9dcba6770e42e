package simfabric

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad/ibsim"
)

func TestMain(m *testing.M) { Main(m) }

const smallNet = "testdata/net.2sw2path4hca"

// ctxFor returns a context that ends a little before the test's deadline.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// ibstatPort runs the reference ibstat at host and returns its output,
// failing t unless it exits 0.
func ibstatPort(t *testing.T, f *Fabric, host string) string {
	t.Helper()
	out, errOut, code, err := f.RunReference(ctxFor(t, 30*time.Second), host, "ibstat")
	if err != nil || code != 0 {
		t.Fatalf("ibstat at %s: exit %d, err %v, stderr:\n%s", host, code, err, errOut)
	}
	return string(out)
}

func TestIntegrationIbstat(t *testing.T) {
	f := ForTest(t, Options{Net: Net2sw2path4hca})
	out := ibstatPort(t, f, "Hca1")
	for _, want := range []string{"CA 'ibsim0'", "State: Active", "Physical state: LinkUp", "Node GUID: 0x0000000000100000"} {
		if !strings.Contains(out, want) {
			t.Errorf("ibstat at Hca1: no %q in:\n%s", want, out)
		}
	}
}

func TestIntegrationDump(t *testing.T) {
	f := ForTest(t, Options{Net: Net2sw2path4hca})
	ports, err := f.Dump(ctxFor(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ports {
		if p.Linked() {
			got = append(got, p.PortRef.String()+"-"+p.Remote.String()+" "+p.State)
		}
	}
	want := []string{
		`"Switch1"[1]-"Hca1"[1] Active`, `"Switch1"[2]-"Hca3"[1] Active`,
		`"Switch1"[3]-"Switch2"[3] Active`, `"Switch1"[5]-"Switch2"[5] Active`,
		`"Switch2"[1]-"Hca2"[1] Active`, `"Switch2"[2]-"Hca4"[1] Active`,
		`"Switch2"[3]-"Switch1"[3] Active`, `"Switch2"[5]-"Switch1"[5] Active`,
		`"Hca1"[1]-"Switch1"[1] Active`, `"Hca2"[1]-"Switch2"[1] Active`,
		`"Hca3"[1]-"Switch1"[2] Active`, `"Hca4"[1]-"Switch2"[2] Active`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected links (-want +got):\n%s", diff)
	}
}

func TestIntegrationConsoleErrors(t *testing.T) {
	f := ForTest(t, Options{Net: Net2sw2path4hca})
	ctx := ctxFor(t, 30*time.Second)
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"unknown node", func() error { return f.Unlink(ctx, Port("NoSuchNode", 1)) }, `nodeid "NoSuchNode"`},
		{"bad port", func() error { return f.SetErrorRate(ctx, Port("Hca1", 9), 10, 0) }, "bad port number 9"},
		{"bad counter", func() error {
			return f.PerformanceSet(ctx, Port("Hca1", 1), "PortCounters.NoSuchCounter", 1)
		}, "NoSuchCounter"},
		{"two lines", func() error { _, err := f.Console(ctx, "Dump\nQuit"); return err }, "one line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
	// The fabric is untouched.
	if err := f.WaitActive(ctx); err != nil {
		t.Error(err)
	}
}

func TestIntegrationPerformanceSet(t *testing.T) {
	f := StartForTest(t, Options{NetFile: smallNet})
	ctx := ctxFor(t, 60*time.Second)
	if err := f.PerformanceSet(ctx, Port("Switch1", 1), "PortCounters.SymbolErrorCounter", 5); err != nil {
		t.Fatal(err)
	}
	// perfquery LID PORT: Switch1 has LID 1 on this fabric? Ask ibsim.
	lid := lidOf(t, f, "Switch1", 0)
	out, errOut, code, err := f.RunReference(ctx, "Hca1", "perfquery", lid, "1")
	if err != nil || code != 0 {
		t.Fatalf("perfquery: exit %d, err %v, stderr:\n%s", code, err, errOut)
	}
	if !strings.Contains(string(out), "SymbolErrorCounter:..............5") {
		t.Errorf("perfquery %s 1: SymbolErrorCounter is not 5:\n%s", lid, out)
	}
}

// lidOf returns the LID of port n of node, as ibsim's Dump has it.
func lidOf(t *testing.T, f *Fabric, node string, n int) string {
	t.Helper()
	ports, err := f.Dump(ctxFor(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if p.PortRef == Port(node, n) {
			return strconv.Itoa(p.LID)
		}
	}
	t.Fatalf("no port %s in Dump", Port(node, n))
	return ""
}

func TestIntegrationUnlink(t *testing.T) {
	f := StartForTest(t, Options{NetFile: smallNet})
	ctx := ctxFor(t, 90*time.Second)
	hca := Port("Hca1", 1)

	if err := f.Unlink(ctx, hca); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	out := ibstatPort(t, f, "Hca1")
	for _, want := range []string{"State: Down", "Physical state: Polling"} {
		if !strings.Contains(out, want) {
			t.Errorf("ibstat after Unlink %s: no %q in:\n%s", hca, want, out)
		}
	}
	wantDown(t, f, Port("Switch1", 1))

	if err := f.ReLink(ctx, hca); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	if out := ibstatPort(t, f, "Hca1"); !strings.Contains(out, "State: Active") {
		t.Errorf("ibstat after ReLink %s: not Active:\n%s", hca, out)
	}

	// Again with an explicit Link, to the other switch's free port.
	if err := f.Unlink(ctx, hca); err != nil {
		t.Fatal(err)
	}
	if err := f.Link(ctx, hca, Port("Switch2", 4)); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	if out := ibstatPort(t, f, "Hca1"); !strings.Contains(out, "State: Active") {
		t.Errorf("ibstat after Link %s: not Active:\n%s", hca, out)
	}
}

// wantDown checks that ibsim reports port p Down.
func wantDown(t *testing.T, f *Fabric, p PortRef) {
	t.Helper()
	ports, err := f.Dump(ctxFor(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ports {
		if s.PortRef == p {
			if s.State != "Down" || s.Linked() {
				t.Errorf("port %s: %s/%s linked to %s, want Down and unlinked", p, s.State, s.PhysState, s.Remote)
			}
			return
		}
	}
	t.Errorf("no port %s in Dump", p)
}

func TestIntegrationRunIbtool(t *testing.T) {
	f := ForTest(t, Options{Net: Net2sw2path4hca})
	// A stand-in for ibtool that shows what it was given.
	bin := filepath.Join(t.TempDir(), "fake-ibtool")
	script := "#!/bin/sh\necho \"$* $IBSIM_SOCKNAME $SIM_HOST ${LD_PRELOAD:-none}\"; pwd; exit 3\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out, _, code, err := f.RunIbtool(ctxFor(t, 30*time.Second), bin, "Hca2", "ibstat", "-l")
	if err != nil {
		t.Fatal(err)
	}
	if code != 3 {
		t.Errorf("exit %d, want 3", code)
	}
	lines := strings.Split(string(out), "\n")
	if want := "ibstat -l " + f.SockName() + " Hca2 none"; lines[0] != want {
		t.Errorf("got %q, want %q", lines[0], want)
	}
	if len(lines) < 2 || !strings.HasPrefix(lines[1], filepath.Join(f.Dir(), runsDir)) {
		t.Errorf("ran in %q, want a directory under %s", lines[1:], f.Dir())
	}
}

// TestIntegrationKilledClient checks that a client killed on timeout gives
// its ibsim slot back.
func TestIntegrationKilledClient(t *testing.T) {
	f := ForTest(t, Options{Net: Net2sw2path4hca})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// ibsysstat -S serves forever.
	_, _, _, err := f.RunReference(ctx, "Hca2", "ibsysstat", "-S")
	if err == nil {
		t.Fatal("ibsysstat -S returned without error before its deadline")
	}
	reply, err := f.Console(ctxFor(t, 10*time.Second), "Attached")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(reply, "Client "); n != 1 {
		t.Errorf("%d clients attached, want only opensm:\n%s", n, reply)
	}
}

// fatTreeTest starts a generated fat tree, checks that it is up and that a
// host sees its port Active, and logs the times.
func fatTreeTest(t *testing.T, spec FatTreeSpec) {
	if testing.Short() {
		t.Skip("big fabric")
	}
	net, err := FatTree(spec)
	if err != nil {
		t.Fatal(err)
	}
	f := StartForTest(t, Options{Net: net})
	c := f.Net().Counts()
	t.Logf("%d-level fat tree, %d hosts, radix %d: %d nodes (%d switches), %d cabled ports; up in %v",
		spec.Levels, spec.Hosts, spec.Radix, c.Nodes, c.Switches, c.Links, f.Timing())
	last := f.Net().Nodes[len(f.Net().Nodes)-1].ID
	if out := ibstatPort(t, f, last); !strings.Contains(out, "State: Active") {
		t.Errorf("ibstat at %s: not Active:\n%s", last, out)
	}
}

func TestIntegrationFatTree2Level(t *testing.T) {
	fatTreeTest(t, FatTreeSpec{Levels: 2, Hosts: 200, Radix: 36})
}

func TestIntegrationFatTree3Level(t *testing.T) {
	fatTreeTest(t, FatTreeSpec{Levels: 3, Hosts: 1000, Radix: 36})
}

func TestIntegrationBadNet(t *testing.T) {
	requireBench(t)
	// Both ends parse, but they disagree: ibsim refuses to connect them.
	net := []byte("Switch 2 \"S\"\n[1] \"H\"[1]\n\nHca 1 \"H\"\n[1] \"S\"[2]\n")
	f, err := Start(ctxFor(t, 30*time.Second), Options{Net: net})
	if err == nil {
		f.Stop()
		t.Fatal("Start succeeded on an inconsistent net file")
	}
	for _, want := range []string{"ibsim (pid", "exited", "last lines of ibsim.log", `remote port 1 in node "H" is not connected to node "S" port 1`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	dir := strings.Fields(strings.TrimPrefix(err.Error(), "simfabric: starting fabric in "))[0]
	if _, statErr := os.Stat(strings.TrimSuffix(dir, ":")); !os.IsNotExist(statErr) {
		t.Errorf("fabric directory %s left behind (%v)", dir, statErr)
	}

	// A net file error is caught before ibsim runs.
	_, err = Start(ctxFor(t, 30*time.Second), Options{Net: []byte("Hca 1 \"H\"\n[2] \"S\"[1]\n")})
	if !errors.Is(err, ErrNetSyntax) {
		t.Errorf("got %v, want an ErrNetSyntax", err)
	}
}

func TestIntegrationAttach(t *testing.T) {
	requireBench(t)
	f, err := Start(ctxFor(t, 30*time.Second), Options{Net: Net2sw2path4hca, Detach: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	g, err := Attach(f.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if g.SockName() != f.SockName() || g.SMNode() != "Switch1" || len(g.Net().Nodes) != 6 {
		t.Errorf("attached fabric: sock %q, SM %q, %d nodes", g.SockName(), g.SMNode(), len(g.Net().Nodes))
	}
	ctx := ctxFor(t, 30*time.Second)
	// A link change made through one handle is waited for through the other.
	if err := g.Unlink(ctx, Port("Hca2", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.Dir(), sweepMark)); err != nil {
		t.Errorf("no sweep mark after Unlink: %v", err)
	}
	if err := f.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.Dir(), sweepMark)); !os.IsNotExist(err) {
		t.Errorf("sweep mark left after WaitActive: %v", err)
	}
	ibsim, opensm := f.PIDs()
	if err := g.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{ibsim, opensm} {
		if (&proc{name: "x", pid: pid}).isOurs() {
			t.Errorf("pid %d still running after Stop", pid)
		}
	}
	if _, err := os.Stat(f.Dir()); !os.IsNotExist(err) {
		t.Errorf("fabric directory left after Stop: %v", err)
	}
	if _, err := g.Console(ctx, "Dump"); err == nil {
		t.Errorf("Console on a stopped fabric: got %v, want an error", err)
	}
}

// TestIntegrationLinkChurn cuts and restores one link over and over, as a
// fault test does. opensm ignores a switch's eleventh trap within 5 s of
// its last, so from the sixth cycle on a link change brings no sweep:
// WaitActive must make opensm sweep rather than wait for a SUBNET UP that
// never comes. A ReLink with nothing to relink changes nothing, and
// WaitActive returns at once.
func TestIntegrationLinkChurn(t *testing.T) {
	f := StartForTest(t, Options{NetFile: smallNet})
	ctx := ctxFor(t, 3*time.Minute)
	link := Port("Switch1", 3)
	sweeps := func() int {
		data, err := os.ReadFile(filepath.Join(f.Dir(), osmLog))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(data), "SUBNET UP")
	}
	for i := 1; i <= 7; i++ {
		for _, change := range []func(context.Context, PortRef) error{f.Unlink, f.ReLink} {
			before := sweeps()
			if err := change(ctx, link); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			t0 := time.Now()
			err := f.WaitActive(wctx)
			cancel()
			if err != nil {
				t.Fatalf("cycle %d: %v", i, err)
			}
			if sweeps() == before {
				t.Errorf("cycle %d: WaitActive returned after %v, before opensm swept", i, time.Since(t0))
			}
			t.Logf("cycle %d: settled in %v", i, time.Since(t0).Round(time.Millisecond))
		}
	}

	reply, err := f.Console(ctx, `ReLink "Switch1"`)
	if err != nil || checkReply("ReLink", reply) != nil {
		t.Fatalf("ReLink of a switch with nothing to relink: %q, %v", reply, err)
	}
	t0 := time.Now()
	if err := f.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 500*time.Millisecond {
		t.Errorf("WaitActive after a ReLink that changed nothing took %v", d)
	}
}

// TestIntegrationReleaseKeepsLiveClients checks that freeing dead clients'
// slots leaves alone a live process's second client, whose id ibsim shows
// as its pid plus a counter above bit 22.
func TestIntegrationReleaseKeepsLiveClients(t *testing.T) {
	f := StartForTest(t, Options{NetFile: smallNet})
	ctx := ctxFor(t, 30*time.Second)
	for range 2 {
		c, err := ibsim.Dial(ctx, ibsim.Config{SockName: f.SockName(), Host: "Hca1"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	if err := f.releaseDeadClients(ctx); err != nil {
		t.Fatal(err)
	}
	reply, err := f.Console(ctx, "Attached")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(reply, "Client "); n != 3 {
		t.Errorf("%d clients attached, want opensm and this process's two:\n%s", n, reply)
	}
}
