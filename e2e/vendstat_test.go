package e2e

import (
	"strings"
	"testing"
)

// TestVendstatOnSimulator checks the one line vendstat prints where ibsim
// does not answer the Mellanox vendor class 0x0A at all.
func TestVendstatOnSimulator(t *testing.T) {
	f := smallFabric(t)
	for _, tt := range []struct {
		msg  string
		args []string
	}{
		{"classportinfo query: Vendor1(0x0a) Get(ClassPortInfo) to Lid 3: no response after 3 tries", []string{"-N", "3"}},
		{"cannot get config space records: Vendor1(0x0a) Get(ConfigSpaceAccess) to Lid 3: no response", []string{"-R", "0x10013c", "3"}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if tt.args[0] == "-R" {
				// infiniband-diags prints its failure and exits 0 here.
				ibtoolFails(t, f, "Hca1", 3, tt.msg, "vendstat", tt.args...)
				return
			}
			failsCleanly(t, f, "Hca1", 3, tt.msg, "vendstat", tt.args...)
		})
	}
}
