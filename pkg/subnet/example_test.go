package subnet_test

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// exampleNet is a small ibsim net file: one switch, two HCAs.
const exampleNet = `
Switch 4 "S1"
[1] "H1"[1]
[2] "H2"[1]

Hca 1 "H1"
[1] "S1"[1]

Hca 1 "H2"
[1] "S1"[2]
`

// ExampleDiscover discovers a fabric by directed route and lists its
// switches with the state of each linked port. A program passes the
// transactor of an opened end port (endport.Open(ctx, "")); here the
// fabric is subnettest's in-memory one.
func ExampleDiscover() {
	fake, err := subnettest.FromNet(exampleNet, "H1")
	if err != nil {
		fmt.Println(err)
		return
	}
	x := madrpc.NewTransactor(fake.Transport(), madrpc.TransactorOptions{})
	defer x.Close()
	f, err := subnet.Discover(context.Background(), x, subnet.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d nodes\n", len(f.Nodes))
	for _, sw := range f.ByType(mad.NodeTypeSwitch) {
		fmt.Printf("switch %s %q\n", sw.GUID, sw.Desc)
		for _, p := range sw.Ports {
			if p == nil || p.Remote == nil {
				continue
			}
			fmt.Printf("  port %d %s to %q port %d\n", p.Num, p.Info.LinkState, p.Remote.Node.Desc, p.Remote.Num)
		}
	}
	// Output:
	// 3 nodes
	// switch 0x0000000000200000 "S1"
	//   port 1 Active to "H1" port 1
	//   port 2 Active to "H2" port 1
}

// ExampleTopologyWriter_Entries walks the nodes in the order
// ibnetdiscover's topology lists them, with each node's line and port
// lines as the topology has them, without rendering the whole file
// (switches first, then CAs, each kind last discovered first).
func ExampleTopologyWriter_Entries() {
	fake, err := subnettest.FromNet(exampleNet, "H1")
	if err != nil {
		fmt.Println(err)
		return
	}
	x := madrpc.NewTransactor(fake.Transport(), madrpc.TransactorOptions{})
	defer x.Close()
	f, err := subnet.Discover(context.Background(), x, subnet.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	tw := &subnet.TopologyWriter{Fabric: f}
	for _, e := range tw.Entries() {
		fmt.Printf("%s as switch %v, %d linked ports\n", e.Node.Desc, e.AsSwitch, len(e.LinkedPorts()))
		fmt.Printf("%q\n", tw.NodeLine(e))
	}
	// Output:
	// S1 as switch true, 2 linked ports
	// "Switch\t4 \"S-0000000000200000\"\t\t# \"S1\" base port 0 lid 1 lmc 0\n"
	// H2 as switch false, 1 linked ports
	// "Ca\t1 \"H-0000000000100002\"\t\t# \"H2\"\n"
	// H1 as switch false, 1 linked ports
	// "Ca\t1 \"H-0000000000100000\"\t\t# \"H1\"\n"
}
