package local

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestSetNodedesc(t *testing.T) {
	tree := copyFixture(t, "mlx5")
	run := func(args ...string) (int, string, string) {
		f, out, errOut := cmdutil.NewTestFactory(nil)
		code := cmdutil.RunTool(append([]string{"set_nodedesc.sh", "--sysfs", tree}, args...), f)
		return code, out.String(), errOut.String()
	}
	if code, out, _ := run("-v"); code != 0 || out != "mlx5_0: node01 mlx5_0\nmlx5_1: node01 mlx5_1\n" {
		t.Fatalf("-v: exit %d, %q", code, out)
	}
	if code, out, errOut := run("-C", "mlx5_1", "node17 HCA-2"); code != 0 || out != "" || errOut != "" {
		t.Fatalf("set: exit %d, %q, %q", code, out, errOut)
	}
	if code, out, _ := run("-v"); code != 0 || out != "mlx5_0: node01 mlx5_0\nmlx5_1: node17 HCA-2\n" {
		t.Errorf("after set: exit %d, %q", code, out)
	}
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-C", "nosuch", "x"}, cmdutil.ExitUsage, `no RDMA device "nosuch"`},
		{[]string{strings.Repeat("x", 65)}, cmdutil.ExitUsage, "65 bytes, at most 64"},
		{[]string{"a", "b"}, cmdutil.ExitUsage, "expected at most 1 argument"},
	}
	for _, tt := range tests {
		code, _, errOut := run(tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.msg) {
			t.Errorf("%q: exit %d, %q; want %d and %q", tt.args, code, errOut, tt.code, tt.msg)
		}
	}
	// A read-only node_desc: the error names the device and says what to do.
	if os.Getuid() != 0 {
		p := filepath.Join(tree, "class/infiniband/mlx5_0/node_desc")
		if err := os.Chmod(p, 0o444); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := run("-C", "mlx5_0", "x"); code != cmdutil.ExitFailure || !strings.Contains(errOut, "mlx5_0: ") || !strings.Contains(errOut, "run as root") {
			t.Errorf("read-only: exit %d, %q", code, errOut)
		}
	}
}

func TestSetNodedescSimulator(t *testing.T) {
	f, _, errOut := cmdutil.NewTestFactory(map[string]string{"IBSIM_SOCKNAME": "nosuch"})
	if code := cmdutil.RunTool([]string{"set_nodedesc", "x"}, f); code != cmdutil.ExitFailure || !strings.Contains(errOut.String(), "can only show them (-v)") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}

// TestSetNodedescViewSimulator checks -v on the simulator's attach point,
// which has no node_desc: the device with an empty description, then where
// to find it, exit 3.
func TestSetNodedescViewSimulator(t *testing.T) {
	// The rxe fixture has a node_desc; a copy without one stands in for
	// the attach point.
	tree := copyFixture(t, "rxe")
	if err := os.Remove(filepath.Join(tree, "class/infiniband/rxe0/node_desc")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := &setNodedescOptions{
		IO:    cmdutil.IOStreams{Out: &out},
		View:  true,
		devs:  rdma.NewFS(os.DirFS(tree), "ibsim0 (simulator)"),
		onSim: true,
	}
	err := setNodedescRun(o)
	const want = "rxe0: the simulator presents no node_desc; 'smpquery -D nodedesc 0' shows the attach point's"
	if out.String() != "rxe0: \n" || err == nil || err.Error() != want || cmdutil.ExitCode(err) != cmdutil.ExitFailure {
		t.Errorf("stdout %q, error %v (exit %d); want %q and %q (exit 3)", out.String(), err, cmdutil.ExitCode(err), "rxe0: \n", want)
	}
}
