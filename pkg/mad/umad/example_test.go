package umad_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/umad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// ExampleOpen opens port 1 of mlx5_0 through the kernel's umad device and
// reads the NodeInfo of LID 1. It needs an InfiniBand port and access to
// /dev/infiniband/umad*, so it is compiled, not run, by go test. Programs
// usually call endport.Open instead, which picks the port as the tools do
// and applies ibdiag.conf.
func ExampleOpen() {
	ctx := context.Background()
	sys := rdma.NewFS(os.DirFS("/sys"), "/sys")
	p, err := umad.Open(ctx, sys, "mlx5_0", 1, umad.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	x := madrpc.NewTransactor(p, madrpc.TransactorOptions{}) // closes p with it
	defer x.Close()
	var ni mad.NodeInfo
	if _, err := madrpc.NewQuerier(x, mad.LIDPath(1)).Get(ctx, &ni, 0); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ni.NodeType, ni.NodeGUID)
}
