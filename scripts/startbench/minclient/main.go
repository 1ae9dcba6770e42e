// Command minclient is the floor of make bench's start-up rows: the least
// a Go program does to send smpquery's MAD through ibtool's library. It
// attaches to ibsim where IBSIM_SOCKNAME and SIM_HOST say (pkg/mad/ibsim),
// sends the directed-route Get of `smpquery -D portinfo 0,1 1` through a
// transactor (pkg/madrpc), prints the answer as smpquery does
// (pkg/madtext) and detaches. It reads no ibdiag.conf, catches no signal,
// builds no command tree and links no cgo; the bench builds it static and
// runs it with GOMAXPROCS=1 (docs/bench.md, Start-up).
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/ibsim"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/madtext"
)

func main() {
	ibsim.ServeKeeper()
	if err := run(context.Background(), os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "minclient:", err)
		os.Exit(1)
	}
}

// run prints the PortInfo of port 1 of the node at the end of the
// directed route 0,1, attached to ibsim as getenv's variables say.
func run(ctx context.Context, getenv func(string) string, w io.Writer) error {
	cfg, err := ibsim.FromEnv(getenv)
	if err != nil {
		return err
	}
	c, err := ibsim.Dial(ctx, cfg)
	if err != nil {
		return err
	}
	x := madrpc.NewTransactor(c, madrpc.TransactorOptions{})
	defer x.Close()
	const port = 1
	path := mad.DRPath(0, 1)
	var pi mad.PortInfo
	if _, err := madrpc.NewQuerier(x, path).Get(ctx, &pi, port); err != nil {
		return err
	}
	out := fmt.Appendf(nil, "# Port info: %s port %d\n", path, port)
	_, err = w.Write(madtext.AppendPortInfo(out, &pi, "", false))
	return err
}
