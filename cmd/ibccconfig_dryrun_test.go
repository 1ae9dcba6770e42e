package cmd

import (
	"bytes"
	"testing"

	"github.com/ibtool/ibtool/pkg/mad"
)

// TestDryRunCCTools runs ibccconfig with --dry-run against the fake.
func TestDryRunCCTools(t *testing.T) {
	runDryRunCases(t, []dryRunCase{
		newDryRunCase("ibccconfig", func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error {
			o := parsedOptions(t, "ibccconfig", newIbccconfigCmd, []string{"--dry-run", "CongestionKeyInfo", "2", "0x1234", "1", "5", "0"})
			o.IO.Out = out
			o.Transactor = func() (*mad.Transactor, error) { return ff.transactor(&o.Common, out), nil }
			return ibccconfigRun(o)
		}, false, "dry-run: CCSet(CongestionKeyInfo) from=madtest0/1 lid=2 attrmod=0x0 CCKey=0x0000000000001234 CCKeyProtectBit=1 CCKeyLeasePeriod=5\n", false),
	})
}
