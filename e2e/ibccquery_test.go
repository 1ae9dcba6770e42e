package e2e

import (
	"strings"
	"testing"
)

// TestIbccqueryMatchesReference compares ibccquery where ibsim answers:
// it echoes most congestion control Gets back with zeros.
func TestIbccqueryMatchesReference(t *testing.T) {
	f := smallFabric(t)
	for _, a := range [][]string{
		{"CI", "3"}, {"CongestionInfo", "2"}, {"CK", "3"}, {"SS", "3"}, {"SP", "3"}, {"SP", "3", "2"},
		{"CS", "3"}, {"CACongestionSetting", "2"}, {"CT", "3"}, {"-c", "0", "ci", "0x3"},
	} {
		t.Run(strings.Join(a, " "), func(t *testing.T) {
			sameAsReference(t, f, "Hca1", "ibccquery", a...)
		})
	}
}

func TestIbccqueryErrors(t *testing.T) {
	f := smallFabric(t)
	tests := []struct {
		exit int
		msg  string
		args []string
	}{
		{3, "operation ClassPortInfo: CCGet(ClassPortInfo) to Lid 3: no response after 3 tries", []string{"CP", "3"}},
		{3, "operation CongestionLog: CCGet(CongestionLog) to Lid 3: no response", []string{"CL", "3"}},
		{3, "operation Timestamp: CCGet(Timestamp) to Lid 3: MAD status 0x001c", []string{"TI", "3"}},
		{3, "operation SwitchPortCongestionSetting: destination not a switch", []string{"SP", "2"}},
		{3, "invalid port number 9: the switch has 8 ports", []string{"SP", "3", "9"}},
		{2, "operation 'nosuch' not supported", []string{"nosuch", "3"}},
		{2, "target 0,1: congestion control MADs are LID routed", []string{"CI", "0,1"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			failsCleanly(t, f, "Hca1", tt.exit, tt.msg, "ibccquery", tt.args...)
		})
	}
}
