package fabric

import (
	"bytes"
	"testing"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// TestDryRunFabricTools runs init_all_ports and set_port_state with --dry-run against the fake.
func TestDryRunFabricTools(t *testing.T) {
	cmdtest.RunDryRunCases(t, []cmdtest.DryRunCase{
		cmdtest.NewDryRunCase("init_all_ports", func(t *testing.T, ff *cmdtest.DryRunFabric, out *bytes.Buffer) error {
			o := cmdtest.ParsedOptions(t, "init_all_ports", newInitAllPortsCmd, []string{"--dry-run", "-v"})
			o.IO.Out, o.IO.ErrOut = out, out
			o.Discover = func() (*subnet.Fabric, error) { return cmdtest.DryRunFakeFabric(), nil }
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) { return ff.Transactor(&o.Common, out), nil, nil }
			return initAllPortsRun(o)
		}, false, `dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1,2 attrmod=0x1 LinkState=Down
dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1 attrmod=0x1 LinkState=Down
dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1 attrmod=0x2 LinkState=Down
dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0 attrmod=0x1 LinkState=Down
`, false),
		cmdtest.NewDryRunCase("set_port_state", func(t *testing.T, ff *cmdtest.DryRunFabric, out *bytes.Buffer) error {
			o := cmdtest.ParsedOptions(t, "set_port_state", newSetPortStateCmd, []string{"--dry-run", "-v", "--disable", "--init", "0,1@2"})
			o.IO.Out, o.IO.ErrOut = out, out
			o.Discover = func() (*subnet.Fabric, error) { return cmdtest.DryRunFakeFabric(), nil }
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) { return ff.Transactor(&o.Common, out), nil, nil }
			return setPortStateRun(o)
		}, true, "dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1 attrmod=0x2 LinkState=Down PhysLinkState=Disabled\n", false),
	})
}
