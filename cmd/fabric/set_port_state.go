package fabric

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// set_port_state is python-rdma's command of that name: it disables,
// enables or resets ports anywhere in the fabric, reaching each by a
// directed route that crosses none of the links it changes, so that
// turning links off cannot cut the way to the others.

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "set_port_state",
		Summary: "disable, enable or reset ports by routes that avoid the links changed",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newSetPortStateCmd(f, nil) },
	})
}

// portTarget is one TARGET@PORT argument.
type portTarget struct {
	Arg    string
	Target endport.Target
	// Port is the port number after '@', -1 when not given.
	Port int
}

// setPortStateOptions are set_port_state's parsed flags and arguments.
type setPortStateOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Discovery cmdutil.DiscoveryOptions
	// PhysState is --disable (Disabled) or --enable (Polling); Init is --init.
	PhysState mad.PhysPortState
	Init      bool
	Targets   []portTarget
	Discover  func() (*subnet.Fabric, error)
}

func newSetPortStateCmd(f *cmdutil.Factory, runF func(*setPortStateOptions) error) *cobra.Command {
	o := &setPortStateOptions{IO: f.IO}
	var disable, enable bool
	c := &cobra.Command{
		Use:   "set_port_state [--disable|--enable|--init] TARGET@PORT...",
		Short: "disable, enable or reset ports by routes that avoid the links changed",
		Long: `set_port_state changes the state of ports anywhere in the fabric, as
python-rdma's set_port_state does: --disable turns a port's link off,
--enable turns it back on (Polling), --init makes it retrain back to Init.
It discovers the fabric, reaches each port's node by a directed route that
uses none of the links being changed, reads all the PortInfos and then sets
them all. TARGET is a LID, port GUID or DR path; PORT is the port number
(needed for a switch).`,
		Example: "  set_port_state --disable 0,1,3@5\n  set_port_state --enable 0x0002c90200401234@12 0x0002c90300a1b2c4\n  set_port_state --dry-run --init 0,1,3@5   # print the Set, send none",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			switch {
			case disable && enable:
				return cmdutil.UsageErrorf("--disable and --enable: give one")
			case disable:
				o.PhysState = mad.PhysPortStateDisabled
			case enable:
				o.PhysState = mad.PhysPortStatePolling
			}
			if o.PhysState == 0 && !o.Init {
				return cmdutil.UsageErrorf("nothing to do: give --disable, --enable or --init")
			}
			for _, a := range args {
				t, err := parsePortTarget(a, o.Common.ParseTarget)
				if err != nil {
					return err
				}
				o.Targets = append(o.Targets, t)
			}
			o.Discover = func() (*subnet.Fabric, error) {
				return f.DiscoverFabric("set_port_state", &o.Common, &o.Discovery, nil)
			}
			if runF != nil {
				return runF(o)
			}
			return setPortStateRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsDryRun|cmdutil.FlagsTarget)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	fl := c.Flags()
	fl.BoolVar(&disable, "disable", false, "set the physical port state to Disabled")
	fl.BoolVar(&enable, "enable", false, "set the physical port state to Polling (enable the link)")
	fl.BoolVar(&o.Init, "init", false, "set the port state to Down, so the link retrains to Init")
	return c
}

// parsePortTarget parses TARGET@PORT, the TARGET with parse (which checks
// the kind -L, -G or -D asserts, as python-rdma's LibIBOpts does).
func parsePortTarget(a string, parse func(string) (endport.Target, error)) (portTarget, error) {
	target, port, hasPort := strings.Cut(a, "@")
	t, err := parse(target)
	if err != nil {
		return portTarget{}, err
	}
	pt := portTarget{Arg: a, Target: t, Port: -1}
	if hasPort {
		n, err := cmdutil.ParsePortArg(port)
		if err != nil {
			return portTarget{}, err
		}
		pt.Port = n
	}
	return pt, nil
}

// findTarget returns the port of the fabric a target names.
func findTarget(fab *subnet.Fabric, t endport.Target) *subnet.Port {
	switch t.Kind {
	case endport.LID:
		return fab.PortByLID(t.LID)
	case endport.GUID:
		return fab.PortByGUID(t.GUID)
	case endport.GID:
		return fab.PortByGUID(t.GID.GUID())
	case endport.DirectRoute:
		n := fab.From
		p := n.Port(fab.FromPort)
		for _, hop := range t.DR[1:] {
			q := n.Port(int(hop))
			if q == nil || q.Remote == nil {
				return nil
			}
			p, n = q.Remote, q.Remote.Node
		}
		return p
	}
	return nil
}

// drPathAvoiding finds the shortest directed route from the local port to
// node n that crosses none of the avoided ports' links.
func drPathAvoiding(fab *subnet.Fabric, n *subnet.Node, avoid map[*subnet.Port]bool) []uint8 {
	start := fab.From
	paths := map[*subnet.Node][]uint8{start: {0}}
	queue := []*subnet.Node{start}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == n {
			return paths[cur]
		}
		// Directed routes leave the start node by its port, and go on
		// only through switches.
		if cur != start && cur.Type != mad.NodeTypeSwitch {
			continue
		}
		for num := 1; num <= cur.NumPorts; num++ {
			p := cur.Port(num)
			if p == nil || p.Remote == nil || avoid[p] || avoid[p.Remote] {
				continue
			}
			if cur == start && cur.Type != mad.NodeTypeSwitch && num != fab.FromPort {
				continue
			}
			next := p.Remote.Node
			if _, seen := paths[next]; seen || len(paths[cur]) >= mad.MaxHops {
				continue
			}
			paths[next] = append(append([]uint8(nil), paths[cur]...), uint8(num))
			queue = append(queue, next)
		}
	}
	return nil
}

func setPortStateRun(o *setPortStateOptions) error {
	fab, err := o.Discover()
	if err != nil {
		return cmdutil.WithContext(err, "discovery")
	}
	// Links being enabled are often what the walk could not cross: a
	// partial fabric is a warning here, the targets decide.
	for _, e := range fab.Errors {
		fmt.Fprintf(o.IO.ErrOut, "set_port_state: warning: %v\n", e)
	}
	type change struct {
		arg  string
		port *subnet.Port // the port to change
		path []uint8
		info mad.PortInfo
	}
	var changes []*change
	avoid := map[*subnet.Port]bool{}
	for _, t := range o.Targets {
		p := findTarget(fab, t.Target)
		if p == nil {
			return fmt.Errorf("could not find %s in the subnet", t.Target)
		}
		num := t.Port
		if num < 0 {
			if p.Node.Type == mad.NodeTypeSwitch {
				return cmdutil.UsageErrorf("%s: need a port number for switch %s", t.Arg, p.Node.GUID)
			}
			num = p.Num
		}
		q := p.Node.Port(num)
		if q == nil || num == 0 {
			return cmdutil.UsageErrorf("%s: node %s has no port %d to change", t.Arg, p.Node.GUID, num)
		}
		avoid[q] = true
		changes = append(changes, &change{arg: t.Arg, port: q})
	}
	for _, c := range changes {
		if c.path = drPathAvoiding(fab, c.port.Node, avoid); c.path == nil {
			msg := fmt.Sprintf("no directed route to %s port %d that avoids the links changed", c.port.Node.GUID, c.port.Num)
			if r := c.port.Remote; r != nil && drPathAvoiding(fab, r.Node, avoid) != nil {
				msg += fmt.Sprintf("; try its peer %s port %d", r.Node.GUID, r.Num)
			}
			return fmt.Errorf("%s: %s", c.arg, msg)
		}
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	ctx := o.Common.Context()
	for _, c := range changes {
		q := &madrpc.Querier{X: x, Path: mad.Path{DR: c.path}}
		if _, err := q.Get(ctx, &c.info, uint32(c.port.Num)); err != nil {
			return cmdutil.WithContext(err, "%s", c.arg)
		}
	}
	// Every Get first, then every Set, as python-rdma does.
	for _, c := range changes {
		if err := setPortInfo(ctx, x, c.path, c.port.Num, c.info, o.Init, o.PhysState); err != nil {
			return cmdutil.WithContext(err, "%s", c.arg)
		}
		if o.Common.Verbose > 0 && !o.Common.DryRun {
			fmt.Fprintf(o.IO.ErrOut, "set_port_state: %s port %d changed by DR path %s\n", c.port.Node.GUID, c.port.Num, subnet.FormatPath(c.path))
		}
	}
	return nil
}

// setPortInfo sends SubnSet(PortInfo) of port num along path: pi as read,
// with PortState Down when down, PortPhysicalState phys (0: no change),
// and no change to the enabled link speeds and widths (0), as
// python-rdma's port state tools send it. A dry run's plan shows what
// differs from pi.
func setPortInfo(ctx context.Context, x *madrpc.Transactor, path []uint8, num int, pi mad.PortInfo, down bool, phys mad.PhysPortState) error {
	before, err := pi.MarshalBinary()
	if err != nil {
		return err
	}
	pi.LinkState = 0 // no change
	if down {
		pi.LinkState = mad.PortStateDown
	}
	switch phys {
	case mad.PhysPortStateDisabled:
		pi.PhysLinkState = mad.PhysPortStateDisabled
	case mad.PhysPortStatePolling:
		pi.PhysLinkState = mad.PhysPortStatePolling
	default:
		pi.PhysLinkState = 0 // no change
	}
	pi.LinkSpeedEnabled, pi.LinkWidthEnabled = 0, 0
	q := &madrpc.Querier{X: x, Path: mad.Path{DR: path}}
	_, err = q.Set(ctx, &pi, uint32(num), before)
	return err
}
