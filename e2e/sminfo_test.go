package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// activityCount matches sminfo's activity count, which opensm raises on
// every SMInfo query: the runs see consecutive values.
var activityCount = regexp.MustCompile(`activity count \d+ `)

func TestSminfoMatchesReference(t *testing.T) {
	f := smallFabric(t)
	mask := func(b []byte) []byte { return activityCount.ReplaceAll(b, []byte("activity count N ")) }
	for _, h := range []string{"Hca1", "Switch2"} {
		for _, a := range [][]string{nil, {"1"}, {"0x1"}, {"-t", "500", "1"}} {
			t.Run(h+" "+strings.Join(a, " "), func(t *testing.T) {
				sameAsReferenceMasked(t, f, mask, h, "sminfo", a...)
			})
		}
	}
	t.Run("Hca1 -D 0,1", func(t *testing.T) {
		sameAsReferenceMasked(t, f, mask, "Hca1", "sminfo", "-D", "0,1")
	})
}

func TestSminfoErrors(t *testing.T) {
	f := smallFabric(t)
	tests := []struct {
		exit int
		msg  string
		args []string
	}{
		{3, "SubnGet(SMInfo) to Lid 2: no response after 3 tries", []string{"2"}},
		{2, `invalid LID or GUID "0x"`, []string{"0x"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			failsCleanly(t, f, "Hca1", tt.exit, tt.msg, "sminfo", tt.args...)
		})
	}
}
