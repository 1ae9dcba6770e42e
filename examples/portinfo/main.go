// Command portinfo prints the PortInfo of a port, found by LID or by
// directed route, as smpquery portinfo prints it:
//
//	portinfo [-port mlx5_0/1] 12 1
//	portinfo 0,1,3 2
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/madtext"
)

func main() {
	local := flag.String("port", "", "local end port: mlx5_0/1, a port GUID or GID (default: the first active)")
	flag.Parse()
	if flag.NArg() < 1 || flag.NArg() > 2 {
		fmt.Fprintln(os.Stderr, "usage: portinfo [-port END-PORT] LID|DR-PATH [PORT]")
		os.Exit(2)
	}
	num := 0
	if flag.NArg() == 2 {
		n, err := strconv.ParseUint(flag.Arg(1), 10, 8)
		if err != nil {
			fmt.Fprintf(os.Stderr, "portinfo: port number %q: %v\n", flag.Arg(1), err)
			os.Exit(2)
		}
		num = int(n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *local, flag.Arg(0), num); err != nil {
		fmt.Fprintln(os.Stderr, "portinfo:", err)
		os.Exit(3)
	}
}

func run(ctx context.Context, local, target string, num int) error {
	p, err := endport.Open(ctx, local)
	if err != nil {
		return err
	}
	defer p.Close()
	path, err := p.Resolve(ctx, target)
	if err != nil {
		return err
	}
	var pi mad.PortInfo
	if _, err := madrpc.NewQuerier(p.Transactor, path).Get(ctx, &pi, uint32(num)); err != nil {
		return err
	}
	out := fmt.Appendf(nil, "# Port info: %s port %d\n", path, num)
	_, err = os.Stdout.Write(madtext.AppendPortInfo(out, &pi, "", false))
	return err
}
