package e2e

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// TestIbswportwatchMatchesScript runs infiniband-diags' ibswportwatch.pl
// and ibtool's on a switch port whose error counters move between the
// two polls (set through ibsim's console half-way), and compares what
// they print. The script prints its rate lines in Perl's hash order, which
// changes from run to run, so the lines are compared sorted; the data
// counters, which the tools' own MADs move, are masked.
func TestIbswportwatchMatchesScript(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	bin := ibdiagsScripts(t, t.TempDir())
	port := simfabric.Port("Switch1", 3) // LID 1 port 3
	set := func(ctx context.Context, symbol, rcv uint64) {
		t.Helper()
		if err := f.PerformanceSet(ctx, port, "PortCounters.SymbolErrorCounter", symbol); err != nil {
			t.Fatal(err)
		}
		if err := f.PerformanceSet(ctx, port, "PortCounters.PortRcvErrors", rcv); err != nil {
			t.Fatal(err)
		}
	}
	data := regexp.MustCompile(`(?m)^(   (PortXmitData|PortRcvData|PortXmitPkts|PortRcvPkts)\s+)\d+ ==> \d+$|^   [0-9.e+-]+ (Port\w+)/second$`)
	mask := func(b []byte) []string {
		b = data.ReplaceAll(b, []byte("$1$3 N"))
		lines := strings.Split(string(b), "\n")
		slices.Sort(lines)
		return lines
	}
	// run runs one of the two with the counters moving 1 s into its 2 s
	// pause: SymbolErrorCounter by 30 (15 a second, excessive), PortRcvErrors
	// by 4 (2 a second).
	run := func(ref bool, args ...string) ([]byte, []byte, int) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		set(ctx, 100, 7)
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(time.Second)
			set(ctx, 130, 11)
		}()
		var out, errOut []byte
		var exit int
		var err error
		if ref {
			out, errOut, exit, err = f.RunReference(ctx, "Hca1", bin+"/ibswportwatch", args...)
		} else {
			out, errOut, exit, err = f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibswportwatch", args...)
		}
		<-done
		if err != nil {
			t.Fatal(err)
		}
		return out, errOut, exit
	}
	for _, args := range [][]string{
		{"-p", "2", "-n", "1", "1", "3"},
		{"-p", "2", "-n", "1", "-b", "-v", "1", "3"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			want, wantErr, wantExit := run(true, args...)
			got, gotErr, gotExit := run(false, args...)
			if gotExit != wantExit || wantExit != 0 {
				t.Fatalf("exit %d, the script %d (stderr %q, the script's %q)", gotExit, wantExit, gotErr, wantErr)
			}
			if !bytes.Contains(got, []byte("Detected excessive rate for SymbolErrorCounter (15 cnts/sec)\nDetected rate for PortRcvErrors (2 cnts/sec)\n")) {
				t.Errorf("ibtool printed no rates:\n%s", got)
			}
			if w, g := mask(want), mask(got); !slices.Equal(w, g) {
				t.Errorf("the lines differ (sorted, masked):\n%s", simfabric.Diff([]byte(strings.Join(w, "\n")), []byte(strings.Join(g, "\n"))))
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, "the pause is a number of seconds above 0", "ibswportwatch", "-p", "0", "1", "3")
		ibtoolFails(t, f, "Hca1", 2, "--json prints one document at the end: give -n", "ibswportwatch", "--json", "1", "3")
		ibtoolFails(t, f, "Hca1", 3, "lid 99: address resolution failed", "ibswportwatch", "-p", "0.1", "-n", "1", "99", "3")
	})
}
