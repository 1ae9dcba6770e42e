package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// The programs of examples/ are built from their own module, which
// requires github.com/ibtool/ibtool with a replace to this checkout, as a
// user's program would, and run on the simulated fabric; what they print
// is checked against what ibtool's tools print on the same fabric.

var examples struct {
	once sync.Once
	dir  string
	err  error
}

// exampleBin builds every program of examples/ once and returns the path
// of the one named. The examples' go.mod and go.sum are copied to a
// scratch directory (-modfile), so that a main module whose requirements
// moved on updates the copy and never the checkout.
func exampleBin(t *testing.T, name string) string {
	t.Helper()
	examples.once.Do(func() { examples.dir, examples.err = buildExamples() })
	if examples.err != nil {
		t.Fatal(examples.err)
	}
	return filepath.Join(examples.dir, name)
}

func buildExamples() (string, error) {
	dir, err := os.MkdirTemp("", "ibtool-examples-")
	if err != nil {
		return "", err
	}
	src, err := filepath.Abs("../examples")
	if err != nil {
		return "", err
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return "", err
		}
	}
	goCmd := func(args ...string) ([]byte, error) {
		c := exec.Command("go", append([]string{args[0], "-mod=mod", "-modfile=" + filepath.Join(dir, "go.mod")}, args[1:]...)...)
		c.Dir = src
		out, err := c.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("go %s in examples/: %w\n%s", strings.Join(args, " "), err, out)
		}
		return out, nil
	}
	deps, err := goCmd("list", "-deps", "./...")
	if err != nil {
		return "", err
	}
	for _, p := range strings.Fields(string(deps)) {
		if strings.HasPrefix(p, "github.com/ibtool/ibtool/internal/") || strings.HasPrefix(p, "github.com/ibtool/ibtool/cmd/") {
			return "", fmt.Errorf("examples/ uses %s: a user's program cannot", p)
		}
	}
	if _, err := goCmd("build", "-o", dir+string(filepath.Separator), "./..."); err != nil {
		return "", err
	}
	return dir, nil
}

// runOn runs a program attached at simHost and returns its standard
// output, failing t unless it exits 0 with nothing on standard error.
func runOn(t *testing.T, f *simfabric.Fabric, simHost, bin string, args ...string) []byte {
	t.Helper()
	r := run(t, filepath.Base(bin), func(ctx context.Context) ([]byte, []byte, int, error) {
		return f.RunCommand(ctx, simHost, bin, args...)
	})
	if r.exit != 0 || len(r.stderr) != 0 {
		t.Fatalf("%s %q at %s: exit %d, stderr %q", filepath.Base(bin), args, simHost, r.exit, r.stderr)
	}
	return r.stdout
}

// dottedValue returns the value of a libibmad "Label:....value" line (or
// saquery's "\t\tlabel....value"), failing t when out has none.
func dottedValue(t *testing.T, out []byte, label string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(label) + `[:.]*\.+(\S.*)$`)
	m := re.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no %s in:\n%s", label, out)
	}
	return string(m[1])
}

// TestExamplePortinfo checks that portinfo prints, by LID and by directed
// route, what smpquery portinfo prints.
func TestExamplePortinfo(t *testing.T) {
	f := smallFabric(t)
	bin := exampleBin(t, "portinfo")
	tests := []struct{ args, smpquery []string }{
		{[]string{"2", "1"}, []string{"portinfo", "2", "1"}},
		{[]string{"3", "3"}, []string{"portinfo", "3", "3"}},
		{[]string{"0,1", "2"}, []string{"-D", "portinfo", "0,1", "2"}},
		{[]string{"0x0000000000100001"}, []string{"portinfo", "0x0000000000100001"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got := runOn(t, f, "Hca1", bin, tt.args...)
			want := runOn(t, f, "Hca1", ibtoolBin, append([]string{"smpquery"}, tt.smpquery...)...)
			if !bytes.Equal(want, got) {
				t.Errorf("portinfo differs from smpquery (-want +got):\n%s", simfabric.Diff(want, got))
			}
		})
	}
}

var (
	switchLine = regexp.MustCompile(`^(0x[0-9a-f]{16}) "([^"]*)" LID (\d+)$`)
	portLine   = regexp.MustCompile(`^  port (\d+) (\S+) (\S+), (\d+) symbol errors, to "([^"]*)" port (\d+)$`)
)

// TestExampleSwitches checks the switches, link states and symbol errors
// that switches lists against ibswitches, smpquery portinfo and
// perfquery, with symbol errors set on one port.
func TestExampleSwitches(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.PerformanceSet(ctx, simfabric.Port("Switch2", 3), "PortCounters.SymbolErrorCounter", 7); err != nil {
		t.Fatal(err)
	}
	out := runOn(t, f, "Hca1", exampleBin(t, "switches"))
	ibswitches := string(runOn(t, f, "Hca1", ibtoolBin, "ibswitches"))
	var lid string
	switches, ports, sevens := 0, 0, 0
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		if m := switchLine.FindStringSubmatch(line); m != nil {
			switches++
			lid = m[3]
			want := fmt.Sprintf("Switch\t: %s ports 8 %q base port 0 lid %s lmc 0", m[1], m[2], m[3])
			if !strings.Contains(ibswitches, want+"\n") {
				t.Errorf("switch line %q: ibswitches has no %q:\n%s", line, want, ibswitches)
			}
			continue
		}
		m := portLine.FindStringSubmatch(line)
		if m == nil || lid == "" {
			t.Fatalf("unexpected line %q in:\n%s", line, out)
		}
		ports++
		pi := runOn(t, f, "Hca1", ibtoolBin, "smpquery", "portinfo", lid, m[1])
		if got, want := m[2], dottedValue(t, pi, "LinkState"); got != want {
			t.Errorf("LID %s port %d: LinkState %s, smpquery says %s", lid, atoi(m[1]), got, want)
		}
		if got, want := m[3], dottedValue(t, pi, "PhysLinkState"); got != want {
			t.Errorf("LID %s port %d: PhysLinkState %s, smpquery says %s", lid, atoi(m[1]), got, want)
		}
		pc := runOn(t, f, "Hca1", ibtoolBin, "perfquery", lid, m[1])
		if got, want := m[4], dottedValue(t, pc, "SymbolErrorCounter"); got != want {
			t.Errorf("LID %s port %d: %s symbol errors, perfquery says %s", lid, atoi(m[1]), got, want)
		}
		if m[4] == "7" {
			sevens++
		}
	}
	if switches != 2 || ports != 8 || sevens != 1 {
		t.Errorf("%d switches, %d linked ports, %d with the 7 symbol errors set; want 2, 8, 1:\n%s", switches, ports, sevens, out)
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// TestExamplePathrecord checks the PathRecord pathrecord prints against
// saquery's for the same two port GUIDs.
func TestExamplePathrecord(t *testing.T) {
	f := smallFabric(t)
	bin := exampleBin(t, "pathrecord")
	for _, pair := range [][2]string{{"0x0000000000100001", "0x0000000000100007"}, {"0x0000000000100004", "0x000000000010000a"}} {
		t.Run(pair[0]+"-"+pair[1], func(t *testing.T) {
			out := runOn(t, f, "Hca1", bin, pair[0], pair[1])
			gid := func(g string) string {
				n, _ := strconv.ParseUint(g, 0, 64)
				return fmt.Sprintf("fe80::%x:%x", n>>16, n&0xffff)
			}
			sa := runOn(t, f, "Hca1", ibtoolBin, "saquery", "--sgid-to-dgid", gid(pair[0])+"-"+gid(pair[1]))
			field := func(label string, mask uint64) string {
				n, err := strconv.ParseUint(dottedValue(t, sa, label), 0, 64)
				if err != nil {
					t.Fatalf("saquery's %s: %v", label, err)
				}
				return strconv.FormatUint(n&mask, 10)
			}
			want := map[string]string{
				"SGID": dottedValue(t, sa, "sgid"), "DGID": dottedValue(t, sa, "dgid"),
				"SLID": field("slid", 0xffff), "DLID": field("dlid", 0xffff), "SL": field("sl", 0xf),
				"PKey": fmt.Sprintf("0x%04x", atoi(field("pkey", 0xffff))),
				"MTU":  field("mtu", 0x3f), "Rate": field("rate", 0x3f), "PacketLifeTime": field("pkt_life", 0x3f),
			}
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				k, v, _ := strings.Cut(line, " ")
				got[k] = v
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s %s, saquery says %s:\n%s", k, got[k], v, out)
				}
			}
		})
	}
}

// TestExampleWatchcounters checks that watchcounters starts from the
// counters perfquery -x reads and that its deltas count the packets sent
// through the port while it watches: directed-route SMPs from Hca1 to
// Hca3 cross Switch1's port 2 during the first interval.
func TestExampleWatchcounters(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	const sends = 5
	done := make(chan result, 1)
	bin := exampleBin(t, "watchcounters")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	go func() {
		out, errOut, exit, err := f.RunCommand(ctx, "Hca1", bin, "-n", "2", "-i", "2s", "1", "2")
		if err != nil {
			errOut, exit = []byte(err.Error()), -1
		}
		done <- result{out, errOut, exit}
	}()
	time.Sleep(300 * time.Millisecond)
	for range sends {
		runOn(t, f, "Hca1", ibtoolBin, "smpquery", "-D", "nodeinfo", "0,1,2")
	}
	if el := time.Since(start); el > 1800*time.Millisecond {
		t.Fatalf("the SMPs took until %v into the watch, past its first interval; the machine is too busy", el)
	}
	r := <-done
	if r.exit != 0 || len(r.stderr) != 0 {
		t.Fatalf("watchcounters: exit %d, stderr %q", r.exit, r.stderr)
	}
	out := r.stdout
	px := runOn(t, f, "Hca1", ibtoolBin, "perfquery", "-x", "1", "2")
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want the counters and 2 deltas:\n%s", len(lines), out)
	}
	abs := regexp.MustCompile(`^XmitData (\d+) RcvData (\d+) XmitPkts (\d+) RcvPkts (\d+)$`).FindStringSubmatch(lines[0])
	if abs == nil {
		t.Fatalf("unexpected first line %q", lines[0])
	}
	delta := regexp.MustCompile(`^\+XmitData (\d+) \+RcvData (\d+) \+XmitPkts (\d+) \+RcvPkts (\d+)$`)
	var sum [4]uint64
	for n, l := range lines[1:] {
		m := delta.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unexpected delta line %q", l)
		}
		for i := range sum {
			v, _ := strconv.ParseUint(m[i+1], 10, 64)
			sum[i] += v
			if n == 0 && i >= 2 && v < sends {
				t.Errorf("first delta %q: want at least %d packets each way, the SMPs sent", l, sends)
			}
		}
	}
	// perfquery reads after the watch, and its own MADs do not cross
	// the port: the watch's last counts are its counts.
	for i, label := range []string{"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"} {
		first, _ := strconv.ParseUint(abs[i+1], 10, 64)
		want, _ := strconv.ParseUint(dottedValue(t, px, label), 10, 64)
		if first+sum[i] != want {
			t.Errorf("%s: %d and deltas %d make %d, perfquery -x says %d", label, first, sum[i], first+sum[i], want)
		}
	}
}

// TestExampleTracecapture checks each queue pair and message
// tracecapture prints against ibtool trace --json on the same captures.
func TestExampleTracecapture(t *testing.T) {
	bin := exampleBin(t, "tracecapture")
	for _, capture := range []string{"rxe-read.pcap", "rxe-write.pcap", "rxe-send.pcap", "nfs-rxe-v3.pcap"} {
		t.Run(capture, func(t *testing.T) {
			path := filepath.Join("..", "pkg", "trace", "testdata", capture)
			got, err := exec.Command(bin, path).Output()
			if err != nil {
				t.Fatalf("tracecapture %s: %v", capture, err)
			}
			js, err := exec.Command(ibtoolBin, "trace", "--json", path).Output()
			if err != nil {
				t.Fatalf("ibtool trace --json %s: %v", capture, err)
			}
			var doc struct {
				Messages []struct {
					Index, Frame, Packets, Length int
					Op                            string
					QP, FirstPSN, LastPSN         uint32
					Src, Dst                      string
				}
				QueuePairs []struct {
					Src, Dst, Transport string
					QP                  uint32
					Messages            int
					Bytes               int64
				}
			}
			if err := json.Unmarshal(js, &doc); err != nil {
				t.Fatal(err)
			}
			var want strings.Builder
			for _, qp := range doc.QueuePairs {
				fmt.Fprintf(&want, "QP %d %s -> %s (%s): %d messages, %d bytes\n", qp.QP, qp.Src, qp.Dst, qp.Transport, qp.Messages, qp.Bytes)
				for _, m := range doc.Messages {
					if m.QP == qp.QP && m.Src == qp.Src && m.Dst == qp.Dst {
						fmt.Fprintf(&want, "  #%d frame %d %s PSN %d-%d, %d packets, %d bytes\n", m.Index, m.Frame, m.Op, m.FirstPSN, m.LastPSN, m.Packets, m.Length)
					}
				}
			}
			if len(doc.Messages) == 0 || !bytes.HasPrefix(got, []byte(want.String())) {
				t.Errorf("tracecapture differs from ibtool trace --json (-want +got):\n%s", simfabric.Diff([]byte(want.String()), got))
			}
		})
	}
}

// TestExampleRdmawriteBuilds checks only that rdmawrite builds (above):
// running it needs a kernel RDMA device, which the VM checks have.
func TestExampleRdmawriteBuilds(t *testing.T) {
	if _, err := os.Stat(exampleBin(t, "rdmawrite")); err != nil {
		t.Fatal(err)
	}
}
