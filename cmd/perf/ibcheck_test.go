package perf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
)

func TestFixScriptArgs(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"-nocolor", "-v", "1"}, []string{"--nocolor", "-v", "1"}},
		{[]string{"-timeout", "100", "-N"}, []string{"--timeout", "100", "-N"}},
		{[]string{"--", "-nocolor"}, []string{"--", "-nocolor"}},
	} {
		if diff := cmp.Diff(c.want, fixScriptArgs(c.in)); diff != "" {
			t.Errorf("fixScriptArgs(%q): unexpected args (-want +got):\n%s", c.in, diff)
		}
	}
}

// scriptTopology is a piece of ibnetdiscover output as the scripts read it.
const scriptTopology = `#
vendid=0x0
switchguid=0x200000(200000)
Switch	8 "S-0000000000200000"		# "Switch1" base port 0 lid 1 lmc 0
[1]	"H-0000000000100000"[1](100001) 		# "Hca1" lid 2 4xSDR
[3]	"S-0000000000200001"[3]		# "Switch2" lid 3 4xSDR

ibwarn: something
caguid=0x100000
Ca	2 "H-0000000000100000"		# "Hca1"
[1](100001) 	"S-0000000000200000"[1]		# lid 2 lmc 0 "Switch1" lid 1 4xSDR
`

func TestTopoItems(t *testing.T) {
	var got []topoItem
	for _, it := range topoItems([]byte(scriptTopology)) {
		if it.kind != topoOther {
			it.line = ""
			got = append(got, it)
		}
	}
	want := []topoItem{
		{kind: topoNode, typ: "Switch", guid: "0000000000200000", lid: "1"},
		{kind: topoPort, port: "1", lid: "2"},
		{kind: topoPort, port: "3", lid: "3"},
		{kind: topoNode, typ: "Ca", guid: "0000000000100000"},
		{kind: topoPort, port: "1", lid: "2"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(topoItem{})); diff != "" {
		t.Errorf("unexpected items (-want +got):\n%s", diff)
	}
}

func TestPortProblems(t *testing.T) {
	up := mad.PortInfo{LinkState: 4, PhysLinkState: 5, LinkWidthSupported: 3, LinkWidthActive: 2}
	narrow := up
	narrow.LinkWidthActive = 1
	onlyNarrow := narrow
	onlyNarrow.LinkWidthSupported = 1
	armed := up
	armed.LinkState = 3
	polling := narrow
	polling.LinkState, polling.PhysLinkState = 1, 2
	for _, c := range []struct {
		name string
		kind portCheckKind
		pi   mad.PortInfo
		want string
	}{
		{"up", checkPortAll, up, ""},
		{"narrow", checkPortAll, narrow, "#warn: Link configured as 1X  lid 7 port 3\n"},
		{"narrow state", checkPortState, narrow, ""},
		{"narrow width", checkPortWidth, narrow, "#warn: Link configured as 1X  lid 7 port 3\n"},
		{"only 1X supported", checkPortWidth, onlyNarrow, ""},
		{"armed", checkPortAll, armed, "#warn: Logical link state is Armed  lid 7 port 3\n"},
		{"polling", checkPortAll, polling, "#error: Physical link state is Polling  lid 7 port 3\n"},
		{"polling width", checkPortWidth, polling, "#warn: Link configured as 1X  lid 7 port 3\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, portProblems(c.kind, &c.pi, "7", "3")); diff != "" {
				t.Errorf("unexpected problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScriptStyle(t *testing.T) {
	for _, c := range []struct {
		name  string
		style scriptStyle
		want  string
	}{
		{"colour", scriptStyle{}, "\033[1;034m#warn\n\033[0;39m\033[1;031m FAILED \033[0;39m\n"},
		{"colour -v", scriptStyle{Verbose: true}, "\033[1;034m#warn\n\033[0;39m\033[1;031m FAILED \033[0;39m\n\033[1;032m OK \033[0;39m\n"},
		{"-N -v", scriptStyle{NoColor: true, Verbose: true}, "#warn\nFAILED\nOK\n"},
		{"-b", scriptStyle{Brief: true}, "\033[1;031m FAILED \033[0;39m\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			c.style.blue(&b, "#warn\n")
			c.style.blue(&b, "")
			c.style.red(&b, "FAILED")
			c.style.green(&b, "OK")
			if diff := cmp.Diff(c.want, b.String()); diff != "" {
				t.Errorf("unexpected text (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrThresholds(t *testing.T) {
	file := filepath.Join(t.TempDir(), "th")
	if err := os.WriteFile(file, []byte("# mine\nSymbolErrorCounter=0\nVL15Dropped=0x20\nPortXmitWait=5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := errThresholds(file)
	if err != nil {
		t.Fatal(err)
	}
	want := defaultErrThresholds()
	want["SymbolErrorCounter"], want["VL15Dropped"] = 0, 32
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected thresholds (-want +got):\n%s", diff)
	}
	if _, err := errThresholds(filepath.Join(t.TempDir(), "none")); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Errorf("missing file: %v, want a usage error", err)
	}
}

func TestNodeCheckArgs(t *testing.T) {
	for _, c := range []struct {
		tool     string
		args     []string
		wantErr  string
		wantPort string
	}{
		{"ibcheckerrs", []string{"-v", "-nocolor", "12"}, "", "255"},
		{"ibcheckerrs", []string{"-b", "12", "3"}, "", "3"},
		{"ibcheckport", []string{"12"}, "want <lid|guid> <port>", ""},
		{"ibchecknode", []string{"12", "3"}, "want <lid|guid>", ""},
		{"ibcheckport", []string{"-timeout", "50", "12", "1"}, "", "1"},
	} {
		t.Run(c.tool+" "+c.args[0], func(t *testing.T) {
			f, _, _ := cmdutil.NewTestFactory(nil)
			var got *nodeCheckOptions
			for _, tool := range nodeCheckTools {
				if tool.name != c.tool {
					continue
				}
				cmd := newNodeCheckCmd(f, tool, func(o *nodeCheckOptions) error { got = o; return nil })
				cmd.SetArgs(c.args)
				cmd.SilenceErrors, cmd.SilenceUsage = true, true
				err := cmd.Execute()
				if !cmdtest.CheckParseErr(t, err, c.wantErr) {
					return
				}
				if diff := cmp.Diff(c.wantPort, got.Port); diff != "" {
					t.Errorf("unexpected port (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// checkScriptResult checks a script's exit code (0: a nil error) and
// output.
func checkScriptResult(t *testing.T, err error, wantCode int, want, got string) {
	t.Helper()
	if code := cmdutil.ExitCode(err); code != wantCode && !(wantCode == 0 && err == nil) {
		t.Errorf("exit %d (%v), want %d", code, err, wantCode)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected output (-want +got):\n%s", diff)
	}
}
