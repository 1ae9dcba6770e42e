package rdmacmutils_test

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/rdmacmutils"
)

// A client advertises the buffer the server is to read; the server
// decodes what it received.
func ExampleRpingInfo() {
	wire, _ := rdmacmutils.RpingInfo{Addr: 0x7f3a5f041000, RKey: 0x1a2b, Size: 64}.MarshalBinary()
	fmt.Printf("% x\n", wire)

	var got rdmacmutils.RpingInfo
	if err := got.UnmarshalBinary(wire); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("rkey %#x addr %#x len %d\n", got.RKey, got.Addr, got.Size)

	fmt.Println(got.UnmarshalBinary(wire[:12]))
	// Output:
	// 00 00 7f 3a 5f 04 10 00 00 00 1a 2b 00 00 00 40
	// rkey 0x1a2b addr 0x7f3a5f041000 len 64
	// rping message: 12 bytes, want 16
}

// rdma_xserver sends its XRC SRQ number as its accept's private data;
// the client reads it from the reply.
func ExampleXRCSRQNumber() {
	pd, _ := rdmacmutils.XRCSRQNumber(0x123).MarshalBinary()
	var srqn rdmacmutils.XRCSRQNumber
	if err := srqn.UnmarshalBinary(pd); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("private data % x: SRQ %#x\n", pd, uint32(srqn))
	// Output:
	// private data 00 00 01 23: SRQ 0x123
}
