package verbs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestForkStatusString names the statuses as verbs.h does.
func TestForkStatusString(t *testing.T) {
	got := []string{ForkDisabled.String(), ForkEnabled.String(), ForkUnneeded.String(), ForkStatus(7).String()}
	if diff := cmp.Diff([]string{"DISABLED", "ENABLED", "UNNEEDED", "fork status 7"}, got); diff != "" {
		t.Errorf("unexpected names (-want +got):\n%s", diff)
	}
}
