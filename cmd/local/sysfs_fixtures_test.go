package local

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// The sysfs fixture trees live with the package that reads them.
const sysfsFixtures = "../../pkg/rdma/testdata"

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

// cmpCommonOptions compares CommonOptions by their parsed flags, leaving
// out the context the command runs in.
var cmpCommonOptions = cmp.Options{
	cmp.AllowUnexported(cmdutil.CommonOptions{}),
	cmpopts.IgnoreFields(cmdutil.CommonOptions{}, "Ctx", "Open"),
}

// goldenCase is one run of a local tool on a sysfs fixture; its output is
// testdata/<tool>/<fixture>/<name>.golden.
type goldenCase struct {
	fixture  string
	name     string
	args     []string
	wantCode int
	wantErr  string
	// cExitsZero marks a failure infiniband-diags keeps quiet about: it
	// prints a default for what it could not read and exits 0, where
	// ibtool prints the same and then says what it could not read.
	cExitsZero bool
}

// checkGolden checks a run's exit code, error text and output against
// what the case and its golden file say.
func checkGolden(t *testing.T, tool, fixture, name string, wantCode int, wantErr, got string, err error) {
	t.Helper()
	if code := cmdutil.ExitCode(err); code != wantCode {
		t.Errorf("exit code %d (%v), want %d", code, err, wantCode)
	}
	if err != nil && err.Error() != wantErr {
		t.Errorf("error %q, want %q", err, wantErr)
	}
	cmdtest.CheckSysfsGolden(t, filepath.Join("testdata", tool, fixture, name+".golden"), got)
}

// copyFixture copies a sysfs fixture tree to a temporary directory the
// test may write.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join(sysfsFixtures, name)+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	return dst
}
