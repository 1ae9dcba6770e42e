package local

import (
	"strings"
	"testing"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// TestSetNodedescPort: python-rdma's -P picks the CA of an end port (a
// port number, DEVICE/PORT, port GUID or GID), and -C takes a node GUID.
func TestSetNodedescPort(t *testing.T) {
	tree := copyFixture(t, "mlx5")
	run := func(args ...string) (int, string, string) {
		f, out, errOut := cmdutil.NewTestFactory(nil)
		code := cmdutil.RunTool(append([]string{"set_nodedesc", "--sysfs", tree}, args...), f)
		return code, out.String(), errOut.String()
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-v", "-P", "mlx5_1/1"}, "mlx5_1: node01 mlx5_1\n"},
		{[]string{"-v", "--Port", "0x0c42a10300a1b2c5"}, "mlx5_0: node01 mlx5_0\n"},
		{[]string{"-v", "-P", "fe80::e42:a1ff:fe65:4321"}, "mlx5_1: node01 mlx5_1\n"},
		{[]string{"-v", "-P", "1"}, "mlx5_0: node01 mlx5_0\n"},
		{[]string{"-v", "-C", "mlx5_0", "-P", "2"}, "mlx5_0: node01 mlx5_0\n"},
		{[]string{"-v", "-C", "0c42:a103:0065:4320"}, "mlx5_1: node01 mlx5_1\n"},
	}
	for _, tt := range tests {
		if code, out, errOut := run(tt.args...); code != 0 || out != tt.want {
			t.Errorf("%q: exit %d, %q (%s); want %q", tt.args, code, out, errOut, tt.want)
		}
	}
	if code, _, errOut := run("-P", "mlx5_1/1", "node17 HCA-2"); code != 0 {
		t.Fatalf("set by -P: exit %d, %s", code, errOut)
	}
	if _, out, _ := run("-v"); out != "mlx5_0: node01 mlx5_0\nmlx5_1: node17 HCA-2\n" {
		t.Errorf("after set by -P: %q", out)
	}
	for _, c := range []struct{ args []string }{
		{[]string{"-v", "-P", "0x0c42a103ffffffff"}},
		{[]string{"-v", "-C", "mlx5_0", "-P", "3"}},
		{[]string{"-v", "-P", "mlx5_0/x"}},
	} {
		if code, _, errOut := run(c.args...); code != cmdutil.ExitUsage || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want one line, exit 2", c.args, code, errOut)
		}
	}
}
