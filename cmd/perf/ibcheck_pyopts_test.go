package perf

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// writeFile writes text to a file in a test's temporary directory.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadPyThresholds(t *testing.T) {
	good := writeFile(t, "good", "# mine\n\n  symbolErrorCounter = 0x4\nLinkDowned=010\nPORTXMITDATA= 7\nVL15Dropped=-1\nportrcverrors = 0b11\n")
	got, err := loadPyThresholds(good)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"symbolErrorCounter": 4, "linkDownedCounter": 8, "portXmitData": 7, "VL15Dropped": -1, "portRcvErrors": 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected thresholds (-want +got):\n%s", diff)
	}
	values, order := pyCheckThresholds(got)
	if diff := cmp.Diff([]string{"SymbolErrorCounter", "LinkDownedCounter", "PortRcvErrors", "PortXmitData"}, order); diff != "" {
		t.Errorf("unexpected order (-want +got):\n%s", diff)
	}
	if values["VL15Dropped"] != 0 || values["PortXmitData"] != 7 {
		t.Errorf("check thresholds %v: want no VL15Dropped (-1 is off), PortXmitData 7", values)
	}
	def, err := loadPyThresholds("")
	if err != nil || len(def) != 12 || def["VL15Dropped"] != 100 {
		t.Errorf("defaults: %v, %v", def, err)
	}
	for _, c := range []struct{ name, text, wantErr string }{
		{"no value", "symbolErrorCounter\n", `invalid threshold line "symbolErrorCounter"`},
		{"underscore", "symbolErrorCounter=1_0\n", "invalid threshold line"},
		{"unknown", "NoSuchCounter=1\n", `threshold key "NoSuchCounter" is not known`},
		// perfquery's names are matched with their case only.
		{"perfquery name in another case", "symbolerrors=1\n", `threshold key "symbolerrors" is not known`},
		{"missing file", "", "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "none")
			if c.text != "" {
				p = writeFile(t, "th", c.text)
			}
			_, err := loadPyThresholds(p)
			if cmdutil.ExitCode(err) != cmdutil.ExitUsage || !bytes.Contains([]byte(err.Error()), []byte(c.wantErr)) {
				t.Errorf("err %v, want a usage error with %q", err, c.wantErr)
			}
		})
	}
}

// TestNodeCheckPyOptions runs the per-node scripts with python-rdma's -D,
// -L, -T and -s against dryRunFabric, which answers every path as Hca1
// (LID 2, 5 symbol errors).
func TestNodeCheckPyOptions(t *testing.T) {
	th := writeFile(t, "th", "SymbolErrors=3\n")
	strict := writeFile(t, "strict", "SymbolErrorCounter=5\n")
	tests := []struct {
		tool     string
		args     []string
		want     string
		wantCode int
	}{
		{"ibchecknode", []string{"-v", "-N", "-D", "0,1"}, "Node check lid 2: OK\n", 0},
		// Commas make a path without -D, as python-rdma's format rule does.
		{"ibchecknode", []string{"-v", "-N", "0,1,"}, "Node check lid 2: OK\n", 0},
		{"ibchecknode", []string{"-v", "-N", "-L", "2"}, "Node check lid 2: OK\n", 0},
		{"ibcheckport", []string{"-v", "-N", "--Direct", "0,1", "1"}, "Port check lid 2 port 1: OK\n", 0},
		{"ibcheckportstate", []string{"-v", "-N", "-D", "0", "1"}, "Port check lid 2 port 1: OK\n", 0},
		{"ibcheckportwidth", []string{"-v", "-N", "-D", "0,1", "1"}, "Port check lid 2 port 1: OK\n", 0},
		// ibcheckerrs' -T is the script's: NAME=VALUE, flagged at it.
		{"ibcheckerrs", []string{"-N", "-T", strict, "-D", "0,1", "1"},
			"#warn: counter SymbolErrorCounter = 5 \t(threshold 5) lid 2 port 1\nError check on lid 2 () port 1: FAILED\n", cmdutil.ScriptFailed},
		{"ibdatacounts", []string{"-N", "-D", "0,1", "1"},
			"# Port counters: Lid 2 port 1 (CapMask: 0x1100)\nPortRcvData:.........................0\nPortRcvPkts:.........................0\n", 0},
		{"ibdatacounts", []string{"-s"}, "VL15Dropped=100\nexcessiveBufferOverrunErrors=10\nlinkDownedCounter=10\n" +
			"linkErrorRecoveryCounter=10\nlocalLinkIntegrityErrors=10\nportRcvConstraintErrors=100\nportRcvErrors=10\n" +
			"portRcvRemotePhysicalErrors=100\nportRcvSwitchRelayErrors=100\nportXmitConstraintErrors=100\n" +
			"portXmitDiscards=100\nsymbolErrorCounter=10\n", 0},
		{"ibdatacounts", []string{"-T", th, "--show_thresholds"}, "symbolErrorCounter=3\n", 0},
		// Without -s, python-rdma's ibdatacounts reads -T's file and shows
		// the counters as ever.
		{"ibdatacounts", []string{"-N", "-T", th, "2", "1"},
			"# Port counters: Lid 2 port 1 (CapMask: 0x1100)\nPortRcvData:.........................0\nPortRcvPkts:.........................0\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			ff := &cmdtest.DryRunFabric{}
			var out bytes.Buffer
			o := fakeNodeCheck(t, tt.tool, tt.args)
			o.IO.Out = &out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) { return ff.Transactor(&o.Common, &out), nil, nil }
			checkScriptResult(t, nodeCheckRun(o), tt.wantCode, tt.want, out.String())
		})
	}
}

func TestNodeCheckPyArgs(t *testing.T) {
	for _, c := range []struct {
		tool    string
		args    []string
		wantErr string
	}{
		{"ibchecknode", []string{"-D", "12"}, `-D given but "12" is a LID`},
		{"ibchecknode", []string{"-L", "0,1"}, `-L given but "0,1" is a DR path`},
		{"ibcheckport", []string{"-L", "-D", "0,1", "1"}, "give one of -G, -L and -D"},
		{"ibcheckerrs", []string{"-G", "-L", "12"}, "give one of -G, -L and -D"},
		{"ibdatacounts", []string{"-T", "/nonexistent/th", "12"}, "no such file"},
		{"ibchecknode", []string{"-L", "12"}, ""},
		{"ibcheckportwidth", []string{"-D", "0,1,3", "2"}, ""},
	} {
		t.Run(c.tool+" "+strings.Join(c.args, " "), func(t *testing.T) {
			f, _, _ := cmdutil.NewTestFactory(nil)
			for _, tool := range nodeCheckTools {
				if tool.name != c.tool {
					continue
				}
				cmd := newNodeCheckCmd(f, tool, func(o *nodeCheckOptions) error { return nil })
				cmd.SetArgs(c.args)
				cmd.SilenceErrors, cmd.SilenceUsage = true, true
				cmdtest.CheckParseErr(t, cmd.Execute(), c.wantErr)
			}
		})
	}
}

// upFabric answers as dryRunFabric's Hca1 does, except that the PortInfo
// of port 1 at LID 1 (the switch's port to Hca1 in fakeNetCheck's
// topology) shows down, its physical state phys.
func upFabric(phys mad.PhysPortState) madtest.Handler {
	return func(req *mad.Packet) []mad.Packet {
		var h mad.Header
		h.UnmarshalBinary(req.MAD)
		var data []byte
		switch {
		case h.MgmtClass.IsSMP() && h.AttrID == mad.AttrNodeInfo:
			data, _ = hex.DecodeString(cmdtest.Hca1NodeInfo)
		case h.MgmtClass.IsSMP() && h.AttrID == mad.AttrPortInfo:
			pi := cmdtest.DryRunPortInfo
			if req.Addr.LID == 1 && h.AttrMod == 1 {
				pi.LinkState, pi.PhysLinkState = mad.PortStateDown, phys
			}
			data, _ = pi.MarshalBinary()
		case h.MgmtClass == mad.ClassPerf && h.AttrID == mad.AttrClassPortInfo:
			cpi := mad.ClassPortInfo{CapabilityMask: uint16(mad.PMAAllPortSelect)}
			data, _ = cpi.MarshalBinary()
		case h.MgmtClass == mad.ClassPerf && h.AttrID == mad.AttrPortCounters:
			pc := mad.PortCounters{PortSelect: req.MAD[mad.SMPDataOffset+1], SymbolErrorCounter: 5}
			data, _ = pc.MarshalBinary()
		}
		return []mad.Packet{madtest.Reply(req, 0, mad.SMPDataOffset, data)}
	}
}

// TestNetCheckPyOptions runs the fabric-wide scripts with python-rdma's
// -T and --up on fakeNetCheck's topology (Hca1 on port 1 of Switch1).
func TestNetCheckPyOptions(t *testing.T) {
	four := writeFile(t, "four", "symbolErrorCounter = 4\n")
	five := writeFile(t, "five", "SymbolErrors=5\n")
	errsTail := "\n*** WARNING ***: this command is deprecated; Please use \"ibqueryerrors\"\n## Summary: 2 nodes checked, 0 bad nodes found\n"
	tests := []struct {
		name  string
		tool  string
		args  []string
		phys  mad.PhysPortState
		want  string
		code  int
		trace bool
	}{
		// python-rdma flags a counter above its threshold: 5 > 4 fails
		// (the switch's all ports, then its port 1; then Hca1's port).
		{"-T above", "ibcheckerrors", []string{"-N", "-T", four}, mad.PhysPortStateLinkUp,
			"#warn: counter SymbolErrorCounter = 5 \t(threshold 4) lid 1 port 255\nError check on lid 1 () port all: FAILED\n" +
				"#warn: counter SymbolErrorCounter = 5 \t(threshold 4) lid 1 port 1\nError check on lid 1 () port 1: FAILED\n" +
				"#warn: counter SymbolErrorCounter = 5 \t(threshold 4) lid 2 port 1\nError check on lid 2 () port 1: FAILED\n" +
				errsTail + "##          2 ports checked, 2 ports have errors beyond threshold\n", 0, false},
		// 5 is not above 5, and the file's thresholds are the only ones.
		{"-T at", "ibcheckerrors", []string{"-N", "-T", five}, mad.PhysPortStateLinkUp,
			errsTail + "##          2 ports checked, 0 ports have errors beyond threshold\n", 0, false},
		{"no --up", "ibcheckstate", []string{"-N"}, mad.PhysPortStateDisabled,
			"#error: Physical link state is Disabled  lid 1 port 1\nPort check lid 1 port 1: FAILED\n" +
				"# Checked Switch: nodeguid 0x0000000000200000 with failure\n" +
				"\n*** WARNING ***: this command is deprecated\n\n## Summary: 2 nodes checked, 0 bad nodes found\n" +
				"##          2 ports checked, 1 ports with bad state found\n", 0, false},
		{"--up disabled", "ibcheckstate", []string{"-N", "--up"}, mad.PhysPortStateDisabled,
			"\n*** WARNING ***: this command is deprecated\n\n## Summary: 2 nodes checked, 0 bad nodes found\n" +
				"##          1 ports checked, 0 ports with bad state found\n", 0, false},
		{"--up polling", "ibcheckwidth", []string{"-N", "--up"}, mad.PhysPortStatePolling,
			"\n*** WARNING ***: this command is deprecated\n\n## Summary: 2 nodes checked, 0 bad nodes found\n" +
				"##          1 ports checked, 0 ports with 1x width in error found\n", 0, false},
		// Training is neither: the port stays, and fails.
		{"--up training", "ibcheckstate", []string{"-N", "--up"}, mad.PhysPortStateTraining,
			"#error: Physical link state is PortConfigurationTraining  lid 1 port 1\nPort check lid 1 port 1: FAILED\n" +
				"# Checked Switch: nodeguid 0x0000000000200000 with failure\n" +
				"\n*** WARNING ***: this command is deprecated\n\n## Summary: 2 nodes checked, 0 bad nodes found\n" +
				"##          2 ports checked, 1 ports with bad state found\n", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			o := fakeNetCheck(t, tt.tool, tt.args)
			o.IO.Out = &out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
				return cmdtest.FakeTransactor(&o.Common, upFabric(tt.phys), 0, &out), nil, nil
			}
			checkScriptResult(t, netCheckRun(o), tt.code, tt.want, out.String())
		})
	}
}

// TestNetClearUp checks that --up leaves a down port's counters alone:
// ibclearcounters resets the switch's all at once and Hca1's port 1; with
// Hca1's port down only the switch's.
func TestNetClearUp(t *testing.T) {
	for _, c := range []struct {
		args      []string
		wantSets  int
		wantLines string
	}{
		{[]string{"--dry-run"}, 2, ""},
		{[]string{"--dry-run", "--up"}, 1, ""},
	} {
		var out bytes.Buffer
		o := fakeNetCheck(t, "ibclearcounters", c.args)
		o.Topology = func() ([]topoItem, error) {
			// Hca1's port line at LID 1 port 1, which upFabric shows down.
			return topoItems([]byte("Switch\t8 \"S-0000000000200000\"\t\t# \"Switch1\" base port 0 lid 3 lmc 0\n\nCa\t2 \"H-0000000000100000\"\t\t# \"Hca1\"\n[1](100001) \t\"S-0000000000200000\"[1]\t\t# lid 1 lmc 0 \"Switch1\" lid 3 4xSDR\n")), nil
		}
		o.IO.Out = &out
		o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
			return cmdtest.FakeTransactor(&o.Common, upFabric(mad.PhysPortStateDisabled), 0, &out), nil, nil
		}
		if err := netCheckRun(o); err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(out.Bytes(), []byte("PortCounters")); n != c.wantSets {
			t.Errorf("%q: %d PortCounters Sets planned, want %d:\n%s", c.args, n, c.wantSets, out.String())
		}
	}
}

// TestNetCheckPyThresholdFile checks that the fabric-wide tools with -T
// read the file before anything is sent, as python-rdma does even for
// ibdatacounters, which shows no thresholds.
func TestNetCheckPyThresholdFile(t *testing.T) {
	bad := writeFile(t, "bad", "portRcvErrors: 2\n")
	for _, c := range []struct {
		tool    string
		args    []string
		wantErr string
	}{
		{"ibdatacounters", []string{"-T", bad}, "invalid threshold line"},
		{"ibchecknet", []string{"-T", bad}, "invalid threshold line"},
		{"ibcheckstate", []string{"-T", bad}, "unknown shorthand flag: 'T'"},
		{"ibclearcounters", []string{"--up", "-T", bad}, "unknown shorthand flag: 'T'"},
	} {
		t.Run(c.tool+" "+strings.Join(c.args, " "), func(t *testing.T) {
			f, _, _ := cmdutil.NewTestFactory(nil)
			for _, tool := range netCheckTools {
				if tool.name != c.tool {
					continue
				}
				cmd := newNetCheckCmd(f, tool, func(*netCheckOptions) error { return nil })
				cmd.SetArgs(c.args)
				cmd.SilenceErrors, cmd.SilenceUsage = true, true
				cmdtest.CheckParseErr(t, cmd.Execute(), c.wantErr)
			}
		})
	}
}
