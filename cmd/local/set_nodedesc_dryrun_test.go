package local

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

func TestDryRunSetNodedesc(t *testing.T) {
	tree := copyFixture(t, "mlx5")
	f, out, errOut := cmdutil.NewTestFactory(nil)
	if code := cmdutil.RunTool([]string{"set_nodedesc", "--sysfs", tree, "--dry-run", "-C", "mlx5_1", "node17 HCA-2"}, f); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "dry-run: write file=" + tree + "/class/infiniband/mlx5_1/node_desc text=\"node17 HCA-2\" was=\"node01 mlx5_1\"\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("unexpected output (-want +got):\n%s", diff)
	}
	f, out, _ = cmdutil.NewTestFactory(nil)
	if code := cmdutil.RunTool([]string{"set_nodedesc", "--sysfs", tree, "-v"}, f); code != 0 || !strings.Contains(out.String(), "mlx5_1: node01 mlx5_1\n") {
		t.Errorf("the description changed: exit %d, %q", code, out)
	}
}
