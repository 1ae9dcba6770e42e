package route_test

import (
	"context"
	"fmt"
	"log"
	"testing"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/route"
)

// Collect every switch's LFT and ask each where LID 9 (an HCA's port)
// goes.
func ExampleCollect() {
	_, x, fab := twoSwitches(&testing.T{}, nil)
	tables, err := route.Collect(context.Background(), x, fab.ByType(mad.NodeTypeSwitch), route.CollectOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, st := range tables.Switches {
		port, _ := st.OutPort(9)
		fmt.Printf("%s: LID 9 out of port %d\n", st.Switch.Desc, port)
	}
	// Output:
	// Switch2: LID 9 out of port 2
	// Switch1: LID 9 out of port 3
}
