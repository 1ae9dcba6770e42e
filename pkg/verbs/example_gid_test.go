package verbs_test

import (
	"fmt"
	"net/netip"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// ExampleContext_QueryGIDTable lists every valid GID of a device with its
// type and network device, as one query: the table is sized by the
// ports' GID tables. It needs an RDMA device (rxe0 here), so it is
// compiled, not run, by go test (TestIntegrationQueryGIDTable runs the
// same steps in the VM).
func ExampleContext_QueryGIDTable() {
	ctx, err := verbs.Open("rxe0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	attr, err := ctx.QueryDevice()
	if err != nil {
		fmt.Println(err)
		return
	}
	size := 0
	for p := 1; p <= attr.PhysPortCnt; p++ {
		port, err := ctx.QueryPort(p)
		if err != nil {
			fmt.Println(err)
			return
		}
		size += port.GIDTblLen
	}
	table, err := ctx.QueryGIDTable(size)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range table {
		fmt.Printf("port %d index %d: %s %s, ifindex %d\n", e.Port, e.Index, netip.AddrFrom16(e.GID), e.Type, e.NetdevIndex)
	}
}

// ExampleContext_CreateCQOnVector spreads CQs over the device's
// completion vectors, one CQ a vector, as a program with a thread per
// vector does. It needs an RDMA device (rxe0 here), so it is compiled,
// not run, by go test (TestIntegrationCreateCQ runs in the VM).
func ExampleContext_CreateCQOnVector() {
	ctx, err := verbs.Open("rxe0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	attr, err := ctx.QueryDevice()
	if err != nil {
		fmt.Println(err)
		return
	}
	for v := range attr.NumCompVectors {
		cq, err := ctx.CreateCQOnVector(64, nil, v)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s on vector %d\n", cq, v)
		defer cq.Close()
	}
}
