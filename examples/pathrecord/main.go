// Command pathrecord asks the subnet administrator for the path between
// two ports, each a port GUID, GID or LID:
//
//	pathrecord 0x0002c90300001234 0x0002c90300005678
//	pathrecord -port mlx5_0/1 fe80::2:c903:0:1234 12
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/ibtool/ibtool/pkg/endport"
)

func main() {
	local := flag.String("port", "", "local end port: mlx5_0/1, a port GUID or GID (default: the first active)")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: pathrecord [-port END-PORT] SOURCE DESTINATION")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *local, flag.Arg(0), flag.Arg(1)); err != nil {
		fmt.Fprintln(os.Stderr, "pathrecord:", err)
		os.Exit(3)
	}
}

func run(ctx context.Context, local, src, dst string) error {
	p, err := endport.Open(ctx, local)
	if err != nil {
		return err
	}
	defer p.Close()
	pr, err := p.PathRecord(ctx, src, dst)
	if err != nil {
		return err
	}
	fmt.Printf("SGID %s\nDGID %s\n", pr.SGID, pr.DGID)
	fmt.Printf("SLID %d\nDLID %d\nSL %d\n", pr.SLID, pr.DLID, pr.SL)
	fmt.Printf("PKey 0x%04x\nMTU %d\nRate %d\nPacketLifeTime %d\n", pr.PKey, pr.MTU, pr.Rate, pr.PacketLifeTime)
	return nil
}
