package perf

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// TestIbswportwatchPyArgs: python-rdma's --count (polls in all), --delta,
// --threshold and -T (its displays), -L/--Lid and --Direct (assertions).
func TestIbswportwatchPyArgs(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	bad := filepath.Join(dir, "bad")
	unknown := filepath.Join(dir, "unknown")
	for file, text := range map[string]string{
		good:    "# python-rdma's form\nsymbolerrorcounter = 1\n\nPortXmitDiscards=0x5\nXmtData = 300\n",
		bad:     "SymbolErrorCounter = ten\n",
		unknown: "NoSuchCounter = 1\n",
	} {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		args       []string
		wantCycles int
		wantSet    string
		wantThresh map[string]uint64
		wantErr    string
	}{
		{args: []string{"--count", "3", "12", "3"}, wantCycles: 2},
		{args: []string{"--count", "1", "12", "3"}, wantCycles: 0},
		{args: []string{"--delta", "12", "3"}, wantCycles: -1, wantSet: "PortCounters"},
		{args: []string{"--delta", "-x", "12", "3"}, wantCycles: -1, wantSet: "PortCountersExtended"},
		{args: []string{"--threshold", "12", "3"}, wantCycles: -1, wantSet: "PortCounters", wantThresh: map[string]uint64{
			"PortRcvErrors": 10, "PortXmitConstraintErrors": 100, "SymbolErrorCounter": 10, "VL15Dropped": 100,
			"PortXmitDiscards": 100, "ExcessiveBufferOverrunErrors": 10, "LinkErrorRecoveryCounter": 10,
			"PortRcvSwitchRelayErrors": 100, "PortRcvRemotePhysicalErrors": 100, "LocalLinkIntegrityErrors": 10,
			"PortRcvConstraintErrors": 100, "LinkDownedCounter": 10}},
		{args: []string{"-T", good, "12", "3"}, wantCycles: -1, wantSet: "PortCounters",
			wantThresh: map[string]uint64{"SymbolErrorCounter": 1, "PortXmitDiscards": 5, "PortXmitData": 300}},
		{args: []string{"-L", "12", "3"}, wantCycles: -1},
		{args: []string{"--Direct", "0,1", "3"}, wantCycles: -1},
		{args: []string{"--count", "0", "12", "3"}, wantErr: "--count 0"},
		{args: []string{"--count", "2", "-n", "2", "12", "3"}, wantErr: "give one"},
		{args: []string{"--delta", "--threshold", "12", "3"}, wantErr: "give one"},
		{args: []string{"--delta", "--json", "-n", "1", "12", "3"}, wantErr: "--json"},
		{args: []string{"-T", bad, "12", "3"}, wantErr: "invalid threshold line"},
		{args: []string{"-T", unknown, "12", "3"}, wantErr: `threshold key "NoSuchCounter" is not known`},
		{args: []string{"-L", "0,1", "3"}, wantErr: `"0,1"`},
		{args: []string{"--Direct", "12", "3"}, wantErr: `"12"`},
		{args: []string{"-L", "-G", "0x0002c903000e0b31", "3"}, wantErr: "give one"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *ibswportwatchOptions
			err := cmdtest.ParseToolArgs(t, "ibswportwatch", func(f *cmdutil.Factory) *cobra.Command {
				return newIbswportwatchCmd(f, "ibswportwatch", func(o *ibswportwatchOptions) error { got = o; return nil })
			}, tt.args)
			if tt.wantErr != "" {
				var u *cmdutil.UsageError
				if !errors.As(err, &u) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want a usage error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			set := ""
			if got.Set != nil {
				set = got.Set.Name
			}
			if diff := cmp.Diff([]any{tt.wantCycles, tt.wantSet, tt.wantThresh}, []any{got.Cycles, set, got.Py.thresh}); diff != "" {
				t.Errorf("unexpected cycles, set, thresholds (-want +got):\n%s", diff)
			}
		})
	}
}

// runSwportwatchPy runs ibswportwatch on args against fake, 4 seconds a
// poll, the SA knowing one link: LID 1 (the local port) port 1 to LID 2.
func runSwportwatchPy(t *testing.T, args ...string) (string, error) {
	t.Helper()
	fake := &swportwatchFake{}
	sa := &madtest.RMPPResponder{HdrLen: 56, Respond: func(req *mad.Packet) []byte {
		if binary.BigEndian.Uint16(req.MAD[16:]) == uint16(mad.AttrLinkRecord) &&
			binary.BigEndian.Uint16(req.MAD[56:]) == 1 && req.MAD[58] == 1 {
			return madtest.SAResponse(req, 0, 8, []byte{0, 1, 1, 1, 0, 2})
		}
		return madtest.SAResponse(req, 0, 8)
	}}
	h := func(req *mad.Packet) []mad.Packet {
		if mad.Class(req.MAD[1]) == mad.ClassSA {
			return sa.Handle(req)
		}
		return fake.handle(req)
	}
	o := cmdtest.ParsedOptions(t, "ibswportwatch", func(f *cmdutil.Factory, runF func(*ibswportwatchOptions) error) *cobra.Command {
		return newIbswportwatchCmd(f, "ibswportwatch", runF)
	}, args)
	var out bytes.Buffer
	o.IO.Out = &out
	o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
		return madrpc.NewTransactor(madtest.New(h), madrpc.TransactorOptions{Timeout: time.Second, SA: &madrpc.SAAddress{SMLID: 1, LID: 1}}), &rdma.Port{Number: 1, LID: 1}, nil
	}
	clock := time.Unix(0, 0)
	o.Now = func() time.Time { return clock }
	o.Sleep = func(context.Context, time.Duration) error { clock = clock.Add(4 * time.Second); return nil }
	err := ibswportwatchRun(o)
	return out.String(), err
}

// TestIbswportwatchPyRun: --threshold shows only the counters whose rate
// reaches their threshold (-T's, else python-rdma's defaults), --count
// bounds the polls, and --Direct follows a DR path to its LID through
// the SA.
func TestIbswportwatchPyRun(t *testing.T) {
	file := filepath.Join(t.TempDir(), "th")
	if err := os.WriteFile(file, []byte("SymbolErrorCounter = 1\nPortXmitDiscards = 5\nPortXmitData = 300\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The fake's counters move by SymbolErrorCounter 4, PortXmitDiscards
	// 30 and PortXmitData 1000 a poll: 1, 7.5 and 250 a second.
	head := "# Port counters: Lid 2 port 1\n"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--threshold", "--count", "2", "2", "1"}, head + head},
		{[]string{"-T", file, "--count", "3", "2", "1"}, head + head +
			"SymbolErrorCounter...............8        (+ 1.000/s)\nPortXmitDiscards.................60       (+ 7.500/s)\n" + head +
			"SymbolErrorCounter...............12       (+ 1.000/s)\nPortXmitDiscards.................90       (+ 7.500/s)\n"},
		{[]string{"-T", file, "--count", "2", "--Direct", "0,1", "1"}, head + head +
			"SymbolErrorCounter...............8        (+ 1.000/s)\nPortXmitDiscards.................60       (+ 7.500/s)\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := runSwportwatchPy(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
		})
	}
	got, err := runSwportwatchPy(t, "--delta", "--count", "2", "2", "1")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(got, head); n != 2 || !strings.Contains(got, "PortXmitData.....................2000     (+ 250.000/s)\n") {
		t.Errorf("--delta --count 2: %d polls, want 2 with every counter's rate:\n%s", n, got)
	}
}
