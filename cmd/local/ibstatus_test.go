package local

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestIbstatusArgs(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     ibstatusOptions
		wantCode int
	}{
		{"none", nil, ibstatusOptions{}, 0},
		{"targets", []string{"mlx5_0:1", "mlx5_1"}, ibstatusOptions{Targets: []string{"mlx5_0:1", "mlx5_1"}}, 0},
		{"empty target kept", []string{"mlx5_0", "", "x"}, ibstatusOptions{Targets: []string{"mlx5_0", "", "x"}}, 0},
		{"json", []string{"--json", "rxe0"}, ibstatusOptions{Targets: []string{"rxe0"}, Common: cmdutil.CommonOptions{JSON: true}}, 0},
		{"sysfs", []string{"--sysfs", "/tmp/sys"}, ibstatusOptions{Common: cmdutil.CommonOptions{Sysfs: "/tmp/sys"}}, 0},
		{"unknown flag", []string{"-x"}, ibstatusOptions{}, cmdutil.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *ibstatusOptions
			err := cmdtest.ParseToolArgs(t, "ibstatus", func(f *cmdutil.Factory) *cobra.Command {
				return newIbstatusCmd(f, func(o *ibstatusOptions) error { got = o; return nil })
			}, tt.args)
			if code := cmdutil.ExitCode(err); code != tt.wantCode {
				t.Fatalf("exit code %d (%v), want %d", code, err, tt.wantCode)
			}
			if tt.wantCode != 0 {
				return
			}
			if got.Sysfs == nil {
				t.Error("Sysfs is not set")
			}
			if len(got.Targets) == 0 {
				got.Targets = nil
			}
			if diff := cmp.Diff(tt.want, *got, cmpCommonOptions,
				cmp.FilterPath(func(p cmp.Path) bool {
					s := p.String()
					return s == "IO" || s == "Sysfs"
				}, cmp.Ignore())); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
		})
	}
}

// ibstatusCase is one run of ibstatus on a fixture tree.
type ibstatusCase = goldenCase

var ibstatusCases = []ibstatusCase{
	{fixture: "mlx5", name: "all"},
	{fixture: "mlx5", name: "device", args: []string{"mlx5_0"}},
	{fixture: "mlx5", name: "port2", args: []string{"mlx5_0:2"}},
	{fixture: "mlx5", name: "missing-port", args: []string{"mlx5_0:7"}, wantCode: cmdutil.ExitUsage, cExitsZero: true,
		wantErr: "device 'mlx5_0' port 7: sys files not found (/sys/class/infiniband/mlx5_0/ports/7)"},
	{fixture: "mlx5", name: "two", args: []string{"mlx5_0:1", "mlx5_1"}},
	{fixture: "mlx5", name: "empty-port", args: []string{"mlx5_0:"}},
	{fixture: "mlx5", name: "last-colon", args: []string{"mlx5_0:1:2"}},
	{fixture: "mlx5", name: "port-is-name", args: []string{"mlx5_1:mlx5_1"}},
	{fixture: "mlx5", name: "stop-at-empty", args: []string{"mlx5_1", "", "nosuch"}},
	{fixture: "mlx5", name: "empty-first", args: []string{""}},
	{fixture: "mlx5", name: "nosuch-midway", args: []string{"mlx5_0", "nosuch", "mlx5_1"}, wantCode: cmdutil.ExitUsage,
		wantErr: "device 'nosuch': sys files not found (/sys/class/infiniband/nosuch/ports)"},
	{fixture: "mlx5", name: "no-device", args: []string{":1"}, wantCode: cmdutil.ExitUsage,
		wantErr: "device '1': sys files not found (/sys/class/infiniband/1/ports)"},
	{fixture: "mlx5", name: "json", args: []string{"--json"}},
	{fixture: "mlx5", name: "json-port", args: []string{"--json", "mlx5_0:2", "mlx5_0:7"}, wantCode: cmdutil.ExitUsage,
		wantErr: "device 'mlx5_0' port 7: sys files not found (/sys/class/infiniband/mlx5_0/ports/7)"},
	{fixture: "mlx5", name: "json-bad-port", args: []string{"--json", "mlx5_0:x"}, wantCode: cmdutil.ExitUsage,
		wantErr: `invalid port number "x" of device 'mlx5_0'`},
	{fixture: "mlx5", name: "json-nosuch", args: []string{"--json", "mlx5_0", "nosuch"}, wantCode: cmdutil.ExitUsage,
		wantErr: "device 'nosuch': sys files not found (/sys/class/infiniband/nosuch/ports)"},

	{fixture: "rxe", name: "all"},
	{fixture: "rxe", name: "json", args: []string{"--json"}},

	{fixture: "edge", name: "all"},
	{fixture: "edge", name: "some", args: []string{"odd0:3", "iwarp0"}},
	{fixture: "edge", name: "json", args: []string{"--json"}},

	{fixture: "broken", name: "all", wantCode: cmdutil.ExitFailure,
		wantErr: "device 'noports0': sys files not found (/sys/class/infiniband/noports0/ports)"},
	{fixture: "broken", name: "port-order", args: []string{"many0"}},
	{fixture: "broken", name: "json", args: []string{"--json"}, wantCode: cmdutil.ExitFailure,
		wantErr: "device 'noports0': sys files not found (/sys/class/infiniband/noports0/ports)"},

	{fixture: "none", name: "all", wantCode: cmdutil.ExitFailure,
		wantErr: "No devices: readdir /sys/class/infiniband: file does not exist"},
	{fixture: "empty", name: "all", wantCode: cmdutil.ExitFailure,
		wantErr: "device '*': sys files not found (/sys/class/infiniband/*/ports)"},
	{fixture: "unreadable", name: "all", wantCode: cmdutil.ExitFailure,
		wantErr: "No devices: readdir /sys/class/infiniband: not implemented"},
	// dev0 has no ports; port 1 of dev1 has only lid and sm_lid.
	{fixture: "emptyports", name: "all", wantCode: cmdutil.ExitFailure, cExitsZero: true, wantErr: emptyportsUnread},
	{fixture: "emptyports", name: "named", args: []string{"dev0"}, wantCode: cmdutil.ExitFailure, cExitsZero: true,
		wantErr: "device 'dev0' has no ports (/sys/class/infiniband/dev0/ports is empty)"},
	{fixture: "emptyports", name: "json", args: []string{"--json"}, wantCode: cmdutil.ExitFailure, wantErr: emptyportsUnread},
}

// emptyportsUnread is what ibstatus could not read of the emptyports
// fixture.
const emptyportsUnread = "device 'dev0' has no ports (/sys/class/infiniband/dev0/ports is empty)\n" +
	"open /sys/class/infiniband/dev1/ports/1/gids/0: file does not exist\n" +
	"open /sys/class/infiniband/dev1/ports/1/state: file does not exist\n" +
	"open /sys/class/infiniband/dev1/ports/1/phys_state: file does not exist\n" +
	"open /sys/class/infiniband/dev1/ports/1/rate: file does not exist"

func runIbstatusCase(t *testing.T, tc ibstatusCase) (string, error) {
	t.Helper()
	var opts *ibstatusOptions
	err := cmdtest.ParseToolArgs(t, "ibstatus", func(f *cmdutil.Factory) *cobra.Command {
		return newIbstatusCmd(f, func(o *ibstatusOptions) error { opts = o; return nil })
	}, tc.args)
	if err != nil {
		t.Fatalf("parsing %q: %v", tc.args, err)
	}
	var out bytes.Buffer
	opts.IO.Out = &out
	opts.Sysfs = sysfsFixture(tc.fixture)
	err = ibstatusRun(opts)
	return out.String(), err
}

func TestIbstatusGolden(t *testing.T) {
	for _, tc := range ibstatusCases {
		t.Run(tc.fixture+"/"+tc.name, func(t *testing.T) {
			got, err := runIbstatusCase(t, tc)
			checkGolden(t, "ibstatus", tc.fixture, tc.name, tc.wantCode, tc.wantErr, got, err)
		})
	}
}

func TestIbstatusMain(t *testing.T) {
	tree := filepath.Join(sysfsFixtures, "rxe")
	want, err := os.ReadFile("testdata/ibstatus/rxe/all.golden")
	if err != nil {
		t.Fatal(err)
	}
	f, out, errOut := cmdutil.NewTestFactory(nil)
	if code := cmdutil.RunTool([]string{"ibstatus", "--sysfs", tree}, f); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("unexpected output (-want +got):\n%s", diff)
	}
	f, out, _ = cmdutil.NewTestFactory(nil)
	opts := &ibstatusOptions{IO: f.IO, Sysfs: sysfsFixture("rxe")}
	opts.IO.Out = failingWriter{}
	if err := ibstatusRun(opts); cmdutil.ExitCode(err) != cmdutil.ExitFailure || out.Len() != 0 {
		t.Errorf("to a failing stdout: %v", err)
	}
}

// TestDashEcho checks the echo and word splitting model against dash
// itself, the /bin/sh that runs the ibstatus script on Debian.
func TestDashEcho(t *testing.T) {
	inputs := []string{
		"plain words", "  lead \t and\ttrail  \n\n", "", "\\c stop", "a\\cb", "tab\\there",
		"\\0101\\101 \\1234 \\01234 \\9 \\08 \\0", "\\777 \\0777", "x\\\\y", "\\e\\a\\b\\f\\v\\r",
		"end\\", "\\x41 \\q", "-n", "-n more", "a\nb", "x\x00y z",
	}
	want := map[string]string{
		"plain words": "L: plain words\n",
		"":            "L:\n",
		"\\c stop":    "L: ",
		"a\\cb":       "L: a",
		"end\\":       "L: end\\\n",
		"-n more":     "L: -n more\n",
		"x\x00y z":    "L: xy z\n",
	}
	got := func(in string) string {
		v := strings.ReplaceAll(in, "\x00", "")
		return dashEcho(append([]string{"L:"}, shellFields(v)...))
	}
	for in, w := range want {
		if g := got(in); g != w {
			t.Errorf("echo L: `cat <%q>` = %q, want %q", in, g, w)
		}
	}
	dash, err := exec.LookPath("dash")
	if err != nil {
		t.Skip("dash not installed; compared with fixed expectations only")
	}
	dir := t.TempDir()
	for i, in := range inputs {
		file := filepath.Join(dir, "v")
		if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(dash, "-c", `echo "L:" `+"`cat "+file+"`").Output()
		if err != nil {
			t.Fatalf("dash: %v", err)
		}
		if diff := cmp.Diff(string(out), got(in)); diff != "" {
			t.Errorf("input %d %q (-dash +ibtool):\n%s", i, in, diff)
		}
	}
}

func TestIbstatusSplitArg(t *testing.T) {
	tests := []struct{ arg, dev, port string }{
		{"mlx5_0", "mlx5_0", "+"},
		{"mlx5_0:2", "mlx5_0", "2"},
		{"mlx5_0:1:2", "mlx5_0", "2"},
		{"mlx5_0:", "mlx5_0", ""},
		{":1", "1", ""},
		{"a:a", "a", "+"},
		{"a b", "a", "b"},     // dev = port = "a b", so port "+"; ib_status a b +
		{"x\\ny:3", "x", "y"}, // echo makes two lines; sed edits each: "x\ny", "x\n3"
	}
	for _, tt := range tests {
		dev, port := ibstatusSplitArg(tt.arg)
		if dev != tt.dev || port != tt.port {
			t.Errorf("split %q = %q, %q; want %q, %q", tt.arg, dev, port, tt.dev, tt.port)
		}
	}
}

// TestIntegrationIbstatusMatchesC checks the text goldens against the
// ibstatus script of infiniband-diags run on the same fixture trees. Its
// fatal errors go to stdout; ibtool's to stderr.
func TestIntegrationIbstatusMatchesC(t *testing.T) {
	cToolsInNamespace(t, "ibstatus")
	for _, tc := range ibstatusCases {
		if strings.Contains(strings.Join(tc.args, " "), "--json") {
			continue
		}
		t.Run(tc.fixture+"/"+tc.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "ibstatus", tc.fixture, tc.name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := runCTool(t, tc.fixture, 0, append([]string{"ibstatus"}, tc.args...)...)
			if ok != (tc.wantCode == 0 || tc.cExitsZero) {
				t.Errorf("the ibstatus script succeeded: %v; ibtool exits %d", ok, tc.wantCode)
			}
			if !ok {
				// The script's last line is its fatal error.
				i := strings.LastIndex(got, "Fatal error:  ")
				if i < 0 || !strings.HasSuffix(got, "\n") || strings.Contains(got[i:len(got)-1], "\n") {
					t.Fatalf("the script failed without a fatal error line:\n%s", got)
				}
				if tc.fixture != "none" && tc.fixture != "unreadable" && got[i:] != "Fatal error:  "+tc.wantErr+"\n" {
					t.Errorf("the script's fatal error is %q; ibtool's %q", got[i:], tc.wantErr)
				}
				got = got[:i]
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("golden differs from the ibstatus script (-golden +ibstatus):\n%s", diff)
			}
		})
	}
}

// FuzzIbstatusArg runs arbitrary arguments, and a device and a port with
// arbitrary names, through ibstatus: no panic, and the text is what echo
// would make of the name.
func FuzzIbstatusArg(f *testing.F) {
	for _, s := range []string{"mlx5_0:1", ":", " ", "a b:c d", "\\c", "-n", "x\\ny:3", "::::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		ibstatusSplitArg(arg)
		dashEcho(shellFields(arg))
		m := fstest.MapFS{}
		if fs.ValidPath("class/infiniband/" + arg + "/ports") {
			m["class/infiniband/"+arg+"/ports"] = &fstest.MapFile{Mode: fs.ModeDir}
			m["class/infiniband/x/ports/"+arg] = &fstest.MapFile{Mode: fs.ModeDir}
		}
		for _, targets := range [][]string{nil, {arg}, {"x:" + arg}} {
			for _, json := range []bool{false, true} {
				o := &ibstatusOptions{
					IO:      cmdutil.IOStreams{Out: io.Discard},
					Sysfs:   func() (*rdma.FS, error) { return rdma.NewFS(m, "/sys"), nil },
					Targets: targets,
					Common:  cmdutil.CommonOptions{JSON: json},
				}
				ibstatusRun(o)
			}
		}
	})
}
