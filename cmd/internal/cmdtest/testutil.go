package cmdtest

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// CheckParseErr checks what parsing a tool's arguments returned: a usage
// error containing wantErr, or no error when wantErr is empty. It reports
// whether the case goes on to check the parsed options.
func CheckParseErr(t *testing.T, err error, wantErr string) bool {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) || cmdutil.ExitCode(err) != cmdutil.ExitUsage {
			t.Errorf("error %v (exit %d), want usage error %q", err, cmdutil.ExitCode(err), wantErr)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

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

// CheckSysfsGolden compares got with the golden file path, or rewrites the
// file under -update.
func CheckSysfsGolden(t *testing.T, path, got string) {
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

// ParseToolArgs runs argv through a tool's command as dispatch would,
// with runF catching the options instead of running.
func ParseToolArgs(t *testing.T, name string, newCmd func(*cmdutil.Factory) *cobra.Command, args []string) error {
	t.Helper()
	f, _, _ := cmdutil.NewTestFactory(nil)
	c := cmdutil.ToolCommand(f, cmdutil.Tool{Name: name, New: newCmd})
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	c.SetArgs(args)
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	return c.Execute()
}

// Hca1NodeInfo is Hca1's NodeInfo in ibsim's net.2sw2path4hca example.
const Hca1NodeInfo = "0101010200000000001000000000000000100000000000000010000100400000000000a101000000"

// NoPort turns a fake transactor opener into CommonOptions.Open's form, for
// tools that do not ask for the local port.
func NoPort(open func() (*madrpc.Transactor, error)) func() (*madrpc.Transactor, *rdma.Port, error) {
	return func() (*madrpc.Transactor, *rdma.Port, error) {
		x, err := open()
		return x, nil, err
	}
}
