package ibsim_test

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/ibsim"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// ExampleDial attaches to a running ibsim at its node Hca1, as
// IBSIM_SOCKNAME and SIM_HOST name them, and reads the NodeDescription at
// the far end of the attach port (the directed route 0,1). It needs a
// running ibsim, so it is compiled, not run, by go test. Programs usually
// call endport.Open instead, which dials ibsim when IBSIM_SOCKNAME is set.
func ExampleDial() {
	ctx := context.Background()
	c, err := ibsim.Dial(ctx, ibsim.Config{SockName: "sim", Host: "Hca1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	x := madrpc.NewTransactor(c, madrpc.TransactorOptions{}) // closes c with it
	defer x.Close()
	var nd mad.NodeDescription
	if _, err := madrpc.NewQuerier(x, mad.DRPath(0, 1)).Get(ctx, &nd, 0); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(nd.NodeDescription)
}
