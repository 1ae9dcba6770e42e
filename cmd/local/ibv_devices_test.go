package local

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestIbvDevicesArgs(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     cmdutil.CommonOptions
		wantCode int
	}{
		{"none", nil, cmdutil.CommonOptions{}, 0},
		{"json", []string{"--json"}, cmdutil.CommonOptions{JSON: true}, 0},
		{"sysfs and debug", []string{"--sysfs", "/x", "-d"}, cmdutil.CommonOptions{Sysfs: "/x", Verbose: 1}, 0},
		{"an argument", []string{"mlx5_0"}, cmdutil.CommonOptions{}, cmdutil.ExitUsage},
		{"unknown flag", []string{"-l"}, cmdutil.CommonOptions{}, cmdutil.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *ibvDevicesOptions
			err := cmdtest.ParseToolArgs(t, "ibv_devices", func(f *cmdutil.Factory) *cobra.Command {
				return newIbvDevicesCmd(f, func(o *ibvDevicesOptions) error { got = o; return nil })
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
			if diff := cmp.Diff(tt.want, got.Common, cmpCommonOptions); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
		})
	}
}

// ibvDevicesCase is one run of ibv_devices on a fixture tree.
type ibvDevicesCase struct {
	fixture  string
	name     string // golden file testdata/ibv_devices/<fixture>/<name>.golden
	json     bool
	wantCode int
	wantErr  string
	// cUverbs is how many /dev/infiniband/uverbsN the comparison with the
	// real tool presents; -1 skips the comparison (no provider library
	// would claim the fixture's devices).
	cUverbs int
}

var ibvDevicesCases = []ibvDevicesCase{
	{fixture: "mlx5", name: "list", cUverbs: 2},
	{fixture: "mlx5", name: "json", json: true},
	{fixture: "rxe", name: "list", cUverbs: 1},
	// sw0's node GUID does not parse: rdma-core prints 0, and so does
	// ibtool, then says so.
	{fixture: "edge", name: "list", cUverbs: -1, wantCode: cmdutil.ExitFailure, wantErr: sw0GUIDUnread},
	{fixture: "edge", name: "json", json: true, wantCode: cmdutil.ExitFailure, wantErr: sw0GUIDUnread},
	{fixture: "empty", name: "list"},
	{fixture: "empty", name: "json", json: true},
	{fixture: "broken", name: "list", wantCode: cmdutil.ExitFailure,
		wantErr: "Failed to get IB devices list: readdir /sys/class/infiniband_verbs: no such file or directory"},
	{fixture: "none", name: "list", wantCode: cmdutil.ExitFailure,
		wantErr: "Failed to get IB devices list: readdir /sys/class/infiniband_verbs: file does not exist"},
}

const sw0GUIDUnread = `parse /sys/class/infiniband/sw0/node_guid: invalid node GUID "0008 f105 0001 0000": want four hex numbers separated by colons`

func TestIbvDevicesGolden(t *testing.T) {
	for _, tc := range ibvDevicesCases {
		t.Run(tc.fixture+"/"+tc.name, func(t *testing.T) {
			var out bytes.Buffer
			f, _, _ := cmdutil.NewTestFactory(nil)
			o := &ibvDevicesOptions{IO: f.IO, Sysfs: sysfsFixture(tc.fixture), Common: cmdutil.CommonOptions{JSON: tc.json}}
			o.IO.Out = &out
			err := ibvDevicesRun(o)
			checkGolden(t, "ibv_devices", tc.fixture, tc.name, tc.wantCode, tc.wantErr, out.String(), err)
		})
	}
}

func TestIbvNodeGUID(t *testing.T) {
	const colons = `: want four hex numbers separated by colons`
	tests := []struct {
		content string
		want    rdma.GUID
		wantErr string // after "parse /sys/class/infiniband/d/node_guid: invalid node GUID "
	}{
		{"0c42:a103:00a1:b2c4\n", 0x0c42a10300a1b2c4, ""},
		{"0c42:a103:00a1:b2c4", 0x0c42a10300a1b2c4, ""},
		{" 1: 2:0x3:-1\n", 0x000100020003ffff, ""},
		{"12345:0:0:0\n", 0x2345000000000000, ""},
		{"1:2:3:4:5\n", 0x0001000200030004, ""},
		{"0008 f105 0001 0000\n", 0, `"0008 f105 0001 0000"` + colons}, // sscanf wants the colons
		{"1:2:3\n", 0, `"1:2:3"` + colons},
		{"1:2:3:\n", 0, `"1:2:3:"` + colons},
		{"", 0, `""` + colons},
		// 24 bytes without a newline do not fit libibverbs' buffer.
		{"0001:0002:0003:0004xxxxx", 0, `"0001:0002:0003:0004xxxxx": longer than libibverbs reads (23 bytes and a newline)`},
		{"0001:0002:0003:0004xxxx\n", 0x0001000200030004, ""},
		{"1:2:3:4\x00junk\n", 0x0001000200030004, ""},
		{"0001:0002:0003:0004\x00junk", 0, `"0001:0002:0003:0004\x00junk": longer than libibverbs reads (23 bytes and a newline)`}, // 24 bytes, no newline
		{"1:2:3:4\n0000000000000000000000000", 0, `"1:2:3:4\n0000000000000000": longer than libibverbs reads (23 bytes and a newline)`},
	}
	for _, tt := range tests {
		m := fstest.MapFS{"class/infiniband/d/node_guid": &fstest.MapFile{Data: []byte(tt.content)}}
		got, err := ibvNodeGUID(rdma.NewFS(m, "/sys"), "d")
		wantErr := ""
		if tt.wantErr != "" {
			wantErr = "parse /sys/class/infiniband/d/node_guid: invalid node GUID " + tt.wantErr
		}
		if got != tt.want || errString(err) != wantErr {
			t.Errorf("node_guid %q -> %v, %v; want %v, %s", tt.content, got, err, tt.want, wantErr)
		}
	}
	got, err := ibvNodeGUID(rdma.NewFS(fstest.MapFS{}, "/sys"), "d")
	if want := "open /sys/class/infiniband/d/node_guid: file does not exist"; got != 0 || errString(err) != want {
		t.Errorf("no node_guid -> %v, %v; want 0, %s", got, err, want)
	}
}

// errString is err's message, "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestIbvDevicesMain(t *testing.T) {
	want, err := os.ReadFile("testdata/ibv_devices/mlx5/list.golden")
	if err != nil {
		t.Fatal(err)
	}
	f, out, errOut := cmdutil.NewTestFactory(map[string]string{"IBTOOL_SYSFS": filepath.Join(sysfsFixtures, "mlx5")})
	if code := cmdutil.RunTool([]string{"ibv_devices"}, f); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("unexpected output (-want +got):\n%s", diff)
	}
	f, _, _ = cmdutil.NewTestFactory(nil)
	o := &ibvDevicesOptions{IO: f.IO, Sysfs: sysfsFixture("mlx5")}
	o.IO.Out = failingWriter{}
	if err := ibvDevicesRun(o); cmdutil.ExitCode(err) != cmdutil.ExitFailure {
		t.Errorf("to a failing stdout: %v", err)
	}
	if got := padRight("a_device_name_longer_than_16", 16); got != "a_device_name_longer_than_16" {
		t.Errorf("padRight cut a long name: %q", got)
	}
}

// TestIntegrationIbvDevicesMatchesC compares with rdma-core's ibv_devices
// on the same trees. libibverbs asks the kernel over netlink first and
// reads sysfs only when that fails (no RDMA support loaded); where netlink
// answers, the fixture cannot stand in for the kernel and the test skips.
func TestIntegrationIbvDevicesMatchesC(t *testing.T) {
	cToolsInNamespace(t, "ibv_devices")
	if _, ok := runCTool(t, "none", 0, "ibv_devices"); ok {
		t.Skip("libibverbs gets devices over netlink here, not from the fixture")
	}
	for _, tc := range ibvDevicesCases {
		if tc.json || tc.cUverbs < 0 {
			continue
		}
		t.Run(tc.fixture+"/"+tc.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "ibv_devices", tc.fixture, tc.name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := runCTool(t, tc.fixture, tc.cUverbs, "ibv_devices")
			if ok != (tc.wantCode == 0) {
				t.Errorf("rdma-core's ibv_devices succeeded: %v; ibtool exits %d", ok, tc.wantCode)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("golden differs from rdma-core (-golden +ibv_devices):\n%s", diff)
			}
		})
	}
}

// FuzzIbvNodeGUID reads arbitrary node_guid contents: no panic, and
// whatever the kernel's own format gives back reads back the same.
func FuzzIbvNodeGUID(f *testing.F) {
	for _, s := range []string{"0c42:a103:00a1:b2c4\n", " 1: 2:0x3:-1\n", "1:2:3\n", "", "0x:0x:0x:0x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		m := fstest.MapFS{"class/infiniband/d/node_guid": &fstest.MapFile{Data: []byte(content)}}
		g, err := ibvNodeGUID(rdma.NewFS(m, "/sys"), "d")
		if err != nil && g != 0 {
			t.Errorf("%q: %v with %v", content, g, err)
		}
		m["class/infiniband/d/node_guid"] = &fstest.MapFile{Data: []byte(g.Colon() + "\n")}
		if again, err := ibvNodeGUID(rdma.NewFS(m, "/sys"), "d"); again != g || err != nil {
			t.Errorf("%v written as %q reads back as %v, %v", g, g.Colon(), again, err)
		}
	})
}
