package fabric

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
