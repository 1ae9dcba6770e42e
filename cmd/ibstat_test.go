package cmd

import (
	"bytes"
	"flag"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/spf13/cobra"
)

// The sysfs fixture trees live with the package that reads them.
const sysfsFixtures = "../pkg/rdma/testdata"

// Registered here unless another test file of the package already has it:
// go test ./cmd -run Golden -update rewrites the golden files.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

// updateGoldens reports whether -update was given.
func updateGoldens() bool {
	f := flag.Lookup("update")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	b, _ := g.Get().(bool)
	return b
}

// checkSysfsGolden compares got with the golden file path, or rewrites the
// file under -update.
func checkSysfsGolden(t *testing.T, path, got string) {
	t.Helper()
	if updateGoldens() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s: unexpected output (-want +got):\n%s", path, diff)
	}
}

// memFixtures are the trees too small to keep on disk: no class/infiniband
// at all, an empty one, one that is a file, and a device with an empty
// ports directory.
var memFixtures = map[string]fstest.MapFS{
	"none": {},
	"empty": {
		"class/infiniband":       &fstest.MapFile{Mode: fs.ModeDir},
		"class/infiniband_verbs": &fstest.MapFile{Mode: fs.ModeDir},
	},
	"unreadable": {"class/infiniband": &fstest.MapFile{Data: []byte("not a directory\n")}},
	"emptyports": {
		"class/infiniband/dev0/ports":          &fstest.MapFile{Mode: fs.ModeDir},
		"class/infiniband/dev1/ports/1/lid":    &fstest.MapFile{Data: []byte("0x1\n")},
		"class/infiniband/dev1/ports/1/sm_lid": &fstest.MapFile{Data: []byte("0x1\n")},
	},
}

// sysfsFixture opens a fixture tree, on disk or in memFixtures, as /sys.
func sysfsFixture(name string) func() (*rdma.FS, error) {
	return func() (*rdma.FS, error) {
		if m, ok := memFixtures[name]; ok {
			return rdma.NewFS(m, "/sys"), nil
		}
		return rdma.NewFS(os.DirFS(filepath.Join(sysfsFixtures, name)), "/sys"), nil
	}
}

// fixtureClassDir returns the class directory of a fixture on disk,
// writing an in-memory fixture out to a temporary directory first.
func fixtureClassDir(t *testing.T, name string) string {
	t.Helper()
	m, ok := memFixtures[name]
	if !ok {
		dir, err := filepath.Abs(filepath.Join(sysfsFixtures, name, "class"))
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "class"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, f := range m {
		path := filepath.Join(root, filepath.FromSlash(name))
		if f.Mode.IsDir() {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(root, "class")
}

// parseToolArgs runs argv through a tool's command as dispatch would,
// with runF catching the options instead of running.
func parseToolArgs(t *testing.T, name string, newCmd func(*Factory) *cobra.Command, args []string) error {
	t.Helper()
	f, _, _ := testFactory(nil)
	c := ToolCommand(f, Tool{Name: name, New: newCmd})
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	c.SetArgs(args)
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	return c.Execute()
}

func TestIbstatArgs(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     ibstatOptions
		wantCode int
	}{
		{"none", nil, ibstatOptions{Port: -1}, 0},
		{"ca", []string{"mlx5_0"}, ibstatOptions{CA: "mlx5_0", Port: -1}, 0},
		{"ca port", []string{"mlx5_0", "2"}, ibstatOptions{CA: "mlx5_0", Port: 2}, 0},
		{"leading zero is decimal", []string{"mlx5_0", "010"}, ibstatOptions{CA: "mlx5_0", Port: 10}, 0},
		{"hex port", []string{"mlx5_0", "0x1A"}, ibstatOptions{CA: "mlx5_0", Port: 26}, 0},
		{"port 0", []string{"sw0", "0"}, ibstatOptions{CA: "sw0", Port: 0}, 0},
		{"long flags", []string{"--list_of_cas", "--short", "--port_list"}, ibstatOptions{ListCAs: true, Short: true, PortList: true, Port: -1}, 0},
		{"short flags", []string{"-lsp", "rxe0"}, ibstatOptions{ListCAs: true, Short: true, PortList: true, CA: "rxe0", Port: -1}, 0},
		{"json and sysfs", []string{"--json", "--sysfs", "/tmp/sys", "-v"},
			ibstatOptions{Port: -1, Common: CommonOptions{JSON: true, Sysfs: "/tmp/sys", Verbose: 1}}, 0},
		{"bad port", []string{"mlx5_0", "one"}, ibstatOptions{}, ExitUsage},
		{"negative port", []string{"mlx5_0", "--", "-1"}, ibstatOptions{}, ExitUsage},
		{"huge port", []string{"mlx5_0", "99999999999"}, ibstatOptions{}, ExitUsage},
		{"empty hex", []string{"mlx5_0", "0x"}, ibstatOptions{}, ExitUsage},
		{"three args", []string{"mlx5_0", "1", "2"}, ibstatOptions{}, ExitUsage},
		{"unknown flag", []string{"-C", "mlx5_0"}, ibstatOptions{}, ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *ibstatOptions
			err := parseToolArgs(t, "ibstat", func(f *Factory) *cobra.Command {
				return newIbstatCmd(f, func(o *ibstatOptions) error { got = o; return nil })
			}, tt.args)
			if code := ExitCode(err); code != tt.wantCode {
				t.Fatalf("exit code %d (%v), want %d", code, err, tt.wantCode)
			}
			if tt.wantCode != 0 {
				return
			}
			if got.Sysfs == nil {
				t.Error("Sysfs is not set")
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

// ibstatCase is one run of ibstat on a fixture tree. Text runs without an
// error, and with the failures ibstat has too, are also compared with the
// real ibstat by TestIntegrationIbstatMatchesC.
type ibstatCase = goldenCase

var ibstatCases = []ibstatCase{
	{fixture: "mlx5", name: "all"},
	{fixture: "mlx5", name: "list", args: []string{"-l"}},
	{fixture: "mlx5", name: "short", args: []string{"-s"}},
	{fixture: "mlx5", name: "ports", args: []string{"-p"}},
	{fixture: "mlx5", name: "ca", args: []string{"mlx5_0"}},
	{fixture: "mlx5", name: "ca-port1", args: []string{"mlx5_0", "1"}},
	{fixture: "mlx5", name: "ca-port2", args: []string{"mlx5_0", "2"}},
	{fixture: "mlx5", name: "roce-port", args: []string{"mlx5_1", "1"}},
	{fixture: "mlx5", name: "short-ignores-port", args: []string{"-s", "mlx5_0", "9"}},
	{fixture: "mlx5", name: "list-ca", args: []string{"-l", "mlx5_1", "5"}},
	{fixture: "mlx5", name: "ports-ca", args: []string{"-p", "mlx5_0", "7"}},
	{fixture: "mlx5", name: "ports-before-list", args: []string{"-l", "-p"}},
	{fixture: "mlx5", name: "no-port3", args: []string{"mlx5_0", "3"},
		wantCode: ExitUsage, wantErr: "CA 'mlx5_0' has no port number 3 - max (2)"},
	{fixture: "mlx5", name: "no-port0", args: []string{"mlx5_0", "0"},
		wantCode: ExitUsage, wantErr: "CA 'mlx5_0' has no port number 0 - max (2)"},
	{fixture: "mlx5", name: "nosuch", args: []string{"nosuch", "1"},
		wantCode: ExitUsage, wantErr: "'nosuch' IB device can't be found"},
	{fixture: "mlx5", name: "json", args: []string{"--json"}},
	{fixture: "mlx5", name: "json-list", args: []string{"--json", "-l"}},
	{fixture: "mlx5", name: "json-ports", args: []string{"--json", "-p"}},
	{fixture: "mlx5", name: "json-short", args: []string{"--json", "-s", "mlx5_1"}},
	{fixture: "mlx5", name: "json-ca-port", args: []string{"--json", "mlx5_0", "2"}},
	{fixture: "mlx5", name: "json-no-port", args: []string{"--json", "mlx5_0", "3"},
		wantCode: ExitUsage, wantErr: "CA 'mlx5_0' has no port number 3 - max (2)"},

	{fixture: "rxe", name: "all"},
	{fixture: "rxe", name: "list", args: []string{"-l"}},
	{fixture: "rxe", name: "short", args: []string{"-s"}},
	{fixture: "rxe", name: "ports", args: []string{"-p"}},
	{fixture: "rxe", name: "ca-port1", args: []string{"rxe0", "1"}},
	{fixture: "rxe", name: "json", args: []string{"--json"}},

	{fixture: "edge", name: "all"},
	{fixture: "edge", name: "list", args: []string{"-l"}},
	{fixture: "edge", name: "short", args: []string{"-s"}},
	{fixture: "edge", name: "ports", args: []string{"-p"}},
	{fixture: "edge", name: "switch-port0", args: []string{"sw0", "0"}},
	{fixture: "edge", name: "router-port3", args: []string{"odd0", "3"}},
	{fixture: "edge", name: "fdr10-hex-port", args: []string{"minimal0", "0x1"}},
	{fixture: "edge", name: "switch-port1", args: []string{"sw0", "1"},
		wantCode: ExitUsage, wantErr: "Switch 'sw0' has no port number 1 - max (0)"},
	{fixture: "edge", name: "router-gap", args: []string{"odd0", "2"},
		wantCode: ExitUsage, wantErr: "Router 'odd0' has no port number 2 - max (3)"},
	{fixture: "edge", name: "iwarp", args: []string{"iwarp0"},
		wantCode: ExitUsage, wantErr: "'iwarp0' IB device can't be found"},
	{fixture: "edge", name: "json", args: []string{"--json"}},

	// nonode0 has no node_type: left out, as libibumad leaves it, and told.
	{fixture: "broken", name: "all", wantCode: ExitFailure,
		wantErr: nonode0Unread + "stat of IB device 'many0' failed: /sys/class/infiniband/many0/ports: port 10: libibumad reads ports 0 to 9 only"},
	{fixture: "broken", name: "list", args: []string{"-l"}, wantCode: ExitFailure, cExitsZero: true,
		wantErr: strings.TrimSuffix(nonode0Unread, "\n")},
	{fixture: "broken", name: "short", args: []string{"-s"}, wantCode: ExitFailure,
		wantErr: nonode0Unread + "stat of IB device 'many0' failed: /sys/class/infiniband/many0/ports: port 10: libibumad reads ports 0 to 9 only"},
	{fixture: "broken", name: "ports", args: []string{"-p"}, wantCode: ExitFailure,
		wantErr: nonode0Unread + "can't list ports: /sys/class/infiniband/many0/ports: port 10: libibumad reads ports 0 to 9 only"},
	{fixture: "broken", name: "good", args: []string{"good0"}},
	{fixture: "broken", name: "noports", args: []string{"noports0"}, wantCode: ExitFailure,
		wantErr: "stat of IB device 'noports0' failed: readdir /sys/class/infiniband/noports0/ports: no such file or directory"},
	{fixture: "broken", name: "nonode", args: []string{"nonode0"},
		wantCode: ExitFailure, wantErr: "'nonode0' IB device can't be read: " + strings.TrimSuffix(nonode0Unread, "\n")},
	{fixture: "broken", name: "json", args: []string{"--json"}, wantCode: ExitFailure,
		wantErr: nonode0Unread + "stat of IB device 'many0' failed: /sys/class/infiniband/many0/ports: port 10: libibumad reads ports 0 to 9 only"},

	{fixture: "none", name: "all"},
	{fixture: "none", name: "list", args: []string{"-l"}},
	{fixture: "none", name: "ports", args: []string{"-p"}},
	{fixture: "none", name: "json", args: []string{"--json"}},
	{fixture: "none", name: "nosuch", args: []string{"mlx5_0"},
		wantCode: ExitUsage, wantErr: "'mlx5_0' IB device can't be found"},
	{fixture: "empty", name: "all"},
	{fixture: "unreadable", name: "all", wantCode: ExitFailure,
		wantErr: "can't list IB device names: readdir /sys/class/infiniband: not implemented"},
}

// nonode0Unread is the line for the broken fixture's device without a
// node_type.
const nonode0Unread = "open /sys/class/infiniband/nonode0/node_type: no such file or directory\n"

// runIbstatCase parses the case's argv and runs ibstat on its fixture.
func runIbstatCase(t *testing.T, tc ibstatCase) (string, error) {
	t.Helper()
	var opts *ibstatOptions
	err := parseToolArgs(t, "ibstat", func(f *Factory) *cobra.Command {
		return newIbstatCmd(f, func(o *ibstatOptions) error { opts = o; return nil })
	}, tc.args)
	if err != nil {
		t.Fatalf("parsing %q: %v", tc.args, err)
	}
	var out bytes.Buffer
	opts.IO.Out = &out
	opts.Sysfs = sysfsFixture(tc.fixture)
	err = ibstatRun(opts)
	return out.String(), err
}

func TestIbstatGolden(t *testing.T) {
	for _, tc := range ibstatCases {
		t.Run(tc.fixture+"/"+tc.name, func(t *testing.T) {
			got, err := runIbstatCase(t, tc)
			checkGolden(t, "ibstat", tc.fixture, tc.name, tc.wantCode, tc.wantErr, got, err)
		})
	}
}

// TestIbstatMain runs ibstat end to end through the dispatcher, with the
// tree named by --sysfs or $IBTOOL_SYSFS.
func TestIbstatMain(t *testing.T) {
	tree := filepath.Join(sysfsFixtures, "rxe")
	want, err := os.ReadFile("testdata/ibstat/rxe/all.golden")
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []map[string]string{nil, {"IBTOOL_SYSFS": tree}} {
		f, out, errOut := testFactory(env)
		args := []string{"ibstat", "--sysfs", tree}
		if env != nil {
			args = args[:1]
		}
		if code := Main(args, f); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if diff := cmp.Diff(string(want), out.String()); diff != "" {
			t.Errorf("unexpected output (-want +got):\n%s", diff)
		}
	}
	f, out, errOut := testFactory(nil)
	code := Main([]string{"ibstat", "--sysfs", tree, "rxe0", "2"}, f)
	wantErr := "ibstat: CA 'rxe0' has no port number 2 - max (1)\n"
	if code != ExitUsage || out.Len() != 0 || errOut.String() != wantErr {
		t.Errorf("missing port: exit %d, stdout %q, stderr %q; want %d and %q", code, out, errOut, ExitUsage, wantErr)
	}
}

func TestIbstatWriteFailure(t *testing.T) {
	for _, args := range [][]string{nil, {"-l"}, {"-p"}, {"--json"}} {
		var opts *ibstatOptions
		err := parseToolArgs(t, "ibstat", func(f *Factory) *cobra.Command {
			return newIbstatCmd(f, func(o *ibstatOptions) error { opts = o; return nil })
		}, args)
		if err != nil {
			t.Fatal(err)
		}
		opts.IO.Out = failingWriter{}
		opts.Sysfs = sysfsFixture("mlx5")
		if err := ibstatRun(opts); ExitCode(err) != ExitFailure {
			t.Errorf("%q to a failing stdout: %v", args, err)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// cToolsInNamespace skips the test unless the real tools can run on a
// fixture tree here: they read /sys directly, so the tests bind-mount a
// fixture's class directory over /sys/class in a private mount namespace,
// which takes root and unshare(1).
func cToolsInNamespace(t *testing.T, tools ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("differential test against infiniband-diags: skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to bind-mount a fixture over /sys/class")
	}
	for _, tool := range append([]string{"unshare"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	if err := exec.Command("unshare", "-m", "true").Run(); err != nil {
		t.Skipf("cannot make a mount namespace: %v", err)
	}
}

// runCTool runs a real tool with the fixture tree mounted as /sys/class and
// returns its stdout and whether it exited 0. With uverbs > 0 it also
// presents /dev/infiniband/uverbs0..N-1, which libibverbs checks for.
func runCTool(t *testing.T, fixture string, uverbs int, argv ...string) (string, bool) {
	t.Helper()
	return runCToolOn(t, fixtureClassDir(t, fixture), uverbs, argv...)
}

// runCToolOn is runCTool with the class directory to mount as /sys/class.
func runCToolOn(t *testing.T, class string, uverbs int, argv ...string) (string, bool) {
	t.Helper()
	script := `mount --bind "$0" /sys/class || exit 99
if [ "$1" -gt 0 ]; then
	mount -t tmpfs none /dev && mkdir /dev/infiniband || exit 99
	i=0; while [ $i -lt "$1" ]; do : >/dev/infiniband/uverbs$i; i=$((i+1)); done
fi
shift; exec "$@"`
	args := append([]string{"-m", "sh", "-c", script, class, strconv.Itoa(uverbs)}, argv...)
	cmd := exec.Command("unshare", args...)
	cmd.Dir = t.TempDir()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 99 {
		t.Skipf("cannot mount the fixture: %s", errOut.String())
	}
	return out.String(), err == nil
}

// TestIntegrationIbstatMatchesC checks the text goldens against
// infiniband-diags' ibstat run on the same fixture trees.
func TestIntegrationIbstatMatchesC(t *testing.T) {
	cToolsInNamespace(t, "ibstat")
	for _, tc := range ibstatCases {
		if strings.Contains(strings.Join(tc.args, " "), "--json") {
			continue
		}
		t.Run(tc.fixture+"/"+tc.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "ibstat", tc.fixture, tc.name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := runCTool(t, tc.fixture, 0, append([]string{"ibstat"}, tc.args...)...)
			if ok != (tc.wantCode == 0 || tc.cExitsZero) {
				t.Errorf("infiniband-diags' ibstat succeeded: %v; ibtool exits %d", ok, tc.wantCode)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("golden differs from infiniband-diags (-golden +ibstat):\n%s", diff)
			}
		})
	}
}

// TestWriteJSONList checks that the streamed list is byte for byte the
// document writeJSONDocument writes.
func TestWriteJSONList(t *testing.T) {
	type rec struct {
		A int               `json:"a"`
		B string            `json:"b"`
		C []int             `json:"c"`
		D map[string]string `json:"d,omitempty"`
	}
	for _, items := range [][]any{
		nil,
		{rec{A: 1, B: "x<y>", C: []int{1, 2}}},
		{rec{A: 1}, rec{B: "two", D: map[string]string{"k": "v"}}, struct {
			Z []any `json:"z"`
		}{[]any{}}},
	} {
		var want, got bytes.Buffer
		doc := items
		if doc == nil {
			doc = []any{}
		}
		if err := writeJSONDocument(&want, struct {
			Records []any `json:"records"`
		}{doc}); err != nil {
			t.Fatal(err)
		}
		if err := writeJSONList(&got, "records", items); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.String(), got.String()); diff != "" {
			t.Errorf("%d items (-want +got):\n%s", len(items), diff)
		}
	}
}
