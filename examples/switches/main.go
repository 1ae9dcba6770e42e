// Command switches discovers the fabric and lists its switches with the
// link state and symbol errors of each port that has a link.
//
//	switches [-port mlx5_0/1]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func main() {
	local := flag.String("port", "", "local end port: mlx5_0/1, a port GUID or GID (default: the first active)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *local); err != nil {
		fmt.Fprintln(os.Stderr, "switches:", err)
		os.Exit(3)
	}
}

func run(ctx context.Context, local string) error {
	p, err := endport.Open(ctx, local, endport.WithWindow(endport.DiscoveryWindow))
	if err != nil {
		return err
	}
	defer p.Close()
	f, err := subnet.Discover(ctx, p.Transactor, subnet.Options{})
	if err != nil {
		return err
	}
	for _, sw := range f.ByType(mad.NodeTypeSwitch) {
		fmt.Printf("%s %q LID %d\n", sw.GUID, sw.Desc, sw.SMALID)
		pma := madrpc.NewPMA(p.Transactor, mad.LIDPath(sw.SMALID))
		for _, port := range sw.Ports[1:] {
			if port == nil || port.Info == nil || port.Remote == nil {
				continue
			}
			var pc mad.PortCounters
			if _, err := pma.Get(ctx, &pc, port.Num); err != nil {
				return fmt.Errorf("switch %s port %d: %w", sw.GUID, port.Num, err)
			}
			fmt.Printf("  port %d %s %s, %d symbol errors, to %q port %d\n", port.Num, port.Info.LinkState,
				port.Info.PhysLinkState, pc.SymbolErrorCounter, port.Remote.Node.Desc, port.Remote.Num)
		}
	}
	if f.Partial() {
		return fmt.Errorf("discovery is partial: %d queries failed, the first: %w", len(f.Errors), f.Errors[0])
	}
	return nil
}
