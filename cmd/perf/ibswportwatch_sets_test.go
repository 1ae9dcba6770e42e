package perf

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

func TestIbswportwatchSetArgs(t *testing.T) {
	tests := []struct {
		args    []string
		want    string // the attribute picked, "" for the script's output
		all     bool
		wantErr bool
	}{
		{args: []string{"12", "3"}},
		{args: []string{"-x", "12", "3"}, want: "PortCountersExtended"},
		{args: []string{"--rcverr", "12", "3"}, want: "PortRcvErrorDetails"},
		{args: []string{"--vl-congestion", "12", "3"}, want: "SwPortVLCongestion"},
		{args: []string{"-a", "12", "3"}, want: "PortCounters", all: true},
		{args: []string{"-a", "-F", "12", "3"}, want: "PortFlowCtlCounters", all: true},
		{args: []string{"-x", "-X", "12", "3"}, wantErr: true},
		{args: []string{"-x", "--json", "-n", "1", "12", "3"}, wantErr: true},
	}
	for _, tt := range tests {
		var got *ibswportwatchOptions
		err := cmdtest.ParseToolArgs(t, "ibswportwatch", func(f *cmdutil.Factory) *cobra.Command {
			return newIbswportwatchCmd(f, "ibswportwatch", func(o *ibswportwatchOptions) error { got = o; return nil })
		}, tt.args)
		if tt.wantErr {
			var u *cmdutil.UsageError
			if !errors.As(err, &u) {
				t.Errorf("%q: error %v, want a usage error", tt.args, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		name := ""
		if got.Set != nil {
			name = got.Set.Name
		}
		if name != tt.want || got.AllPorts != tt.all {
			t.Errorf("%q: set %q, -a %v; want %q, %v", tt.args, name, got.AllPorts, tt.want, tt.all)
		}
	}
}

// TestIbswportwatchSetRun: each poll prints the set's counters; the ones
// that moved show their increase per second over the time measured
// between polls (python-rdma's printer_delta).
func TestIbswportwatchSetRun(t *testing.T) {
	fake := &swportwatchFake{}
	o := cmdtest.ParsedOptions(t, "ibswportwatch", func(f *cmdutil.Factory, runF func(*ibswportwatchOptions) error) *cobra.Command {
		return newIbswportwatchCmd(f, "ibswportwatch", runF)
	}, []string{"-a", "-n", "1", "-p", "2", "2", "1"})
	var out bytes.Buffer
	o.IO.Out = &out
	o.Common.Open = cmdtest.NoPort(func() (*madrpc.Transactor, error) {
		return madrpc.NewTransactor(madtest.New(fake.handle), madrpc.TransactorOptions{Timeout: time.Second}), nil
	})
	clock := time.Unix(0, 0)
	o.Now = func() time.Time { return clock }
	o.Sleep = func(_ context.Context, d time.Duration) error { clock = clock.Add(4 * time.Second); return nil }
	if err := ibswportwatchRun(o); err != nil {
		t.Fatal(err)
	}
	polls := strings.SplitAfter(out.String(), "\n# ")
	if len(polls) != 2 || !strings.HasPrefix(polls[0], "# Port counters: Lid 2 port 255\nSymbolErrorCounter...............4\n") {
		t.Fatalf("want two polls of LID 2 port 255, got:\n%s", out.String())
	}
	for _, want := range []string{
		"SymbolErrorCounter...............8        (+ 1.000/s)\n",
		"PortXmitDiscards.................60       (+ 7.500/s)\n",
		"PortXmitData.....................2000     (+ 250.000/s)\n",
		"PortRcvData......................0\n",
	} {
		if !strings.Contains(polls[1], want) {
			t.Errorf("second poll has no %q:\n%s", want, polls[1])
		}
	}
	if diff := cmp.Diff(false, strings.Contains(out.String(), "PortSelect")); diff != "" {
		t.Errorf("PortSelect shown (-want +got):\n%s", diff)
	}
}
