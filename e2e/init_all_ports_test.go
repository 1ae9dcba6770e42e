package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// TestInitAllPorts: every active link of a fabric of its own drops back
// to Init (as ibsim's port states show), and a second run finds nothing
// left to do.
func TestInitAllPorts(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	ctx := context.Background()
	count := func(state string) int {
		dump, err := f.Console(ctx, "Dump")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(dump, state)
	}
	if n := count("Active/LinkUp"); n != 14 { // 12 cabled ports and 2 switch ports 0
		t.Fatalf("%d ports Active before, want 14", n)
	}
	for run, wantSet := range []int{12, 0} {
		out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "init_all_ports", "-v")
		if err != nil || exit != 0 || len(out) != 0 {
			t.Fatalf("run %d: exit %d, %v, stdout %q, stderr %q", run+1, exit, err, out, errOut)
		}
		if n := strings.Count(string(errOut), "set to Down"); n != wantSet {
			t.Errorf("run %d: %d ports set, want %d:\n%s", run+1, n, wantSet, errOut)
		}
	}
	if a, i := count("Active/LinkUp"), count("Init/LinkUp"); a != 2 || i != 12 {
		t.Errorf("after: %d ports Active (want the 2 switch ports 0), %d Init (want 12)", a, i)
	}
}
