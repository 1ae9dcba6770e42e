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
	p, err := endport.Open(ctx, *local)
	if err == nil {
		defer p.Close()
		err = watch(ctx, p, flag.Arg(0), num, *count, *every)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "watchcounters:", err)
		os.Exit(3)
	}
}

// watch prints the target port's data counters, then every interval how
// much they moved, count times (0: until ctx ends).
func watch(ctx context.Context, p *endport.Port, target string, num, count int, every time.Duration) error {
	path, err := p.Resolve(ctx, target)
	pma, sign := madrpc.NewPMA(p.Transactor, path), ""
	for i, prev, cur := 0, new(mad.PortCountersExtended), new(mad.PortCountersExtended); err == nil && (count == 0 || i <= count); i, sign, prev, cur = i+1, "+", cur, prev {
		if i > 0 {
			select { // an interrupt ends the wait, and the Get fails
			case <-ctx.Done():
			case <-time.After(every):
			}
		}
		if _, err = pma.Get(ctx, cur, num); err == nil {
			fmt.Printf("%sXmitData %d %sRcvData %d %sXmitPkts %d %sRcvPkts %d\n", sign, cur.PortXmitData-prev.PortXmitData, sign,
				cur.PortRcvData-prev.PortRcvData, sign, cur.PortXmitPkts-prev.PortXmitPkts, sign, cur.PortRcvPkts-prev.PortRcvPkts)
		}
	}
	return err
}
