package e2e

import (
	"strings"
	"testing"
)

// TestIbstatMatchesReference compares every form of ibstat on a switch's
// management port and on HCA ports, with and without SIM_HOST.
func TestIbstatMatchesReference(t *testing.T) {
	f := smallFabric(t)
	argsFor := map[string][][]string{
		"switch": {nil, {"-l"}, {"-s"}, {"-p"}, {"ibsim0"}, {"ibsim0", "0"}, {"-d"}, {"-s", "ibsim0"}},
		"hca":    {nil, {"-l"}, {"-s"}, {"-p"}, {"ibsim0"}, {"ibsim0", "1"}, {"ibsim0", "01"}, {"-d", "ibsim0"}},
	}
	hosts := []struct{ name, kind string }{
		{"", "switch"}, // ibsim's default port: the first node, Switch1
		{"Switch2", "switch"},
		{"Hca1", "hca"},
		{"Hca4", "hca"},
	}
	for _, h := range hosts {
		for _, args := range argsFor[h.kind] {
			name := strings.TrimSpace(h.name + " " + strings.Join(args, " "))
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				sameAsReference(t, f, h.name, "ibstat", args...)
			})
		}
	}
}

// TestIbstatErrors checks where infiniband-diags' ibstat panics (exit
// 255 with ibwarn/ibpanic lines), ibtool prints one line and exits 2.
func TestIbstatErrors(t *testing.T) {
	f := smallFabric(t)
	tests := []struct {
		host string
		args []string
		msg  string
	}{
		{"Hca1", []string{"nosuch"}, "'nosuch' IB device can't be found"},
		{"Hca1", []string{"ibsim0", "2"}, "has no port number 2"},
		{"Switch1", []string{"ibsim0", "1"}, "has no port number 1"},
		{"Hca1", []string{"ibsim0", "x"}, `invalid port number "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.host+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			failsCleanly(t, f, tt.host, 2, tt.msg, "ibstat", tt.args...)
		})
	}
}
