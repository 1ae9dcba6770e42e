package cmd

import (
	"bytes"
	"testing"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// TestDryRunFabricTools runs init_all_ports and set_port_state with --dry-run against the fake.
func TestDryRunFabricTools(t *testing.T) {
	runDryRunCases(t, []dryRunCase{
		newDryRunCase("init_all_ports", func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error {
			o := parsedOptions(t, "init_all_ports", newInitAllPortsCmd, []string{"--dry-run", "-v"})
			o.IO.Out, o.IO.ErrOut = out, out
			o.Discover = func() (*subnet.Fabric, error) { return dryRunFakeFabric(), nil }
			o.Transactor = func() (*mad.Transactor, error) { return ff.transactor(&o.Common, out), nil }
			return initAllPortsRun(o)
		}, false, `dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1,2 attrmod=0x1 LinkState=Down
dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1 attrmod=0x1 LinkState=Down
dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1 attrmod=0x2 LinkState=Down
dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0 attrmod=0x1 LinkState=Down
`, false),
		newDryRunCase("set_port_state", func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error {
			o := parsedOptions(t, "set_port_state", newSetPortStateCmd, []string{"--dry-run", "-v", "--disable", "--init", "0,1@2"})
			o.IO.Out, o.IO.ErrOut = out, out
			o.Discover = func() (*subnet.Fabric, error) { return dryRunFakeFabric(), nil }
			o.Transactor = func() (*mad.Transactor, error) { return ff.transactor(&o.Common, out), nil }
			return setPortStateRun(o)
		}, true, "dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1 attrmod=0x2 LinkState=Down PhysLinkState=Disabled\n", false),
	})
}
