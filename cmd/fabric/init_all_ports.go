package fabric

import (
	"fmt"
	"sort"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "init_all_ports",
		Summary: "drop every active link of the subnet back to Init",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newInitAllPortsCmd(f, nil) },
	})
}

// initAllPortsOptions are init_all_ports' parsed flags.
type initAllPortsOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Discovery cmdutil.DiscoveryOptions
	Discover  func() (*subnet.Fabric, error)
}

func newInitAllPortsCmd(f *cmdutil.Factory, runF func(*initAllPortsOptions) error) *cobra.Command {
	o := &initAllPortsOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "init_all_ports [options]",
		Short: "drop every active link of the subnet back to Init",
		Long: `init_all_ports sets the PortState of every Armed or Active port of the
subnet (switch ports 1 and up, CA and router ports) to Down, so that each
link retrains and comes back in Init, as python-rdma's init_all_ports does:
a way to recover a subnet from a deadlock, which blocks all but management
traffic until the SM brings the links up again. It discovers the fabric
first, then sets the ports by directed route, the farthest first, so that
no link on the way to a port is reset before it. It may need to run more
than once.`,
		Example: "  init_all_ports\n  init_all_ports -v   # say each port reset\n  init_all_ports --dry-run   # print the Sets, send none",
		Args:    cmdutil.ArgsRange(0, 0),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			o.Discover = func() (*subnet.Fabric, error) {
				return f.DiscoverFabric("init_all_ports", &o.Common, &o.Discovery, nil)
			}
			if runF != nil {
				return runF(o)
			}
			return initAllPortsRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsDryRun)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	return c
}

// activePorts returns the fabric's Armed and Active ports (not switch port
// 0) grouped by their node's hop count, farthest first.
func activePorts(fab *subnet.Fabric) [][]*subnet.Port {
	byHops := map[int][]*subnet.Port{}
	for _, n := range fab.All() {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Info == nil || len(n.Path) == 0 {
				continue
			}
			if s := p.Info.LinkState; s == mad.PortStateArmed || s == mad.PortStateActive {
				byHops[len(n.Path)] = append(byHops[len(n.Path)], p)
			}
		}
	}
	hops := make([]int, 0, len(byHops))
	for h := range byHops {
		hops = append(hops, h)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(hops)))
	var waves [][]*subnet.Port
	for _, h := range hops {
		waves = append(waves, byHops[h])
	}
	return waves
}

func initAllPortsRun(o *initAllPortsOptions) error {
	fab, err := o.Discover()
	if err != nil {
		return cmdutil.WithContext(err, "discovery")
	}
	if err := cmdutil.ReportPartial("init_all_ports", fab, o.IO.ErrOut); err != nil {
		return err
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	ctx := o.Common.Context()
	var mu sync.Mutex
	failed := 0
	for _, wave := range activePorts(fab) {
		var wg sync.WaitGroup
		// Under --dry-run each port's plan waits in a scope of its own,
		// written once the wave is done in an order that does not depend
		// on the goroutines'.
		scopes := make([]*cmdutil.PlanScope, len(wave))
		for i, p := range wave {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := ctx
				if o.Common.DryRun {
					ctx, scopes[i] = cmdutil.WithPlanScope(ctx)
				}
				err := setPortInfo(ctx, x, p.Node.Path, p.Num, *p.Info, true, 0)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					failed++
					fmt.Fprintf(o.IO.ErrOut, "init_all_ports: failed to set port state on %s port %d via DR path %s: %v\n",
						p.Node.GUID, p.Num, subnet.FormatPath(p.Node.Path), err)
				case o.Common.Verbose > 0 && !o.Common.DryRun:
					fmt.Fprintf(o.IO.ErrOut, "init_all_ports: %s port %d set to Down via DR path %s\n",
						p.Node.GUID, p.Num, subnet.FormatPath(p.Node.Path))
				}
			}()
		}
		wg.Wait()
		if err := writeWavePlans(o, wave, scopes); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d ports could not be set; run init_all_ports again", failed)
	}
	return nil
}

// writeWavePlans writes the plans of a wave's ports (--dry-run) by node
// GUID and port number.
func writeWavePlans(o *initAllPortsOptions, wave []*subnet.Port, scopes []*cmdutil.PlanScope) error {
	if !o.Common.DryRun {
		return nil
	}
	order := make([]int, len(wave))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		p, q := wave[order[a]], wave[order[b]]
		if p.Node.GUID != q.Node.GUID {
			return p.Node.GUID < q.Node.GUID
		}
		return p.Num < q.Num
	})
	var b []byte
	for _, i := range order {
		b = append(b, o.Common.PlanLog.Take(scopes[i])...)
	}
	_, err := o.IO.Out.Write(b)
	return err
}
