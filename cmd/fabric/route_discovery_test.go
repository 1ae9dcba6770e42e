package fabric

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// smpLog counts the SMPs sent to a fake fabric, as "SMI-DR 0x0011"
// (class and attribute ID).
type smpLog struct {
	mu   sync.Mutex
	sent map[string]int
}

// transactor returns a transactor on ff that logs each request.
func (l *smpLog) transactor(ff *subnettest.Fabric) func() (*madrpc.Transactor, error) {
	return func() (*madrpc.Transactor, error) {
		h := func(req *mad.Packet) []mad.Packet {
			l.mu.Lock()
			if l.sent == nil {
				l.sent = map[string]int{}
			}
			l.sent[fmt.Sprintf("%s %#04x", mad.Class(req.MAD[1]), binary.BigEndian.Uint16(req.MAD[16:]))]++
			l.mu.Unlock()
			return ff.Handle(req)
		}
		return madrpc.NewTransactor(madtest.New(h), madrpc.TransactorOptions{Timeout: 50 * time.Millisecond, Retries: 1}), nil
	}
}

// kinds returns the logged kinds, sorted, and clears the log.
func (l *smpLog) kinds() []string {
	var k []string
	for s := range l.counts() {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// counts returns how many of each kind were logged, and clears the log.
func (l *smpLog) counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.sent
	l.sent = nil
	return c
}

// TestIbtracertDiscovery: python-rdma's --discovery lid reads each
// switch's SwitchInfo and LFT by its LID, not by directed route, and
// --cache answers the nodes from the cached fabric so that only the LFT
// blocks go out; the trace prints the same either way. -L and -D assert
// the destination's kind in the one-address form, where the local source
// is no LID.
func TestIbtracertDiscovery(t *testing.T) {
	ff := routeFake(t)
	want, err := os.ReadFile(filepath.Join("testdata", "ibtracert", "ca-to-ca.golden"))
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "fabric.cache")
	var log smpLog
	run := func(args ...string) string {
		t.Helper()
		out, errOut, err := runWith(t, newIbtracertCmd, func(o *ibtracertOptions) error {
			o.Common.Open = cmdtest.NoPort(log.transactor(ff))
			return ibtracertRun(o)
		}, args...)
		if err != nil {
			t.Fatalf("ibtracert %q: %v\n%s", args, err, errOut)
		}
		return out
	}
	tests := []struct {
		args []string
		sent []string
	}{
		{[]string{"3", "9"}, []string{"SMI-DR 0x0010", "SMI-DR 0x0011", "SMI-DR 0x0012", "SMI-DR 0x0015", "SMI-DR 0x0019", "SMI 0x0010", "SMI 0x0011", "SMI 0x0015"}},
		{[]string{"--discovery", "LID", "3", "9"}, []string{"SMI-DR 0x0010", "SMI-DR 0x0011", "SMI-DR 0x0015", "SMI 0x0010", "SMI 0x0011", "SMI 0x0012", "SMI 0x0015", "SMI 0x0019"}},
		// The first run discovers and writes the cache, the second reads it.
		{[]string{"--cache", cache, "3", "9"}, nil},
		{[]string{"--cache", cache, "3", "9"}, []string{"SMI-DR 0x0019"}},
		{[]string{"--cache", cache, "--discovery", "lid", "3", "9"}, []string{"SMI 0x0019"}},
	}
	for _, tt := range tests {
		got := run(tt.args...)
		if diff := cmp.Diff(string(want), got); diff != "" {
			t.Errorf("ibtracert %q: unexpected output (-want +got):\n%s", tt.args, diff)
		}
		sent := log.kinds()
		if tt.sent == nil {
			continue
		}
		sort.Strings(tt.sent)
		if diff := cmp.Diff(tt.sent, sent); diff != "" {
			t.Errorf("ibtracert %q: unexpected SMPs (-want +got):\n%s", tt.args, diff)
		}
	}
	if _, err := os.Stat(cache); err != nil {
		t.Errorf("--cache wrote no file: %v", err)
	}
	// One address: from the local port, whatever -L or -D assert.
	for _, args := range [][]string{{"-L", "9"}, {"-D", "0,1,3"}} {
		if got := run(args...); !strings.HasPrefix(got, "From ca {0x0000000000100000}") || !strings.Contains(got, "\nTo ") {
			t.Errorf("ibtracert %q: output %q, want a trace from this port", args, got)
		}
	}
}

// TestRouteDiscoveryFlags: --sa and --discovery sa mean each other, as in
// python-rdma; --sa with another --discovery is a usage error.
func TestRouteDiscoveryFlags(t *testing.T) {
	tests := []struct {
		args     []string
		wantMode string
		wantSA   bool
		wantErr  string
	}{
		{[]string{"1"}, "dr", false, ""},
		{[]string{"--discovery", "LID", "1"}, "lid", false, ""},
		{[]string{"--discovery", "sa", "1"}, "sa", true, ""},
		{[]string{"--sa", "1"}, "sa", true, ""},
		{[]string{"--sa", "--discovery", "dr", "1"}, "", false, "cannot go with --discovery dr"},
		{[]string{"--discovery", "smp", "1"}, "", false, `invalid --discovery "smp"`},
	}
	for _, tt := range tests {
		for _, tool := range []string{"ibroute", "ibtracert"} {
			var mode string
			var viaSA bool
			var err error
			switch tool {
			case "ibroute":
				_, _, err = runWith(t, newIbrouteCmd, func(o *ibrouteOptions) error {
					mode, viaSA = o.Discovery.Mode, o.Common.ViaSA
					return nil
				}, tt.args...)
			case "ibtracert":
				_, _, err = runWith(t, newIbtracertCmd, func(o *ibtracertOptions) error {
					mode, viaSA = o.Discovery.Mode, o.Common.ViaSA
					return nil
				}, tt.args...)
			}
			if tt.wantErr != "" {
				if cmdutil.ExitCode(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("%s %q: %v, want a usage error %q", tool, tt.args, err, tt.wantErr)
				}
				continue
			}
			if err != nil || mode != tt.wantMode || viaSA != tt.wantSA {
				t.Errorf("%s %q: mode %q, --sa %v, %v; want %q, %v", tool, tt.args, mode, viaSA, err, tt.wantMode, tt.wantSA)
			}
		}
	}
}

// TestIbrouteCache: with --cache the destinations are named from the
// cached fabric (no SMP asks them), and the dump is the same.
func TestIbrouteCache(t *testing.T) {
	ff := routeFake(t)
	want, err := os.ReadFile(filepath.Join("testdata", "ibroute", "unicast.golden"))
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "fabric.cache")
	var log smpLog
	for i := range 2 {
		out, errOut, err := runWith(t, newIbrouteCmd, func(o *ibrouteOptions) error {
			o.Common.Open = cmdtest.NoPort(log.transactor(ff))
			return ibrouteRun(o)
		}, "--cache", cache, "1")
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		if diff := cmp.Diff(string(want), out); diff != "" {
			t.Errorf("run %d: unexpected output (-want +got):\n%s", i+1, diff)
		}
		sent := log.counts()
		if i == 0 {
			continue // the discovery that writes the cache
		}
		// The switch's NodeInfo, NodeDescription and SwitchInfo and its
		// LFT block; by LID the destinations the cache does not have:
		// the fake's HCAs' second ports (LIDs 4, 6, 8 and 10), which
		// have no link the discovery could find them by.
		wantSent := map[string]int{"SMI 0x0010": 1 + 4, "SMI 0x0011": 1 + 4, "SMI 0x0012": 1, "SMI 0x0015": 4, "SMI 0x0019": 1}
		if diff := cmp.Diff(wantSent, sent); diff != "" {
			t.Errorf("run %d: unexpected SMPs (-want +got):\n%s", i+1, diff)
		}
	}
}
