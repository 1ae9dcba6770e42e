package endport_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// ExampleOpen opens a local end port and reads the PortInfo of the node
// at the end of a directed route. A program on a real machine calls
// endport.Open(ctx, "mlx5_0/1") (or "" for the default port) and gets the
// kernel's umad device, or ibsim when IBSIM_SOCKNAME is set; here the
// sysfs tree is a fixture and the fabric an in-memory SMA.
func ExampleOpen() {
	ctx := context.Background()
	sma := madtest.NewSMA().Put(&mad.PortInfo{LID: 12, SMLID: 1, LinkState: mad.PortStateActive}, 1)
	p, err := endport.Open(ctx, "mlx5_0/1",
		endport.WithSysfs("../rdma/testdata/mlx5"), endport.WithSimulator(endport.SimOff),
		endport.WithTransport(func(context.Context, *rdma.Device, *rdma.Port) (mad.Transport, error) {
			return madtest.New(sma.Handle), nil
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	fmt.Printf("sending from %s port %d, LID %s\n", p.Device.Name, p.Local.Number, p.Local.LID)

	path, err := p.Resolve(ctx, "0,1")
	if err != nil {
		fmt.Println(err)
		return
	}
	var pi mad.PortInfo
	if _, err := madrpc.NewQuerier(p.Transactor, path).Get(ctx, &pi, 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("port 1 at %s: LID %d, %s\n", path, pi.LID, pi.LinkState)
	// Output:
	// sending from mlx5_0 port 1, LID 5
	// port 1 at DR path slid 65535; dlid 65535; 0,1: LID 12, Active
}

// ExampleOpenError shows how to tell why a port did not open.
func ExampleOpenError() {
	_, err := endport.Open(context.Background(), "mlx5_7/1",
		endport.WithSysfs("../rdma/testdata/mlx5"), endport.WithSimulator(endport.SimOff))
	var oe *endport.OpenError
	var re *endport.ResolveError
	switch {
	case errors.As(err, &re):
		fmt.Println("no such port:", re.Reason)
	case errors.As(err, &oe):
		fmt.Println(oe.Step, "failed:", oe.Err)
	}
	fmt.Println(err)
	// Output:
	// no such port: no RDMA device "mlx5_7" (have mlx5_0, mlx5_1)
	// local end port "mlx5_7/1": no RDMA device "mlx5_7" (have mlx5_0, mlx5_1)
}
