package perf

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

func TestPerlNumber(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 15: "15", 0.5: "0.5", -2: "-2", 1.0 / 3: "0.333333333333333", 1e21: "1e+21", 4294967295: "4294967295"} {
		if got := perlNumber(v); got != want {
			t.Errorf("perlNumber(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestIbswportwatchArgs(t *testing.T) {
	type parsed struct {
		Pause        float64
		Cycles       int
		Bytes, GUID  bool
		Target, Port string
	}
	tests := []struct {
		args    []string
		want    parsed
		wantErr bool
	}{
		{args: []string{"12", "3"}, want: parsed{Pause: 10, Cycles: -1, Target: "12", Port: "3"}},
		{args: []string{"-p", "0.5", "-n", "4", "-b", "-G", "0x0002c903000e0b31", "1"}, want: parsed{Pause: 0.5, Cycles: 4, Bytes: true, GUID: true, Target: "0x0002c903000e0b31", Port: "1"}},
		{args: []string{"-p", "0", "12", "3"}, wantErr: true},
		{args: []string{"-p", "-1", "12", "3"}, wantErr: true},
		{args: []string{"-n", "-2", "12", "3"}, wantErr: true},
		{args: []string{"--json", "12", "3"}, wantErr: true},
		{args: []string{"12"}, wantErr: true},
		{args: []string{"12", "x"}, wantErr: true},
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
		p := parsed{got.Pause, got.Cycles, got.Bytes, got.GUID, got.Target, got.Port}
		if diff := cmp.Diff(tt.want, p); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.args, diff)
		}
	}
}

// swportwatchFake answers as Hca1 at LID 2 (NodeInfo) whose PMA's
// counters grow at each read: 4 symbol errors, 30 discards and 1000 data
// words a read.
type swportwatchFake struct {
	mu    sync.Mutex
	reads int
}

func (f *swportwatchFake) handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	h.UnmarshalBinary(req.MAD)
	var a mad.Attribute
	switch {
	case h.MgmtClass != mad.ClassPerf && h.AttrID == mad.AttrNodeInfo:
		a = &mad.NodeInfo{NodeType: 1, NumPorts: 1}
	case h.MgmtClass == mad.ClassPerf && h.AttrID == mad.AttrClassPortInfo:
		a = &mad.ClassPortInfo{}
	case h.MgmtClass == mad.ClassPerf && h.AttrID == mad.AttrPortCounters:
		f.mu.Lock()
		f.reads++
		n := f.reads
		f.mu.Unlock()
		a = &mad.PortCounters{PortSelect: 1, SymbolErrorCounter: uint16(4 * n), PortXmitDiscards: uint16(30 * n), PortXmitData: uint32(1000 * n)}
	}
	var data []byte
	if a != nil {
		data, _ = a.AppendBinary(nil)
	}
	return []mad.Packet{madtest.Reply(req, 0, mad.SMPDataOffset, data)}
}

func TestIbswportwatchRun(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"rates", []string{"-p", "2", "-n", "2", "2", "1"}, strings.Repeat("Checking counts...\n"+
			"Detected rate for SymbolErrorCounter (2 cnts/sec)\n"+
			"Detected excessive rate for PortXmitDiscards (15 cnts/sec)\n", 2)},
		{"data", []string{"-p", "4", "-n", "1", "-b", "2", "1"}, "Checking counts...\n" +
			"Detected rate for SymbolErrorCounter (1 cnts/sec)\n" +
			"Detected rate for PortXmitDiscards (7.5 cnts/sec)\n" +
			"   250 PortXmitData/second\n   0 PortRcvData/second\n   0 PortXmitPkts/second\n   0 PortRcvPkts/second\n"},
		{"no cycles", []string{"-n", "0", "2", "1"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &swportwatchFake{}
			o := cmdtest.ParsedOptions(t, "ibswportwatch", func(f *cmdutil.Factory, runF func(*ibswportwatchOptions) error) *cobra.Command {
				return newIbswportwatchCmd(f, "ibswportwatch", runF)
			}, tt.args)
			var out bytes.Buffer
			o.IO.Out = &out
			o.Common.Open = cmdtest.NoPort(func() (*madrpc.Transactor, error) {
				return madrpc.NewTransactor(madtest.New(fake.handle), madrpc.TransactorOptions{Timeout: time.Second}), nil
			})
			var slept []time.Duration
			o.Sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
			if err := ibswportwatchRun(o); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
			if len(slept) != o.Cycles {
				t.Errorf("slept %v, want %d pauses", slept, o.Cycles)
			}
		})
	}
}
