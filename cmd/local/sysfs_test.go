package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// Ways to make a file of a copied fixture tree fail to read. Tests run as
// root, for whom permission bits do not stop a read, so they change what
// is there instead.
var (
	// asDirectory puts an empty directory in place of the file: it opens,
	// and the read fails with EISDIR, as a sysfs attribute whose driver
	// cannot give a value fails its read (EINVAL, EIO).
	asDirectory = func(t *testing.T, path string) {
		t.Helper()
		removeFile(t, path)
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// removed deletes the file: the open fails with ENOENT.
	removed = removeFile
	// dangling puts a symbolic link to nothing in place of the file: the
	// open fails with ENOENT too.
	dangling = func(t *testing.T, path string) {
		t.Helper()
		removeFile(t, path)
		if err := os.Symlink("nowhere", path); err != nil {
			t.Fatal(err)
		}
	}
)

func removeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// sysfsFailureCase runs a local tool on a copy of a fixture tree in which
// some files do not read. Its stdout is testdata/sysfs_errors/<name>.golden,
// which for ibstat and ibstatus is also what infiniband-diags prints on the
// same tree (TestIntegrationSysfsFailuresMatchC).
type sysfsFailureCase struct {
	name    string
	fixture string
	// breaks maps files, relative to the tree, to what is done to them.
	breaks   map[string]func(*testing.T, string)
	args     []string // argv: the tool and its arguments, without --sysfs
	wantCode int
	// wantErr is stderr, with $SYSFS for the copied tree.
	wantErr string
}

// mlx5P1 is the directory of port 1 of mlx5_0 in the mlx5 fixture.
const mlx5P1 = "class/infiniband/mlx5_0/ports/1/"

var sysfsFailureCases = []sysfsFailureCase{
	{name: "ibv_devices-guid-dir", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){"class/infiniband/mlx5_1/node_guid": asDirectory},
		args:   []string{"ibv_devices"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibv_devices: read $SYSFS/class/infiniband/mlx5_1/node_guid: is a directory\n"},
	{name: "ibv_devices-guid-removed", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){"class/infiniband/mlx5_1/node_guid": removed},
		args:   []string{"ibv_devices"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibv_devices: open $SYSFS/class/infiniband/mlx5_1/node_guid: no such file or directory\n"},
	{name: "ibv_devices-guid-dangling", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){"class/infiniband/mlx5_0/node_guid": dangling},
		args:   []string{"ibv_devices", "--json"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibv_devices: open $SYSFS/class/infiniband/mlx5_0/node_guid: no such file or directory\n"},
	{name: "ibv_devices-ibdev", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){"class/infiniband_verbs/uverbs1/ibdev": asDirectory},
		args:   []string{"ibv_devices"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibv_devices: read $SYSFS/class/infiniband_verbs/uverbs1/ibdev: is a directory\n"},

	{name: "ibstatus-state-rate", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){mlx5P1 + "state": asDirectory, mlx5P1 + "rate": asDirectory},
		args:   []string{"ibstatus"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibstatus: read $SYSFS/class/infiniband/mlx5_0/ports/1/state: is a directory\n" +
			"ibstatus: read $SYSFS/class/infiniband/mlx5_0/ports/1/rate: is a directory\n"},
	{name: "ibstatus-gid-removed", fixture: "rxe",
		breaks: map[string]func(*testing.T, string){"class/infiniband/rxe0/ports/1/gids/0": removed},
		args:   []string{"ibstatus", "rxe0:1"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibstatus: open $SYSFS/class/infiniband/rxe0/ports/1/gids/0: no such file or directory\n"},
	// Kernels before 2.6.37 write no link_layer: the script's "IB".
	{name: "ibstatus-link-layer-removed", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){mlx5P1 + "link_layer": removed},
		args:   []string{"ibstatus", "mlx5_0:1"}},
	{name: "ibstatus-link-layer-dir", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){mlx5P1 + "link_layer": asDirectory},
		args:   []string{"ibstatus", "mlx5_0:1"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibstatus: read $SYSFS/class/infiniband/mlx5_0/ports/1/link_layer: is a directory\n"},
	// A runtime failure outranks a port named that does not exist.
	{name: "ibstatus-state-and-no-port", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){mlx5P1 + "state": asDirectory},
		args:   []string{"ibstatus", "mlx5_0:7", "mlx5_0:1"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibstatus: device 'mlx5_0' port 7: sys files not found ($SYSFS/class/infiniband/mlx5_0/ports/7)\n" +
			"ibstatus: read $SYSFS/class/infiniband/mlx5_0/ports/1/state: is a directory\n"},
	{name: "ibstatus-json", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){mlx5P1 + "state": asDirectory, mlx5P1 + "lid": removed},
		args:   []string{"ibstatus", "--json", "mlx5_0:1"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibstatus: open $SYSFS/class/infiniband/mlx5_0/ports/1/lid: no such file or directory\n" +
			"ibstatus: read $SYSFS/class/infiniband/mlx5_0/ports/1/state: is a directory\n"},

	{name: "ibstat-fw-ver", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){"class/infiniband/mlx5_0/fw_ver": asDirectory},
		args:   []string{"ibstat"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibstat: read $SYSFS/class/infiniband/mlx5_0/fw_ver: is a directory\n"},
	// rxe writes no hca_type: libibumad's empty CA type, no problem.
	{name: "ibstat-hca-type-removed", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){"class/infiniband/mlx5_0/hca_type": removed},
		args:   []string{"ibstat", "-s"}},
	{name: "ibstat-short-link-layer", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){mlx5P1 + "link_layer": asDirectory, "class/infiniband/mlx5_1/hw_rev": asDirectory},
		args:   []string{"ibstat", "-s"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibstat: read $SYSFS/class/infiniband/mlx5_1/hw_rev: is a directory\n"},
	{name: "ibstat-link-layer", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){mlx5P1 + "link_layer": asDirectory},
		args:   []string{"ibstat", "mlx5_0"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibstat: read $SYSFS/class/infiniband/mlx5_0/ports/1/link_layer: is a directory\n"},
	// CA PORT shows the port alone: what else did not read does not matter.
	{name: "ibstat-other-port", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){mlx5P1 + "link_layer": asDirectory, "class/infiniband/mlx5_0/fw_ver": asDirectory},
		args:   []string{"ibstat", "mlx5_0", "2"}},
	{name: "ibstat-node-type", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){"class/infiniband/mlx5_0/node_type": asDirectory},
		args:   []string{"ibstat", "-l"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibstat: read $SYSFS/class/infiniband/mlx5_0/node_type: is a directory\n"},
	{name: "ibstat-node-type-named", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){"class/infiniband/mlx5_0/node_type": removed},
		args:   []string{"ibstat", "mlx5_0"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibstat: 'mlx5_0' IB device can't be read: open $SYSFS/class/infiniband/mlx5_0/node_type: no such file or directory\n"},
	{name: "ibstat-json", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){"class/infiniband/mlx5_1/fw_ver": asDirectory, "class/infiniband/mlx5_1/ports/1/link_layer": asDirectory},
		args:   []string{"ibstat", "--json", "mlx5_1", "1"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibstat: read $SYSFS/class/infiniband/mlx5_1/fw_ver: is a directory\n" +
			"ibstat: read $SYSFS/class/infiniband/mlx5_1/ports/1/link_layer: is a directory\n"},
	// A required file: libibumad fails the device, and so does ibstat.
	{name: "ibstat-rate", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){mlx5P1 + "rate": asDirectory},
		args:   []string{"ibstat", "mlx5_0"}, wantCode: cmdutil.ExitFailure,
		wantErr: "ibstat: stat of IB device 'mlx5_0' failed: read $SYSFS/class/infiniband/mlx5_0/ports/1/rate: is a directory\n"},

	{name: "set_nodedesc-dir", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){"class/infiniband/mlx5_0/node_desc": asDirectory},
		args:   []string{"set_nodedesc", "-v"}, wantCode: cmdutil.ExitFailure,
		wantErr: "set_nodedesc: read $SYSFS/class/infiniband/mlx5_0/node_desc: is a directory\n"},
	{name: "set_nodedesc-removed", fixture: "mlx5",
		breaks: map[string]func(*testing.T, string){"class/infiniband/mlx5_1/node_desc": removed},
		args:   []string{"set_nodedesc", "-v"}, wantCode: cmdutil.ExitFailure,
		wantErr: "set_nodedesc: open $SYSFS/class/infiniband/mlx5_1/node_desc: no such file or directory\n"},
}

// brokenFixture copies the case's fixture and breaks its files.
func brokenFixture(t *testing.T, tc sysfsFailureCase) string {
	t.Helper()
	tree := copyFixture(t, tc.fixture)
	for name, brk := range tc.breaks {
		brk(t, filepath.Join(tree, filepath.FromSlash(name)))
	}
	return tree
}

func TestSysfsFailures(t *testing.T) {
	for _, tc := range sysfsFailureCases {
		t.Run(tc.name, func(t *testing.T) {
			tree := brokenFixture(t, tc)
			f, out, errOut := cmdutil.NewTestFactory(nil)
			argv := append([]string{tc.args[0], "--sysfs", tree}, tc.args[1:]...)
			code := cmdutil.RunTool(argv, f)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d", code, tc.wantCode)
			}
			wantErr := strings.ReplaceAll(tc.wantErr, "$SYSFS", tree)
			if diff := cmp.Diff(wantErr, errOut.String()); diff != "" {
				t.Errorf("unexpected stderr (-want +got):\n%s", diff)
			}
			cmdtest.CheckSysfsGolden(t, filepath.Join("testdata", "sysfs_errors", tc.name+".golden"), out.String())
		})
	}
}

// TestIntegrationSysfsFailuresMatchC checks the goldens of
// TestSysfsFailures against infiniband-diags on the same broken trees:
// ibtool's stdout is theirs, whatever it could not read.
func TestIntegrationSysfsFailuresMatchC(t *testing.T) {
	cToolsInNamespace(t, "ibstat", "ibstatus")
	for _, tc := range sysfsFailureCases {
		if tc.args[0] != "ibstat" && tc.args[0] != "ibstatus" || strings.Contains(strings.Join(tc.args, " "), "--json") {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "sysfs_errors", tc.name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			tree := brokenFixture(t, tc)
			got, _ := runCToolOn(t, filepath.Join(tree, "class"), 0, tc.args...)
			if tc.args[0] == "ibstatus" {
				// The script's fatal error line goes to stdout.
				if i := strings.LastIndex(got, "Fatal error:  "); i >= 0 {
					got = got[:i]
				}
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("golden differs from infiniband-diags (-golden +C):\n%s", diff)
			}
		})
	}
}

// TestSysfsRoot checks that every tool taking --sysfs or $IBTOOL_SYSFS
// refuses a directory that is not there, or not a directory, with one
// line and exit 2, before it reads anything.
func TestSysfsRoot(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "; want the sysfs mount point, such as /sys\n"
	tests := []struct {
		args    []string
		env     map[string]string
		wantErr string
	}{
		{[]string{"ibstat", "--sysfs", "/nonexistent"}, nil, "ibstat: --sysfs /nonexistent: no such directory" + want},
		{[]string{"ibstat", "-l"}, map[string]string{"IBTOOL_SYSFS": "/nonexistent"}, "ibstat: IBTOOL_SYSFS=/nonexistent: no such directory" + want},
		{[]string{"ibstat", "--sysfs", file}, nil, "ibstat: --sysfs " + file + ": not a directory" + want},
		{[]string{"ibstat", "--sysfs", file + "/sys"}, nil, "ibstat: --sysfs " + file + "/sys: no such directory" + want},
		{[]string{"ibstatus", "--sysfs", "/nonexistent"}, nil, "ibstatus: --sysfs /nonexistent: no such directory" + want},
		{[]string{"ibv_devices", "--sysfs", "/nonexistent"}, nil, "ibv_devices: --sysfs /nonexistent: no such directory" + want},
		{[]string{"set_nodedesc", "-v", "--sysfs", "/nonexistent"}, nil, "set_nodedesc: --sysfs /nonexistent: no such directory" + want},
		// The flag wins over the variable, as for every other setting.
		{[]string{"ibstat", "--sysfs", "/nonexistent"}, map[string]string{"IBTOOL_SYSFS": "/sys"}, "ibstat: --sysfs /nonexistent: no such directory" + want},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, out, errOut := cmdutil.NewTestFactory(tt.env)
			code := cmdutil.RunTool(tt.args, f)
			if code != cmdutil.ExitUsage || out.Len() != 0 {
				t.Errorf("exit %d, stdout %q; want %d and nothing", code, out, cmdutil.ExitUsage)
			}
			if diff := cmp.Diff(tt.wantErr, errOut.String()); diff != "" {
				t.Errorf("unexpected stderr (-want +got):\n%s", diff)
			}
		})
	}
}
