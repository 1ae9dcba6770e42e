package madtest_test

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// ExampleSMA tests code that reads a node by SMPs without a fabric: an
// SMA answers from the attributes put in it, keeps what a Set wrote, and
// lists the requests it saw.
func ExampleSMA() {
	sma := madtest.NewSMA().
		Put(&mad.NodeInfo{NodeType: mad.NodeTypeSwitch, NumPorts: 36}, 0).
		Put(&mad.PortInfo{LID: 7, LinkState: mad.PortStateActive}, 3)
	x := madrpc.NewTransactor(madtest.New(sma.Handle), madrpc.TransactorOptions{})
	defer x.Close()
	q := madrpc.NewQuerier(x, mad.DRPath(0, 1))
	ctx := context.Background()

	var ni mad.NodeInfo
	var pi mad.PortInfo
	if _, err := q.Get(ctx, &ni, 0); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := q.Get(ctx, &pi, 3); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ni.NodeType, ni.NumPorts, pi.LinkState)
	// An attribute nothing was put for is answered with a status error.
	var si mad.SwitchInfo
	_, err := q.Get(ctx, &si, 0)
	fmt.Println(err != nil)
	fmt.Println(len(sma.Requests()), "requests")
	// Output:
	// Switch 36 Active
	// true
	// 3 requests
}
