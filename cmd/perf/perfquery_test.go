package perf

import (
	"bytes"
	"fmt"
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
	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestParsePortList(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr string
	}{
		{"1", []int{1}, ""},
		{"0x10", []int{16}, ""},
		{"010", []int{10}, ""},
		{"1,4,8", []int{1, 4, 8}, ""},
		{"1-4", []int{1, 2, 3, 4}, ""},
		{"4-1", nil, `invalid port range "4-1"`},
		{"3-3", nil, `invalid port range "3-3"`},
		{"1,x", nil, `invalid port number "x"`},
		{"256", nil, "out of range 0 to 255"},
		{"1-256", nil, "out of range 0 to 255"},
		{"", nil, `invalid port number ""`},
		{"1,", nil, `invalid port number ""`},
	}
	for _, tt := range tests {
		got, err := parsePortList(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || cmdutil.ExitCode(err) != cmdutil.ExitUsage {
				t.Errorf("parsePortList(%q) = %v, %v; want usage error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parsePortList(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parsePortList(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseMask(t *testing.T) {
	for in, want := range map[string]uint64{"0x0fff": 0xfff, "61440": 0xf000, "0xffffffffffffffff": ^uint64(0)} {
		if got, err := parseMask(in); err != nil || got != want {
			t.Errorf("parseMask(%q) = %#x, %v; want %#x", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0x", "-1", "+1", "0x1g", "0x10000000000000000"} {
		if _, err := parseMask(in); err == nil {
			t.Errorf("parseMask(%q): no error", in)
		}
	}
}

func TestPerfqueryArgs(t *testing.T) {
	tests := []struct {
		args      []string
		wantPort  int
		wantPorts []int
		wantMask  uint32
		wantErr   string
	}{
		{nil, 0, nil, 0xffff, ""},
		{[]string{"-a", "3"}, 255, nil, 0xffff, ""},
		{[]string{"-a", "3", "2"}, 2, nil, 0xffff, ""},
		{[]string{"3", "1-3", "0x0fff"}, 1, []int{1, 2, 3}, 0x0fff, ""},
		{[]string{"-D", "3", "1"}, 1, nil, 0xffff, ""},
		{[]string{"3", "1", "zz"}, 0, nil, 0, `invalid reset mask "zz"`},
		{[]string{"-G", "3"}, 0, nil, 0, `-G given but "3" is a LID`},
		{[]string{"3", "1", "2", "4"}, 0, nil, 0, "expected at most 3 argument(s)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *perfqueryOptions
			err := cmdtest.ParseToolArgs(t, "perfquery", func(f *cmdutil.Factory) *cobra.Command {
				return newPerfqueryCmd(f, func(o *perfqueryOptions) error { got = o; return nil })
			}, tt.args)
			if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
				return
			}
			if got.Port != tt.wantPort || !cmp.Equal(got.Ports, tt.wantPorts) || got.Mask != tt.wantMask {
				t.Errorf("port %d ports %v mask %#x; want %d %v %#x", got.Port, got.Ports, got.Mask, tt.wantPort, tt.wantPorts, tt.wantMask)
			}
		})
	}
}

// TestKernelTransportNoDevices checks a machine without RDMA devices is a
// runtime failure for a MAD tool (exit 3), and a named local port that is
// not there a usage error (exit 2).
func TestKernelTransportNoDevices(t *testing.T) {
	empty := t.TempDir()
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"perfquery", "--sysfs", empty, "1", "1"}, cmdutil.ExitFailure},
		{[]string{"perfquery", "--sysfs", empty, "-C", "mlx5_0", "1", "1"}, cmdutil.ExitUsage},
	} {
		f, _, errOut := cmdutil.NewTestFactory(nil)
		if code := cmdutil.RunTool(tt.args, f); code != tt.code || !strings.Contains(errOut.String(), "no RDMA devices") {
			t.Errorf("%q: exit %d, %q; want %d", tt.args, code, errOut, tt.code)
		}
	}
}

// perfFake answers as a 3-port switch of LID 5 whose PMA has the
// capabilities given: each port's PortCounters count its number in
// SymbolErrorCounter and 100 in PortXmitData, PortXmitWait 9 whatever
// the PMA claims. It keeps the PerfMgt Sets as "attr port" lines.
type perfFake struct {
	caps mad.PMACapability
	mu   sync.Mutex
	sets []string
}

func (f *perfFake) handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	h.UnmarshalBinary(req.MAD)
	port := req.MAD[mad.SMPDataOffset+1]
	perf := h.MgmtClass == mad.ClassPerf
	if perf && h.Method.ChangesState() {
		f.mu.Lock()
		f.sets = append(f.sets, fmt.Sprintf("%#04x %d", uint16(h.AttrID), port))
		f.mu.Unlock()
	}
	var a mad.Attribute
	switch {
	case !perf && h.AttrID == mad.AttrNodeInfo:
		a = &mad.NodeInfo{NodeType: 2, NumPorts: 3}
	case !perf && h.AttrID == mad.AttrSwitchInfo:
		a = &mad.SwitchInfo{}
	case h.AttrID == mad.AttrClassPortInfo:
		a = &mad.ClassPortInfo{CapabilityMask: uint16(f.caps)}
	case h.AttrID == mad.AttrPortCounters:
		a = &mad.PortCounters{PortSelect: port, SymbolErrorCounter: uint16(port), PortXmitData: 100, PortXmitWait: 9}
	case h.AttrID == mad.AttrPortCountersExtended:
		a = &mad.PortCountersExtended{PortSelect: port, PortXmitData: 1 << 40, SymbolErrorCounter: 3}
	case h.AttrID == mad.AttrPortXmitDataSL:
		a = &mad.PortXmitDataSL{PortSelect: port, XmtDataSL3: 33}
	}
	var data []byte
	if a != nil {
		data, _ = a.AppendBinary(nil)
	}
	return []mad.Packet{madtest.Reply(req, 0, mad.SMPDataOffset, data)}
}

// runPerfquery runs perfquery with args against fake.
func runPerfquery(t *testing.T, fake *perfFake, args ...string) (out, errOut string, err error) {
	t.Helper()
	o := cmdtest.ParsedOptions(t, "perfquery", newPerfqueryCmd, args)
	var stdout, stderr bytes.Buffer
	o.IO.Out, o.IO.ErrOut = &stdout, &stderr
	o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
		opts := o.Common.TransactorOptions()
		opts.Timeout = time.Second
		o.Common.SetDryRun(&stdout, &opts)
		return madrpc.NewTransactor(madtest.New(fake.handle), opts), &rdma.Port{Number: 1, LID: 5}, nil
	}
	err = perfqueryRun(o)
	return stdout.String(), stderr.String(), err
}

// portCountersDump is perfquery's dump of a perfFake port's PortCounters
// (PortSelect given), PortXmitWait as given.
func portCountersDump(sel, symbolErrors, xmitData, xmitWait int) string {
	return fmt.Sprintf(`PortSelect:......................%d
CounterSelect:...................0x0000
SymbolErrorCounter:..............%d
LinkErrorRecoveryCounter:........0
LinkDownedCounter:...............0
PortRcvErrors:...................0
PortRcvRemotePhysicalErrors:.....0
PortRcvSwitchRelayErrors:........0
PortXmitDiscards:................0
PortXmitConstraintErrors:........0
PortRcvConstraintErrors:.........0
CounterSelect2:..................0x00
LocalLinkIntegrityErrors:........0
ExcessiveBufferOverrunErrors:....0
QP1Dropped:......................0
VL15Dropped:.....................0
PortXmitData:....................%d
PortRcvData:.....................0
PortXmitPkts:....................0
PortRcvPkts:.....................0
PortXmitWait:....................%d
`, sel, symbolErrors, xmitData, xmitWait)
}

func TestPerfqueryRun(t *testing.T) {
	xmitWait := mad.PMAXmitWait
	tests := []struct {
		name     string
		caps     mad.PMACapability
		args     []string
		want     string
		wantErr  string
		wantSets []string
	}{
		{"local port", xmitWait, nil,
			"# Port counters: Lid 5 port 1 (CapMask: 0x1000)\n" + portCountersDump(1, 1, 100, 9), "", nil},
		{"PortXmitWait not claimed", 0, []string{"5", "2"},
			"# Port counters: Lid 5 port 2 (CapMask: 0x00)\n" + portCountersDump(2, 2, 100, 0), "", nil},
		{"ports added up", xmitWait, []string{"-a", "5", "1-3"},
			"# Port counters: Lid 5 port 255 (CapMask: 0x1000)\n" + portCountersDump(255, 6, 300, 27), "", nil},
		{"AllPortSelect emulated", xmitWait, []string{"-a", "5"},
			"# Port counters: Lid 5 port 255 (CapMask: 0x1000)\n" + portCountersDump(255, 6, 300, 27), "", nil},
		{"each port", xmitWait, []string{"-l", "5", "2,3"},
			"# Port counters: Lid 5 port 2 (CapMask: 0x1000)\n" + portCountersDump(2, 2, 100, 9) +
				"# Port counters: Lid 5 port 3 (CapMask: 0x1000)\n" + portCountersDump(3, 3, 100, 9), "", nil},
		{"no AllPortSelect without -a", 0, []string{"5", "255"}, "", "does not support AllPortSelect", nil},
		{"extended, no error counters", mad.PMAExtendedWidthNoIETF, []string{"-x", "5", "1"},
			"# Port extended counters: Lid 5 port 1 (CapMask: 0x400 CapMask2: 0x0000000)\n" +
				"PortSelect:......................1\nCounterSelect:...................0x0000\n" +
				"PortXmitData:....................1099511627776\nPortRcvData:.....................0\n" +
				"PortXmitPkts:....................0\nPortRcvPkts:.....................0\n", "", nil},
		{"SL counters, reset", 0, []string{"-X", "-r", "5", "1"},
			"# PortXmitDataSL counters: Lid 5 port 1\nPortSelect:......................1\nCounterSelect:...................0x0000\n" +
				"XmtDataSL0:......................0\nXmtDataSL1:......................0\nXmtDataSL2:......................0\n" +
				"XmtDataSL3:......................33\nXmtDataSL4:......................0\nXmtDataSL5:......................0\n" +
				"XmtDataSL6:......................0\nXmtDataSL7:......................0\nXmtDataSL8:......................0\n" +
				"XmtDataSL9:......................0\nXmtDataSL10:.....................0\nXmtDataSL11:.....................0\n" +
				"XmtDataSL12:.....................0\nXmtDataSL13:.....................0\nXmtDataSL14:.....................0\n" +
				"XmtDataSL15:.....................0\n", "", []string{"0x0036 1"}},
		{"reset only, each port", xmitWait, []string{"-R", "-l", "5", "1-3"}, "", "", []string{"0x0012 1", "0x0012 2", "0x0012 3"}},
		{"reset planned", xmitWait, []string{"-R", "--dry-run", "5", "2"},
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=5 attrmod=0x0 PortSelect=2 CounterSelect=0xffff CounterSelect2=0x01\n", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &perfFake{caps: tt.caps}
			out, _, err := runPerfquery(t, fake, tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSets, fake.sets); diff != "" {
				t.Errorf("unexpected Sets (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPerfquerySysfsRoot checks that a MAD tool reports a --sysfs that is
// not there as the local tools do: a usage error naming the flag.
func TestPerfquerySysfsRoot(t *testing.T) {
	f, out, errOut := cmdutil.NewTestFactory(nil)
	if code := cmdutil.RunTool([]string{"perfquery", "--sysfs", "/nonexistent"}, f); code != cmdutil.ExitUsage || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q; want %d and nothing", code, out, cmdutil.ExitUsage)
	}
	want := "perfquery: --sysfs /nonexistent: no such directory; want the sysfs mount point, such as /sys\n"
	if diff := cmp.Diff(want, errOut.String()); diff != "" {
		t.Errorf("unexpected stderr (-want +got):\n%s", diff)
	}
}
