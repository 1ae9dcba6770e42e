package rdmacm_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/netip"
	"syscall"
	"time"

	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// A client connects to a server at an IP address: resolve the address
// and the route, make the QP from pkg/verbs objects, connect, and send.
// (It needs an RDMA device and a server, so it is compiled, not run.)
func Example_client() {
	ctx := context.Background()
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		log.Fatal(err)
	}
	defer ch.Close()
	id, err := ch.CreateID(rdmacm.PortSpaceTCP)
	if err != nil {
		log.Fatal(err)
	}
	defer id.Close()
	server := netip.MustParseAddrPort("192.0.2.1:7174")
	if err := id.ResolveAddr(ctx, netip.AddrPort{}, server, 2*time.Second); err != nil {
		log.Fatal(err)
	}
	if err := id.ResolveRoute(ctx, 2*time.Second); err != nil {
		log.Fatal(err)
	}
	dev, err := id.OpenDevice()
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	pd, _ := dev.AllocPD()
	defer pd.Close()
	cq, _ := dev.CreateCQ(16, nil)
	defer cq.Close()
	qp, err := id.CreateQP(pd, verbs.QPConfig{SendCQ: cq, RecvCQ: cq, Caps: verbs.QPCaps{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := id.Connect(ctx, rdmacm.ConnParam{PrivateData: []byte("hello"), ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}); err != nil {
		log.Fatal(err) // e.g. rdma_cm: connect 192.0.2.1:7174: RDMA_CM_EVENT_REJECTED, error 28 (...)
	}
	fmt.Println(qp.State()) // RTS: post sends and receives with pkg/verbs
	id.Disconnect()
}

// The error of a failed operation names it, the address and the event,
// and matches the kernel's status as an errno.
func ExampleError() {
	err := &rdmacm.Error{Op: "resolve address", Addr: netip.MustParseAddrPort("192.0.2.9:7174"),
		Event: &rdmacm.Event{Type: rdmacm.EventAddrError, Status: -int32(syscall.ETIMEDOUT)}, Err: syscall.ETIMEDOUT}
	fmt.Println(err)
	fmt.Println(errors.Is(err, syscall.ETIMEDOUT))
	// Output:
	// rdma_cm: resolve address 192.0.2.9:7174: RDMA_CM_EVENT_ADDR_ERROR, error -110 (connection timed out)
	// true
}

func ExampleEventType_String() {
	fmt.Println(rdmacm.EventRejected)
	fmt.Println(rdmacm.EventType(9))
	// Output:
	// RDMA_CM_EVENT_REJECTED
	// RDMA_CM_EVENT_ESTABLISHED
}

func ExampleRejectReason_String() {
	fmt.Println(rdmacm.RejectReason(28))
	fmt.Println(rdmacm.RejectReason(8))
	// Output:
	// consumer defined (the peer rejected)
	// invalid service ID
}
