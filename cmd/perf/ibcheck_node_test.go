package perf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// TestNodeCheckRun runs the per-node scripts against dryRunFabric: Hca1
// at LID 2, its port 1 Active 4X, its PMA counting 5 symbol errors.
func TestNodeCheckRun(t *testing.T) {
	dir := t.TempDir()
	strict := filepath.Join(dir, "strict")
	if err := os.WriteFile(strict, []byte("SymbolErrorCounter=3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool     string
		args     []string
		want     string
		wantCode int
	}{
		{"ibchecknode", []string{"-v", "-N", "2"}, "Node check lid 2: OK\n", 0},
		{"ibchecknode", []string{"-N", "2"}, "", 0},
		{"ibcheckport", []string{"-v", "-N", "2", "1"}, "Port check lid 2 port 1: OK\n", 0},
		{"ibcheckportwidth", []string{"-v", "-N", "2", "1"}, "Port check lid 2 port 1: OK\n", 0},
		{"ibcheckerrs", []string{"-v", "-N", "2", "1"}, "Error check on lid 2 () port 1: OK\n", 0},
		{"ibcheckerrs", []string{"-N", "-T", strict, "2", "1"},
			"#warn: counter SymbolErrorCounter = 5 \t(threshold 3) lid 2 port 1\nError check on lid 2 () port 1: FAILED\n", cmdutil.ScriptFailed},
		{"ibdatacounts", []string{"-N", "2", "1"},
			"# Port counters: Lid 2 port 1 (CapMask: 0x1100)\nPortRcvData:.........................0\nPortRcvPkts:.........................0\n", 0},
		{"ibcheckerrs", []string{"-s"}, "SymbolErrorCounter=10\nLinkErrorRecoveryCounter=10\nLinkDownedCounter=10\nPortRcvErrors=10\n" +
			"PortRcvRemotePhysicalErrors=100\nPortRcvSwitchRelayErrors=100\nPortXmitDiscards=100\nPortXmitConstraintErrors=100\n" +
			"PortRcvConstraintErrors=100\nLocalLinkIntegrityErrors=10\nExcessiveBufferOverrunErrors=10\nVL15Dropped=100\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args[0]+" "+tt.args[len(tt.args)-1], func(t *testing.T) {
			ff := &cmdtest.DryRunFabric{}
			var out bytes.Buffer
			o := fakeNodeCheck(t, tt.tool, tt.args)
			o.IO.Out = &out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) { return ff.Transactor(&o.Common, &out), nil, nil }
			checkScriptResult(t, nodeCheckRun(o), tt.wantCode, tt.want, out.String())
		})
	}
}
