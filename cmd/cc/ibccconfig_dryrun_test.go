package cc

import (
	"bytes"
	"testing"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// TestDryRunCCTools runs ibccconfig with --dry-run against the fake.
func TestDryRunCCTools(t *testing.T) {
	cmdtest.RunDryRunCases(t, []cmdtest.DryRunCase{
		cmdtest.NewDryRunCase("ibccconfig", func(t *testing.T, ff *cmdtest.DryRunFabric, out *bytes.Buffer) error {
			o := cmdtest.ParsedOptions(t, "ibccconfig", newIbccconfigCmd, []string{"--dry-run", "CongestionKeyInfo", "2", "0x1234", "1", "5", "0"})
			o.IO.Out = out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) { return ff.Transactor(&o.Common, out), nil, nil }
			return ibccconfigRun(o)
		}, false, "dry-run: CCSet(CongestionKeyInfo) from=madtest0/1 lid=2 attrmod=0x0 CCKey=0x0000000000001234 CCKeyProtectBit=1 CCKeyLeasePeriod=5\n", false),
	})
}
