package subnettest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// ExampleFromNet builds an in-memory fabric from an ibsim net file, kills
// one node, and shows what a discovery of it finds and what it reports
// as failed: the way a test of fabric-walking code sets up its faults.
func ExampleFromNet() {
	fake, err := subnettest.FromNet(`
Switch 4 "S1"
[1] "H1"[1]
[2] "H2"[1]
[3] "H3"[1]

Hca 1 "H1"
[1] "S1"[1]

Hca 1 "H2"
[1] "S1"[2]

Hca 1 "H3"
[1] "S1"[3]
`, "H1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fake.Node("H3").Dead = true
	x := madrpc.NewTransactor(fake.Transport(), madrpc.TransactorOptions{Timeout: 20 * time.Millisecond, Retries: -1})
	defer x.Close()
	f, err := subnet.Discover(context.Background(), x, subnet.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range f.Nodes {
		fmt.Println(n.Desc)
	}
	fmt.Println(len(f.Errors), "query failed; SMPs sent:", fake.Sent())
	// Output:
	// H1
	// S1
	// H2
	// 1 query failed; SMPs sent: 15
}
