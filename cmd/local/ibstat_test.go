package local

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

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
			ibstatOptions{Port: -1, Common: cmdutil.CommonOptions{JSON: true, Sysfs: "/tmp/sys", Verbose: 1}}, 0},
		{"bad port", []string{"mlx5_0", "one"}, ibstatOptions{}, cmdutil.ExitUsage},
		{"negative port", []string{"mlx5_0", "--", "-1"}, ibstatOptions{}, cmdutil.ExitUsage},
		{"huge port", []string{"mlx5_0", "99999999999"}, ibstatOptions{}, cmdutil.ExitUsage},
		{"empty hex", []string{"mlx5_0", "0x"}, ibstatOptions{}, cmdutil.ExitUsage},
		{"three args", []string{"mlx5_0", "1", "2"}, ibstatOptions{}, cmdutil.ExitUsage},
		{"unknown flag", []string{"-C", "mlx5_0"}, ibstatOptions{}, cmdutil.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *ibstatOptions
			err := cmdtest.ParseToolArgs(t, "ibstat", func(f *cmdutil.Factory) *cobra.Command {
				return newIbstatCmd(f, func(o *ibstatOptions) error { got = o; return nil })
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
		wantCode: cmdutil.ExitUsage, wantErr: "CA 'mlx5_0' has no port number 3 - max (2)"},
	{fixture: "mlx5", name: "no-port0", args: []string{"mlx5_0", "0"},
		wantCode: cmdutil.ExitUsage, wantErr: "CA 'mlx5_0' has no port number 0 - max (2)"},
	{fixture: "mlx5", name: "nosuch", args: []string{"nosuch", "1"},
		wantCode: cmdutil.ExitUsage, wantErr: "'nosuch' IB device can't be found"},
	{fixture: "mlx5", name: "json", args: []string{"--json"}},
	{fixture: "mlx5", name: "json-list", args: []string{"--json", "-l"}},
	{fixture: "mlx5", name: "json-ports", args: []string{"--json", "-p"}},
	{fixture: "mlx5", name: "json-short", args: []string{"--json", "-s", "mlx5_1"}},
	{fixture: "mlx5", name: "json-ca-port", args: []string{"--json", "mlx5_0", "2"}},
	{fixture: "mlx5", name: "json-no-port", args: []string{"--json", "mlx5_0", "3"},
		wantCode: cmdutil.ExitUsage, wantErr: "CA 'mlx5_0' has no port number 3 - max (2)"},

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
		wantCode: cmdutil.ExitUsage, wantErr: "Switch 'sw0' has no port number 1 - max (0)"},
	{fixture: "edge", name: "router-gap", args: []string{"odd0", "2"},
		wantCode: cmdutil.ExitUsage, wantErr: "Router 'odd0' has no port number 2 - max (3)"},
	{fixture: "edge", name: "iwarp", args: []string{"iwarp0"},
		wantCode: cmdutil.ExitUsage, wantErr: "'iwarp0' IB device can't be found"},
	{fixture: "edge", name: "json", args: []string{"--json"}},

	// nonode0 has no node_type: left out, as libibumad leaves it, and told.
	{fixture: "broken", name: "all", wantCode: cmdutil.ExitFailure,
		wantErr: nonode0Unread + "stat of IB device 'many0' failed: /sys/class/infiniband/many0/ports: port 10: libibumad reads ports 0 to 9 only"},
	{fixture: "broken", name: "list", args: []string{"-l"}, wantCode: cmdutil.ExitFailure, cExitsZero: true,
		wantErr: strings.TrimSuffix(nonode0Unread, "\n")},
	{fixture: "broken", name: "short", args: []string{"-s"}, wantCode: cmdutil.ExitFailure,
		wantErr: nonode0Unread + "stat of IB device 'many0' failed: /sys/class/infiniband/many0/ports: port 10: libibumad reads ports 0 to 9 only"},
	{fixture: "broken", name: "ports", args: []string{"-p"}, wantCode: cmdutil.ExitFailure,
		wantErr: nonode0Unread + "can't list ports: /sys/class/infiniband/many0/ports: port 10: libibumad reads ports 0 to 9 only"},
	{fixture: "broken", name: "good", args: []string{"good0"}},
	{fixture: "broken", name: "noports", args: []string{"noports0"}, wantCode: cmdutil.ExitFailure,
		wantErr: "stat of IB device 'noports0' failed: readdir /sys/class/infiniband/noports0/ports: no such file or directory"},
	{fixture: "broken", name: "nonode", args: []string{"nonode0"},
		wantCode: cmdutil.ExitFailure, wantErr: "'nonode0' IB device can't be read: " + strings.TrimSuffix(nonode0Unread, "\n")},
	{fixture: "broken", name: "json", args: []string{"--json"}, wantCode: cmdutil.ExitFailure,
		wantErr: nonode0Unread + "stat of IB device 'many0' failed: /sys/class/infiniband/many0/ports: port 10: libibumad reads ports 0 to 9 only"},

	{fixture: "none", name: "all"},
	{fixture: "none", name: "list", args: []string{"-l"}},
	{fixture: "none", name: "ports", args: []string{"-p"}},
	{fixture: "none", name: "json", args: []string{"--json"}},
	{fixture: "none", name: "nosuch", args: []string{"mlx5_0"},
		wantCode: cmdutil.ExitUsage, wantErr: "'mlx5_0' IB device can't be found"},
	{fixture: "empty", name: "all"},
	{fixture: "unreadable", name: "all", wantCode: cmdutil.ExitFailure,
		wantErr: "can't list IB device names: readdir /sys/class/infiniband: not implemented"},
}

// nonode0Unread is the line for the broken fixture's device without a
// node_type.
const nonode0Unread = "open /sys/class/infiniband/nonode0/node_type: no such file or directory\n"

// runIbstatCase parses the case's argv and runs ibstat on its fixture.
func runIbstatCase(t *testing.T, tc ibstatCase) (string, error) {
	t.Helper()
	var opts *ibstatOptions
	err := cmdtest.ParseToolArgs(t, "ibstat", func(f *cmdutil.Factory) *cobra.Command {
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
		f, out, errOut := cmdutil.NewTestFactory(env)
		args := []string{"ibstat", "--sysfs", tree}
		if env != nil {
			args = args[:1]
		}
		if code := cmdutil.RunTool(args, f); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if diff := cmp.Diff(string(want), out.String()); diff != "" {
			t.Errorf("unexpected output (-want +got):\n%s", diff)
		}
	}
	f, out, errOut := cmdutil.NewTestFactory(nil)
	code := cmdutil.RunTool([]string{"ibstat", "--sysfs", tree, "rxe0", "2"}, f)
	wantErr := "ibstat: CA 'rxe0' has no port number 2 - max (1)\n"
	if code != cmdutil.ExitUsage || out.Len() != 0 || errOut.String() != wantErr {
		t.Errorf("missing port: exit %d, stdout %q, stderr %q; want %d and %q", code, out, errOut, cmdutil.ExitUsage, wantErr)
	}
}

func TestIbstatWriteFailure(t *testing.T) {
	for _, args := range [][]string{nil, {"-l"}, {"-p"}, {"--json"}} {
		var opts *ibstatOptions
		err := cmdtest.ParseToolArgs(t, "ibstat", func(f *cmdutil.Factory) *cobra.Command {
			return newIbstatCmd(f, func(o *ibstatOptions) error { opts = o; return nil })
		}, args)
		if err != nil {
			t.Fatal(err)
		}
		opts.IO.Out = failingWriter{}
		opts.Sysfs = sysfsFixture("mlx5")
		if err := ibstatRun(opts); cmdutil.ExitCode(err) != cmdutil.ExitFailure {
			t.Errorf("%q to a failing stdout: %v", args, err)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

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
		if err := cmdutil.WriteJSONDocument(&want, struct {
			Records []any `json:"records"`
		}{doc}); err != nil {
			t.Fatal(err)
		}
		if err := cmdutil.WriteJSONList(&got, "records", items); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.String(), got.String()); diff != "" {
			t.Errorf("%d items (-want +got):\n%s", len(items), diff)
		}
	}
}
