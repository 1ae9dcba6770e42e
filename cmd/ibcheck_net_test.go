package cmd

import (
	"bytes"
	"testing"

	"github.com/ibtool/ibtool/pkg/mad"
)

// TestNetCheckRun runs the fabric-wide scripts on fakeNetCheck's topology
// (Hca1 on port 1 of Switch1) against dryRunFabric, whose every port is
// Active 4X and whose PMAs count 5 symbol errors.
func TestNetCheckRun(t *testing.T) {
	tests := []struct {
		tool     string
		args     []string
		want     string
		wantCode int
	}{
		{"ibcheckerrors", []string{"-N"}, "\n*** WARNING ***: this command is deprecated; Please use \"ibqueryerrors\"\n" +
			"## Summary: 2 nodes checked, 0 bad nodes found\n##          2 ports checked, 0 ports have errors beyond threshold\n", 0},
		{"ibcheckstate", []string{"-N"}, "\n*** WARNING ***: this command is deprecated\n\n" +
			"## Summary: 2 nodes checked, 0 bad nodes found\n##          2 ports checked, 0 ports with bad state found\n", 0},
		// The script's warning lacks its closing quote.
		{"ibdatacounters", []string{"-N"}, "# Port counters: Lid 1 port 255 (CapMask: 0x1100)\n" +
			"PortRcvData:.........................0\nPortRcvPkts:.........................0\n" +
			"# Port counters: Lid 2 port 1 (CapMask: 0x1100)\n" +
			"PortRcvData:.........................0\nPortRcvPkts:.........................0\n" +
			"*** WARNING ***: this command is deprecated; Please use \"ibqueryerrors --counters\n\n" +
			"## Summary: 2 nodes checked, 0 bad nodes found\n##          2 ports checked\n", 0},
		{"ibchecknet", []string{"-N"}, "\n# Checking Ca: nodeguid 0x0000000000100000\n\n" +
			"*** WARNING ***: this command is deprecated; Please use \"ibqueryerrors\"\n" +
			"## Summary: 2 nodes checked, 0 bad nodes found\n##          2 ports checked, 0 bad ports found\n" +
			"##          0 ports have errors beyond threshold\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			ff := &dryRunFabric{}
			var out bytes.Buffer
			o := fakeNetCheck(t, tt.tool, tt.args)
			o.IO.Out = &out
			o.Open = func() (*mad.Transactor, error) { return ff.transactor(&o.Common, &out), nil }
			checkScriptResult(t, netCheckRun(o), tt.wantCode, tt.want, out.String())
			if ff.changes != 0 {
				t.Errorf("%d Sets sent by a check", ff.changes)
			}
		})
	}
}
