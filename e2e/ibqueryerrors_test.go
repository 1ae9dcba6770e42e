package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// errorsFabric is the two-switch fabric with error counters set on a few
// ports; prepare sets them again before each run (-k clears them).
func errorsFabric(t *testing.T) (*simfabric.Fabric, func()) {
	t.Helper()
	return countersFabric(t, simfabric.Net2sw2path4hca, []counterSet{
		{"Switch1", 3, "PortCounters.SymbolErrorCounter", 15},
		{"Hca2", 1, "PortCounters.PortRcvErrors", 3},
		{"Switch2", 1, "PortCounters.PortXmitDiscards", 1},
		{"Hca3", 1, "PortCounters.LinkDownedCounter", 11},
		{"Switch2", 5, "PortCounters.PortRcvSwitchRelayErrors", 2},
	})
}

// trafficCounters masks the data counters, which the tools' own MADs move.
var trafficCounters = regexp.MustCompile(`\[Port(Unicast|Multicast)?(Xmit|Rcv)(Data|Pkts) == \d+ \([^)]*\)\]`)

// sameFindings is compareExit for ibqueryerrors with the data counters
// masked, after prepare.
func sameFindings(t *testing.T, f *simfabric.Fabric, host string, prepare func(), wantExit int, args ...string) {
	t.Helper()
	mask := func(b []byte) []byte { return trafficCounters.ReplaceAll(b, []byte("[X]")) }
	compareExitMasked(t, f, host, prepare, mask, wantExit, "ibqueryerrors", args...)
}

func TestIbqueryerrorsMatchesReference(t *testing.T) {
	f, prepare := errorsFabric(t)
	thres := filepath.Join(t.TempDir(), "thresholds")
	if err := os.WriteFile(thres, []byte("# mine\nSymbolErrorCounter=20\nLinkDownedCounter=0x5\nPortRcvErrors=010\nBogus=1\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{}, {"-c"}, {"-r"}, {"--details"}, {"-s", "PortXmitDiscards,SymbolErrorCounter"}, {"-s", "PortXmitDiscards", "-s", "LinkDownedCounter,nonsense"},
		{"--switch"}, {"--ca", "-r"}, {"--router"}, {"-G", "0x100004"}, {"-D", "0,1"}, {"--skip-sl", "-c", "-r"},
		{"--threshold-file", thres}, {"--threshold-file", "/nonexistent"}, {"--data"}, {"--data", "-r", "--details"},
		{"--counters"}, {"--counters", "--switch", "-r"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			want := 1
			if contains(args, "--counters") || contains(args, "--router") {
				want = 0
			}
			sameFindings(t, f, "Hca1", prepare, want, args...)
		})
	}
	t.Run("clear", func(t *testing.T) {
		prepare()
		ctx := context.Background()
		if _, _, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibqueryerrors", "-k", "-K"); err != nil || exit != 1 {
			t.Fatalf("ibqueryerrors -k -K: exit %d, %v", exit, err)
		}
		out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibqueryerrors")
		if err != nil || exit != 0 || !bytes.Contains(out, []byte("0 bad nodes found")) {
			t.Errorf("after -k -K: exit %d, %v, stdout %q, stderr %q; want no errors", exit, err, out, errOut)
		}
	})
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestIbqueryerrorsSADiscovery: with --discovery sa the reports come in
// infiniband-diags' order and say the same, for errors spread over a fat
// tree of dual-port hosts. Without -r ibtool leaves the PortInfoRecords
// out of the SA discovery; with -r it reads them.
func TestIbqueryerrorsSADiscovery(t *testing.T) {
	if testing.Short() {
		t.Skip("a fabric of its own: not with -short")
	}
	net, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 2, Hosts: 40, Radix: 12, HostPorts: 2})
	if err != nil {
		t.Fatal(err)
	}
	f, prepare := countersFabric(t, net, []counterSet{
		{"S-spine-2", 3, "PortCounters.SymbolErrorCounter", 15},
		{"S-leaf-7", 1, "PortCounters.PortXmitDiscards", 4},
		{"S-leaf-2", 6, "PortCounters.PortRcvErrors", 2},
		{"H-0031", 1, "PortCounters.LinkDownedCounter", 3},
		{"H-0003", 1, "PortCounters.PortRcvErrors", 9},
		{"H-0018", 1, "PortCounters.SymbolErrorCounter", 1},
	})
	mask := func(b []byte) []byte { return trafficCounters.ReplaceAll(b, []byte("[X]")) }
	for _, args := range [][]string{{}, {"-r"}, {"--details"}, {"--switch"}, {"--ca", "-r"}, {"--data"}, {"--ca"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			prepare()
			ref := run(t, "ibqueryerrors", func(ctx context.Context) ([]byte, []byte, int, error) {
				return f.RunReference(ctx, "H-0011", "ibqueryerrors", args...)
			})
			prepare()
			got := run(t, "ibtool ibqueryerrors --discovery sa", func(ctx context.Context) ([]byte, []byte, int, error) {
				return f.RunIbtool(ctx, ibtoolBin, "H-0011", "ibqueryerrors", append([]string{"--discovery", "sa"}, args...)...)
			})
			if ref.exit != 1 || got.exit != 1 {
				t.Fatalf("exit %d (infiniband-diags %d), want 1; stderr %q", got.exit, ref.exit, got.stderr)
			}
			if want, have := mask(ref.stdout), mask(got.stdout); !bytes.Equal(want, have) {
				t.Errorf("differs from infiniband-diags (-want +got):\n%s", simfabric.Diff(want, have))
			}
		})
	}
}
