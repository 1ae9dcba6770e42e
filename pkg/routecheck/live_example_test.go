package routecheck_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/routecheck"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// ringNet is a ring of three switches, a host on each.
const ringNet = `
Switch 8 "S0"
[1] "S1"[2]
[2] "S2"[1]
[3] "H0"[1]

Switch 8 "S1"
[1] "S2"[2]
[2] "S0"[1]
[3] "H1"[1]

Switch 8 "S2"
[1] "S0"[2]
[2] "S1"[1]
[3] "H2"[1]

Hca 1 "H0"
[1] "S0"[3]

Hca 1 "H1"
[1] "S1"[3]

Hca 1 "H2"
[1] "S2"[3]
`

// ExampleSweep discovers a fabric (here an in-memory ring of three
// switches whose tables route every LID by a shortest path: each route
// crosses one link between switches, so no credit loop), reads every
// switch's forwarding tables in one sweep and checks the routing.
func ExampleSweep() {
	ring, err := subnettest.FromNet(ringNet, "H0")
	if err != nil {
		panic(err)
	}
	ring.Route()
	x := madrpc.NewTransactor(ring.Transport(), madrpc.TransactorOptions{Timeout: 50 * time.Millisecond})
	defer x.Close()
	ctx := context.Background()
	sub, err := subnet.Discover(ctx, x, subnet.Options{})
	if err != nil {
		panic(err)
	}
	sweep, err := routecheck.Sweep(ctx, x, sub, routecheck.SweepOptions{})
	if err != nil {
		panic(err)
	}
	fab, counts, err := sweep.Snapshot.Fabric()
	if err != nil {
		panic(err)
	}
	rep, err := routecheck.Check(fab, routecheck.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println("reads failed:", len(sweep.Errs))
	fmt.Println("links:", counts.Links, "LFT entries:", counts.FDBEntries, "switches:", counts.FDBSwitches)
	fmt.Println("routes:", rep.Routes.Paths, "credit loop:", len(rep.CreditLoops.Loop) > 0)
	// Output:
	// reads failed: 0
	// links: 12 LFT entries: 18 switches: 3
	// routes: 6 credit loop: false
}
