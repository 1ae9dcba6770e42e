package fabric

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
)

// TestIblinkinfoUpAndPortGUIDs checks python-rdma's --up (no Polling
// ports) and -g (port GUIDs, which the lines show anyway).
func TestIblinkinfoUpAndPortGUIDs(t *testing.T) {
	fab := fakeTwoSwitches(t, nil)
	all := runIblinkinfo(t, fab)
	if !strings.Contains(all, "Polling") {
		t.Fatalf("the fake fabric has no Polling port to leave out:\n%s", all)
	}
	var want []string
	for _, line := range strings.SplitAfter(all, "\n") {
		if !strings.Contains(line, "Polling") {
			want = append(want, line)
		}
	}
	if diff := cmp.Diff(strings.Join(want, ""), runIblinkinfo(t, fab, "--up")); diff != "" {
		t.Errorf("iblinkinfo --up (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(all, runIblinkinfo(t, fab, "-g")); diff != "" {
		t.Errorf("iblinkinfo -g (-want +got):\n%s", diff)
	}
	if got := runIblinkinfo(t, fab, "--up", "-d"); strings.Contains(got, "Polling") || strings.Contains(got, "LinkUp") {
		t.Errorf("iblinkinfo --up -d shows Polling or LinkUp ports:\n%s", got)
	}
}

// TestIblinkinfoLidAndGuid: python-rdma's -L/--Lid names the node to
// print by a LID of its ports, and --Guid by a port GUID, as -S does.
func TestIblinkinfoLidAndGuid(t *testing.T) {
	fab := fakeTwoSwitches(t, nil)
	for _, typ := range []mad.NodeType{mad.NodeTypeSwitch, mad.NodeTypeCA} {
		n := fab.ByType(typ)[0]
		p := n.Port(0)
		if typ == mad.NodeTypeCA {
			p = n.Port(1)
		}
		guid, lid := fmt.Sprintf("%#x", uint64(p.GUID)), fmt.Sprint(p.LID())
		want := runIblinkinfo(t, fab, "-S", guid)
		if !strings.Contains(want, n.Desc) {
			t.Fatalf("iblinkinfo -S %s does not show %q:\n%s", guid, n.Desc, want)
		}
		for _, args := range [][]string{{"-L", lid}, {"--Lid", lid}, {"--Guid", guid}} {
			if diff := cmp.Diff(want, runIblinkinfo(t, fab, args...)); diff != "" {
				t.Errorf("iblinkinfo %q (-want +got):\n%s", args, diff)
			}
		}
	}
	for _, args := range [][]string{{"-L", "0,1"}, {"-L", "0x0002c90300a1b2c4"}, {"-L", "1", "-D", "0,1"}} {
		f, _, _ := cmdutil.NewTestFactory(nil)
		c := newIblinkinfoCmd(f, func(*iblinkinfoOptions) error { return nil })
		if err := execFabricCmd(c, args); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
			t.Errorf("iblinkinfo %q: %v (exit %d), want a usage error", args, err, cmdutil.ExitCode(err))
		}
	}
}
