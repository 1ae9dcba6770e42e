package e2e

import (
	"slices"
	"strings"
	"testing"
)

func TestSmpdumpMatchesReference(t *testing.T) {
	f := smallFabric(t)
	args := [][]string{
		{"3", "0x11"}, {"1", "0x12"}, {"3", "0x15", "1"}, {"0x2", "17"}, {"3", "0x19", "0"},
		{"-s", "2", "0x10"}, {"-D", "0,1", "0x10"}, {"-s", "-D", "0,1", "0x10"}, {"-D", "0,1,3", "0x15", "3"},
	}
	for _, h := range []string{"Hca1", "Switch2"} {
		for _, a := range args {
			if h != "Hca1" && slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "0,") }) {
				continue // DR paths from Hca1
			}
			t.Run(h+" "+strings.Join(a, " "), func(t *testing.T) {
				sameAsReference(t, f, h, "smpdump", a...)
			})
		}
	}
}

func TestSmpdumpErrors(t *testing.T) {
	f := smallFabric(t)
	tests := []struct {
		exit int
		msg  string
		args []string
	}{
		{3, "SubnGet(attribute 0x0099) to Lid 3: no response after 3 tries", []string{"3", "0x99"}},
		{3, "SubnGet(attribute 0x0011) to DR path slid 65535; dlid 65535; 0,1,7: no response", []string{"-D", "0,1,7", "0x11"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			// infiniband-diags prints nothing (or zeros) and exits 0 here.
			ibtoolFails(t, f, "Hca1", tt.exit, tt.msg, "smpdump", tt.args...)
		})
	}
}
