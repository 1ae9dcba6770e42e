// Command watchcounters reads a port's extended counters once a second
// and prints how much each data counter moved, as a loop of perfquery -x
// would: the first line holds the counters, each later line the deltas.
//
//	watchcounters [-n 10] [-i 1s] 12 1
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

func main() {
	local := flag.String("port", "", "local end port: mlx5_0/1, a port GUID or GID (default: the first active)")
	count := flag.Int("n", 0, "stop after this many deltas (0: run until interrupted)")
	every := flag.Duration("i", time.Second, "time between reads")
	flag.Parse()
	num, err := strconv.Atoi(flag.Arg(1))
	if flag.NArg() != 2 || err != nil || *every <= 0 {
		fmt.Fprintln(os.Stderr, "usage: watchcounters [-port END-PORT] [-n COUNT] [-i INTERVAL] LID|GUID PORT")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *local, flag.Arg(0), num, *count, *every); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "watchcounters:", err)
		os.Exit(3)
	}
}

func run(ctx context.Context, local, target string, num, count int, every time.Duration) error {
	p, err := endport.Open(ctx, local)
	if err != nil {
		return err
	}
	defer p.Close()
	path, err := p.Resolve(ctx, target)
	if err != nil {
		return err
	}
	pma := madrpc.NewPMA(p.Transactor, path)
	var prev mad.PortCountersExtended
	if _, err := pma.Get(ctx, &prev, num); err != nil {
		return err
	}
	fmt.Printf("XmitData %d RcvData %d XmitPkts %d RcvPkts %d\n", prev.PortXmitData, prev.PortRcvData, prev.PortXmitPkts, prev.PortRcvPkts)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for i := 0; count == 0 || i < count; i++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		var cur mad.PortCountersExtended
		if _, err := pma.Get(ctx, &cur, num); err != nil {
			return err
		}
		fmt.Printf("+XmitData %d +RcvData %d +XmitPkts %d +RcvPkts %d\n", cur.PortXmitData-prev.PortXmitData,
			cur.PortRcvData-prev.PortRcvData, cur.PortXmitPkts-prev.PortXmitPkts, cur.PortRcvPkts-prev.PortRcvPkts)
		prev = cur
	}
	return nil
}
