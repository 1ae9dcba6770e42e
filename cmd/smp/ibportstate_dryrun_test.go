package smp

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// TestDryRunSMPTools runs ibportstate, sminfo and ibsendtrap with --dry-run against the fake.
func TestDryRunSMPTools(t *testing.T) {
	cmdtest.RunDryRunCases(t, []cmdtest.DryRunCase{
		cmdtest.NewDryRunCase("ibportstate disable", func(t *testing.T, ff *cmdtest.DryRunFabric, out *bytes.Buffer) error {
			o := cmdtest.ParsedOptions(t, "ibportstate", newIbportstateCmd, []string{"--dry-run", "2", "1", "disable"})
			o.IO.Out = out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
				return ff.Transactor(&o.Common, out), cmdtest.DryRunLocal, nil
			}
			return ibportstateRun(o)
		}, true, `Initial CA/RT PortInfo:
# Port info: Lid 2 port 1
LinkState:.......................Active
PhysLinkState:...................LinkUp
Lid:.............................2
SMLid:...........................1
LMC:.............................0
LinkWidthSupported:..............1X or 4X
LinkWidthEnabled:................4X
LinkWidthActive:.................4X
LinkSpeedSupported:..............2.5 Gbps
LinkSpeedEnabled:................2.5 Gbps
LinkSpeedActive:.................2.5 Gbps
Mkey:............................<not displayed>
MkeyLeasePeriod:.................15
ProtectBits:.....................0
Disable may be irreversible
dry-run: SubnSet(PortInfo) from=madtest0/1 lid=2 attrmod=0x1 PhysLinkState=Disabled
`, false),
		cmdtest.NewDryRunCase("ibportstate speed width", func(t *testing.T, ff *cmdtest.DryRunFabric, out *bytes.Buffer) error {
			o := cmdtest.ParsedOptions(t, "ibportstate", newIbportstateCmd, []string{"--dry-run", "-D", "0,1", "1", "width", "3", "speed", "1", "fdr10", "1"})
			o.IO.Out = out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
				return ff.Transactor(&o.Common, out), cmdtest.DryRunLocal, nil
			}
			return ibportstateRun(o)
		}, true, `ProtectBits:.....................0
dry-run: SubnSet(MlnxExtPortInfo) from=madtest0/1 dr=0,1 attrmod=0x1 StateChangeEnable=0x01 LinkSpeedEnabled=0x01
dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1 attrmod=0x1 LinkWidthEnabled="1X or 4X"
`, true),
		cmdtest.NewDryRunCase("sminfo", func(t *testing.T, ff *cmdtest.DryRunFabric, out *bytes.Buffer) error {
			o := cmdtest.ParsedOptions(t, "sminfo", newSminfoCmd, []string{"--dry-run", "-p", "14", "1", "1"})
			o.IO.Out = out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
				return ff.Transactor(&o.Common, out), cmdtest.DryRunLocal, nil
			}
			return sminfoRun(o)
		}, true, `sminfo: sm lid 1 sm guid 0x200000, activity count 7 priority 1 state 3 SMINFO_MASTER
dry-run: SubnSet(SMInfo) from=madtest0/1 lid=1 attrmod=0x1 Priority=14 SMState=2
`, false),
		cmdtest.NewDryRunCase("ibsendtrap", func(t *testing.T, ff *cmdtest.DryRunFabric, out *bytes.Buffer) error {
			o := cmdtest.ParsedOptions(t, "ibsendtrap", newIbsendtrapCmd, []string{"--dry-run", "local_link_integrity", "1"})
			o.IO.Out = out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
				return ff.Transactor(&o.Common, out), cmdtest.DryRunLocal, nil
			}
			return ibsendtrapRun(o)
		}, true, "dry-run: SubnTrap(Notice) from=madtest0/1 lid=1 attrmod=0x0 IsGeneric=1 Type=1 ProducerType=\"Channel Adapter\" TrapNumber=129 IssuerLID=2 "+
			"DataDetails=000000020100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000\n", false),
	})
}

// TestDryRunOff checks that without --dry-run the Set goes out.
func TestDryRunOff(t *testing.T) {
	ff := &cmdtest.DryRunFabric{}
	var out bytes.Buffer
	o := cmdtest.ParsedOptions(t, "ibportstate", newIbportstateCmd, []string{"2", "1", "down"})
	o.IO.Out = &out
	o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
		return ff.Transactor(&o.Common, &out), cmdtest.DryRunLocal, nil
	}
	if err := ibportstateRun(o); err != nil {
		t.Fatal(err)
	}
	if ff.Changes != 1 || !strings.Contains(out.String(), "After PortInfo set:") || strings.Contains(out.String(), "dry-run") {
		t.Errorf("%d Sets sent, output:\n%s\nwant one Set and the port after it", ff.Changes, out.String())
	}
}
