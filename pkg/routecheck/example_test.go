package routecheck_test

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/routecheck"
)

// ExampleCheck fills the model through its constructor, as a live sweep
// would, with two CAs on one switch, and checks the routes between them.
func ExampleCheck() {
	f := routecheck.New(0)
	f.AddNode(0x20, 0x20, routecheck.Switch, 8)
	f.AddNode(0x11, 0x11, routecheck.CA, 1)
	f.AddNode(0x12, 0x12, routecheck.CA, 1)
	f.Connect(routecheck.Endpoint{Node: 0x20, Port: 1, LID: 1}, routecheck.Endpoint{Node: 0x11, Port: 1, LID: 2})
	f.Connect(routecheck.Endpoint{Node: 0x20, Port: 2, LID: 1}, routecheck.Endpoint{Node: 0x12, Port: 1, LID: 3})
	sw := f.Node(0x20)
	f.SetLFT(sw, 1, 0)
	f.SetLFT(sw, 2, 1)
	// LID 3 is left out of the table: a black hole

	rep, err := routecheck.Check(f, routecheck.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println("routes:", rep.Routes.Paths, "failed:", rep.Failed())
	for _, x := range rep.Routes.Failures {
		fmt.Println(x.Message())
		fmt.Println(x.From, "->", x.To)
	}
	// Output:
	// routes: 2 failed: true
	// -E- Unassigned LFT for lid:3 Dead end at:S0000000000000020/U1
	// S0000000000000011/U1/1 -> S0000000000000012/U1/1
}
