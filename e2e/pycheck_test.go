package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// python-rdma's options of the ibcheck* scripts (libibtool/errors.py):
// -D/-L on the per-node checks, -T (python-rdma's threshold file) and
// --up on the fabric-wide ones, -s on ibdatacounts. The fabric is
// ibcheckFabric's: counters set with PerformanceSet, among them 15 symbol
// errors on Switch1 port 3 and 3 receive errors on Hca2 port 1.

// switch1LID is Switch1's LID as smpquery reads it down the path 0,1 from
// Hca1.
func switch1LID(t *testing.T, f *simfabric.Fabric) string {
	t.Helper()
	out, _, _, err := f.RunReference(context.Background(), "Hca1", "smpquery", "-D", "portinfo", "0,1", "0")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^Lid:\.+(\d+)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no LID in smpquery's output %q", out)
	}
	return string(m[1])
}

func TestPyCheckOptions(t *testing.T) {
	f, prepare := ibcheckFabric(t)
	bin := ibdiagsScripts(t, t.TempDir())
	lid := switch1LID(t, f)
	ctx := context.Background()
	run := func(t *testing.T, args ...string) ([]byte, int) {
		t.Helper()
		out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", args[0], args[1:]...)
		if err != nil {
			t.Fatal(err)
		}
		// ibchecknet exits with its count of problems, the per-node
		// checks 255 on a failure; never usage.
		if exit == 2 {
			t.Errorf("%q: exit %d, stderr %q", args, exit, errOut)
		}
		return out, exit
	}

	t.Run("-D is the script with the LID", func(t *testing.T) {
		// ibtool given the path prints what the script prints given the
		// LID the path ends at.
		for _, c := range [][]string{
			{"ibchecknode", "-v", "-N", ""}, {"ibcheckport", "-v", "-N", "", "1"}, {"ibcheckportstate", "-v", "", "3"},
			{"ibcheckportwidth", "-v", "-N", "", "2"}, {"ibcheckerrs", "-N", "", "3"}, {"ibcheckerrs", "-v", "-N", ""},
			{"ibdatacounts", "-v", "-N", "", "1"},
		} {
			script := replaceEmpty(c, lid)
			ours := append([]string{c[0], "-D"}, replaceEmpty(c, "0,1")[1:]...)
			want, _, wantExit, err := f.RunReference(ctx, "Hca1", filepath.Join(bin, c[0]), script[1:]...)
			if err != nil {
				t.Fatal(err)
			}
			got, gotExit := run(t, ours...)
			mask := scriptMask(bin)
			if gotExit != wantExit || !bytes.Equal(mask(want), mask(got)) {
				t.Errorf("ibtool %q (exit %d) vs the script %q (exit %d) (-want +got):\n%s", ours, gotExit, script, wantExit, simfabric.Diff(mask(want), mask(got)))
			}
		}
	})

	t.Run("-T flags a counter set with PerformanceSet", func(t *testing.T) {
		prepare()
		// python-rdma's file: its names, its spacing; these thresholds
		// alone, a counter failing above its threshold.
		th := filepath.Join(t.TempDir(), "th")
		if err := os.WriteFile(th, []byte("# python-rdma\nportRcvErrors = 2\nSymbolErrors = 15\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tool := range []string{"ibcheckerrors", "ibchecknet"} {
			out, _ := run(t, tool, "-N", "-T", th)
			if !regexp.MustCompile(`#warn: counter PortRcvErrors = 3 \t\(threshold 2\) lid \d+ port 1\n`).Match(out) {
				t.Errorf("%s -T: Hca2's 3 receive errors not flagged:\n%s", tool, out)
			}
			// 15 symbol errors are not above 15; the default thresholds
			// (LinkDownedCounter's 10 against Hca3's 11, PortXmitDiscards'
			// 100 against Switch2's 200) are not in the file.
			for _, not := range []string{"SymbolErrorCounter", "LinkDownedCounter", "PortXmitDiscards"} {
				if bytes.Contains(out, []byte(not)) {
					t.Errorf("%s -T: %s flagged:\n%s", tool, not, out)
				}
			}
		}
		out, _ := run(t, "ibcheckerrors", "-N")
		if !bytes.Contains(out, []byte("LinkDownedCounter = 11")) || bytes.Contains(out, []byte("PortRcvErrors = 3")) {
			t.Errorf("ibcheckerrors without -T: want the script's thresholds:\n%s", out)
		}
		out, _ = run(t, "ibdatacounts", "-T", th, "-s")
		if string(out) != "portRcvErrors=2\nsymbolErrorCounter=15\n" {
			t.Errorf("ibdatacounts -T -s: %q", out)
		}
	})

	t.Run("--up leaves out a link pulled since discovery", func(t *testing.T) {
		topo := filepath.Join(t.TempDir(), "topo")
		out, _, _, err := f.RunReference(ctx, "Hca1", "ibnetdiscover")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(topo, out, 0o644); err != nil {
			t.Fatal(err)
		}
		// One of the two links between the switches: the fabric stays
		// whole, both ends go Polling.
		uctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := f.Unlink(uctx, simfabric.Port("Switch1", 5)); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := f.ReLink(uctx, simfabric.Port("Switch1", 5)); err != nil {
				t.Error(err)
			}
			f.WaitActive(uctx)
		}()
		if err := f.WaitActive(uctx); err != nil {
			t.Fatal(err)
		}
		down := regexp.MustCompile(`#error: Physical link state is Polling  lid \d+ port 5\n`)
		all, _ := run(t, "ibcheckstate", "-N", topo)
		up, _ := run(t, "ibcheckstate", "-N", "--up", topo)
		if n := len(down.FindAll(all, -1)); n != 2 {
			t.Errorf("ibcheckstate: %d Polling ports, want 2:\n%s", n, all)
		}
		if down.Match(up) || !bytes.Contains(up, []byte("ports checked, 0 ports with bad state found")) {
			t.Errorf("ibcheckstate --up: the pulled link is still checked:\n%s", up)
		}
		ports := regexp.MustCompile(`(\d+) ports checked`)
		if a, u := ports.FindSubmatch(all), ports.FindSubmatch(up); a == nil || u == nil || checkedPorts(a[1])-checkedPorts(u[1]) != 2 {
			t.Errorf("ibcheckstate --up: want 2 ports fewer checked:\n%s\n%s", all, up)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad")
		if err := os.WriteFile(bad, []byte("NoSuchCounter = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			msg  string
			args []string
		}{
			{`-D given but "` + lid + `" is a LID`, []string{"ibchecknode", "-D", lid}},
			{`-L given but "0,1" is a DR path`, []string{"ibcheckerrs", "-L", "0,1"}},
			{`threshold key "NoSuchCounter" is not known`, []string{"ibcheckerrors", "-T", bad}},
		} {
			out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", c.args[0], c.args[1:]...)
			if err != nil || exit != 2 || len(out) != 0 || !strings.Contains(string(errOut), c.msg) {
				t.Errorf("%q: exit %d, %v, stdout %q, stderr %q; want exit 2 and %q", c.args, exit, err, out, errOut, c.msg)
			}
		}
	})
}

// checkedPorts is a summary's count of ports checked.
func checkedPorts(b []byte) int {
	n, _ := strconv.Atoi(string(b))
	return n
}

// replaceEmpty returns args with "" (the target's place) made target.
func replaceEmpty(args []string, target string) []string {
	out := append([]string{}, args...)
	for i, a := range out {
		if a == "" {
			out[i] = target
		}
	}
	return out
}
