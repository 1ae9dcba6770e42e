package cmd

import (
	"testing"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// TestLightTools: the single-target tools make bench times against
// infiniband-diags run on one processor (Tool.Light), and the tools that
// walk or sweep a fabric, decode captures or move data get the runtime's
// default.
func TestLightTools(t *testing.T) {
	tests := []struct {
		tool  string
		light bool
	}{
		{"smpquery", true},
		{"perfquery", true},
		{"sminfo", true},
		{"ibaddr", true},
		{"smpdump", true},
		{"ibportstate", true},
		{"ibstat", true},
		{"ibnetdiscover", false},
		{"iblinkinfo", false},
		{"ibqueryerrors", false},
		{"ibroute", false},
		{"saquery", false},
		{"ibdmchk", false},
		{"trace", false},
		{"rdma_bw", false},
		{"ibv_rc_pingpong", false},
		{"exporter", false},
	}
	for _, tt := range tests {
		tool, ok := cmdutil.Find(tt.tool)
		if !ok {
			t.Errorf("%s: no such tool", tt.tool)
			continue
		}
		if tool.Light != tt.light {
			t.Errorf("%s: Light = %v, want %v", tt.tool, tool.Light, tt.light)
		}
	}
}
