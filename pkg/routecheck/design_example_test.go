package routecheck_test

import (
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/pkg/routecheck"
)

// ringTopology writes the topology file ibnetdiscover prints for a ring
// of n switches with a host on each, run from the first host.
func ringTopology(n int) string {
	var b strings.Builder
	b.WriteString("# Initiated from node 0000000000100000 port 0000000000100001\n")
	for i := 0; i < n; i++ {
		sw := 0x200000 + i
		fmt.Fprintf(&b, "\nswitchguid=0x%x(%x)\nSwitch\t8 \"S-%016x\"\t\t# \"S%d\" base port 0 lid 0 lmc 0\n", sw, sw, sw, i)
		fmt.Fprintf(&b, "[1]\t\"S-%016x\"[2]\n", 0x200000+(i+1)%n)
		fmt.Fprintf(&b, "[2]\t\"S-%016x\"[1]\n", 0x200000+(i+n-1)%n)
		fmt.Fprintf(&b, "[3]\t\"H-%016x\"[1](%x) \n", 0x100000+2*i, 0x100001+2*i)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\ncaguid=0x%x\nCa\t1 \"H-%016x\"\t\t# \"H%d\"\n", 0x100000+2*i, 0x100000+2*i, i)
		fmt.Fprintf(&b, "[1](%x) \t\"S-%016x\"[3]\n", 0x100001+2*i, 0x200000+i)
	}
	return b.String()
}

// ExampleDesign routes a ring from its topology file with each engine,
// the SM on the host the file was made from, and checks the routing for
// credit loops: min-hop's routes around the ring close one, Up/Down's
// from the first switch do not.
func ExampleDesign() {
	topo, err := routecheck.ReadTopology(strings.NewReader(ringTopology(5)), "ring.topo")
	if err != nil {
		fmt.Println(err)
		return
	}
	sm, err := topo.Lookup("H0")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, engine := range []routecheck.Engine{routecheck.MinHop, routecheck.UpDown} {
		fab, res, err := routecheck.Design(topo, routecheck.DesignOptions{
			SMNode: sm.GUID, SMPort: 1, Engine: engine, Roots: []uint64{0x200000}})
		if err != nil {
			fmt.Println(err)
			return
		}
		rep, err := routecheck.Check(fab, routecheck.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %d ports up to LID %d, %d routes, credit loop: %v\n",
			res.Engine, res.Ports, res.MaxLID, rep.Routes.Paths, len(rep.CreditLoops.Loop) > 0)
	}
	// Output:
	// minhop: 10 ports up to LID 10, 20 routes, credit loop: true
	// updn: 10 ports up to LID 10, 20 routes, credit loop: false
}

// ExampleDesign_enhanced routes a ring of four switches with two LIDs a
// port (LMC 1) by ibdm's enhanced LMC routing, and shows how it chose the
// ports and how many nodes the two routes of each pair of hosts share.
// Each switch is a system of its own, so every port leads to another
// system and the subscriptions alone spread the LIDs: of the four pairs
// of hosts two switches apart, two get a route either way round the ring
// (sharing the switches at the ends), two get both routes the same way.
// ibdmchk -e prints the same counts for the same ring.
func ExampleDesign_enhanced() {
	topo, err := routecheck.ReadTopology(strings.NewReader(ringTopology(4)), "ring.topo")
	if err != nil {
		fmt.Println(err)
		return
	}
	fab, res, err := routecheck.Design(topo, routecheck.DesignOptions{
		LMC: 1, SMNode: topo.FromNode, SMPort: 1, Enhanced: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	e := res.Enhanced
	fmt.Printf("by system %d, by node %d, by subscription %d\n", e.BySystem, e.ByNode, e.BySubscription)
	rep, err := routecheck.Check(fab, routecheck.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for common, byLength := range rep.Routes.CommonNodes {
		for length, pairs := range byLength {
			if length > 0 && pairs > 0 {
				fmt.Printf("%d pairs of routes through %d switches share %d\n", pairs, length, common)
			}
		}
	}
	// Output:
	// by system 56, by node 0, by subscription 0
	// 8 pairs of routes through 2 switches share 2
	// 2 pairs of routes through 3 switches share 2
	// 2 pairs of routes through 3 switches share 3
}
