package rdmacm_test

import (
	"context"
	"encoding/binary"
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

// An ID's connection gets a type of service and an ACK timeout before
// its route is resolved (as ucmatose's -t and -a). It needs an RDMA
// device, so it is compiled, not run.
func ExampleID_SetTOS() {
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
	if err := id.ResolveAddr(ctx, netip.AddrPort{}, netip.MustParseAddrPort("192.0.2.1:7471"), 2*time.Second); err != nil {
		log.Fatal(err)
	}
	if err := id.SetTOS(0x48); err != nil {
		log.Fatal(err)
	}
	if err := id.SetAckTimeout(14); err != nil { // 4.096 µs << 14: 67 ms
		log.Fatal(err)
	}
	if err := id.ResolveRoute(ctx, 2*time.Second); err != nil {
		log.Fatal(err)
	}
}

// A server moves its connections to a channel of their own once they
// are made (as ucmatose's -m): their events come there from then on.
// It needs an RDMA device, so it is compiled, not run.
func ExampleID_Migrate() {
	ctx := context.Background()
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		log.Fatal(err)
	}
	defer ch.Close()
	listen, err := ch.CreateID(rdmacm.PortSpaceTCP)
	if err != nil {
		log.Fatal(err)
	}
	defer listen.Close()
	if err := listen.Bind(netip.MustParseAddrPort("0.0.0.0:7471")); err != nil {
		log.Fatal(err)
	}
	if err := listen.Listen(0); err != nil {
		log.Fatal(err)
	}
	req, err := listen.Await(ctx, "listen")
	if err != nil {
		log.Fatal(err)
	}
	conn := req.ID
	defer conn.Close()
	if err := conn.Accept(ctx, rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1}); err != nil {
		log.Fatal(err)
	}
	own, err := rdmacm.NewEventChannel()
	if err != nil {
		log.Fatal(err)
	}
	defer own.Close()
	if err := conn.Migrate(own); err != nil {
		log.Fatal(err)
	}
	ev, err := own.GetEvent(ctx) // the connection's RDMA_CM_EVENT_DISCONNECTED
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ev)
}

// A UD ID's route and connect events carry the address vector of the
// peer; pkg/verbs makes the address handle to send to it from it.
func ExampleAHAttr_VerbsAHAttr() {
	ev := rdmacm.UDParam{QPNum: 0x11, QKey: 0x01234567, AH: rdmacm.AHAttr{
		DGID:     netip.MustParseAddr("::ffff:198.51.100.2").As16(),
		HopLimit: 64, SGIDIndex: 1, IsGlobal: true, PortNum: 1}}
	a := ev.AH.VerbsAHAttr()
	fmt.Println(a.Port, netip.AddrFrom16(a.GRH.DGID), a.GRH.SGIDIndex, a.GRH.HopLimit)
	// Output: 1 ::ffff:198.51.100.2 1 64
}

func ExampleSIDRStatus_String() {
	fmt.Println(rdmacm.SIDRStatus(1))
	fmt.Println(rdmacm.SIDRStatus(9))
	// Output:
	// service ID not supported (nobody listens)
	// SIDR status 9
}

// A connection's QP goes before its ID: once disconnected, the ID waits
// for its RDMA_CM_EVENT_DISCONNECTED without the QP (as cmtime's
// client). It needs an RDMA device and a peer, so it is compiled, not
// run.
func ExampleID_DestroyQP() {
	ctx := context.Background()
	var id *rdmacm.ID // connected, with CreateQP's QP (see Example_client)
	if err := id.Disconnect(); err != nil {
		log.Fatal(err)
	}
	if err := id.DestroyQP(); err != nil {
		log.Fatal(err)
	}
	if _, err := id.Await(ctx, "disconnect"); err != nil {
		log.Fatal(err)
	}
	id.Close()
}

// An InfiniBand address in place of an IP one (ucmatose -f gid): the
// port's GID and the service ID of TCP port 7471.
func ExampleIBServiceAddr() {
	a := rdmacm.IBServiceAddr(netip.MustParseAddr("fe80::2:c903:0:1492"), rdmacm.PortSpaceTCP, 7471)
	fmt.Printf("%s P_Key %#x service ID %#x mask %#x\n", a.AddrPort(), a.PKey, a.ServiceID, a.ServiceMask)
	// Output: [fe80::2:c903:0:1492]:7471 P_Key 0xffff service ID 0x1061d2f mask 0xffffffffffffffff
}

// XRC over the CM is in the IB port space: the sending side's ID is
// XRC_SEND, the receiving side's listener XRC_RECV.
func ExamplePortSpace_Takes() {
	for _, t := range []verbs.QPType{verbs.QPTypeRC, verbs.QPTypeXRCSend, verbs.QPTypeXRCRecv} {
		fmt.Println(t, rdmacm.PortSpaceTCP.Takes(t), rdmacm.PortSpaceIB.Takes(t))
	}
	// Output:
	// RC true true
	// XRC_SEND false true
	// XRC_RECV false true
}

// An XRC client as librdmacm's rdma_xclient: an XRC_SEND ID in the IB
// port space, its QP with a send CQ only, the server's XRC SRQ number
// from the connection's private data, and a send to that SRQ. (It needs
// an RDMA device with XRC and a server, so it is compiled, not run.)
func ExampleEventChannel_CreateIDType() {
	ctx := context.Background()
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		log.Fatal(err)
	}
	defer ch.Close()
	id, err := ch.CreateIDType(rdmacm.PortSpaceIB, verbs.QPTypeXRCSend)
	if err != nil {
		log.Fatal(err)
	}
	defer id.Close()
	server := netip.MustParseAddrPort("192.0.2.1:7471")
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
	cq, _ := dev.CreateCQ(1, nil)
	defer cq.Close()
	mr, _ := pd.AllocMR(16, verbs.AccessLocalWrite)
	defer mr.Close()
	qp, err := id.CreateQP(pd, verbs.QPConfig{SendCQ: cq, SignalAll: true, Caps: verbs.QPCaps{MaxSendWR: 1, MaxSendSGE: 1}})
	if err != nil {
		log.Fatal(err) // a device without XRC: operation not supported
	}
	ev, err := id.Connect(ctx, rdmacm.ConnParam{RetryCount: 7, RNRRetryCount: 7})
	if err != nil || len(ev.Conn.PrivateData) < 4 {
		log.Fatal(err)
	}
	srqn := binary.BigEndian.Uint32(ev.Conn.PrivateData)
	if err := qp.PostSend(verbs.SendWR{Op: verbs.OpSend, MR: mr, Length: 16, RemoteSRQN: srqn}); err != nil {
		log.Fatal(err)
	}
	id.Disconnect()
}

// A server listens on the wildcard librdmacm's rdma_getaddrinfo would
// give it, as rdmacm-utils' rdma_xserver does. (Its answer depends on
// the machine, so it is compiled, not run.)
func ExamplePassiveAddr() {
	src, err := rdmacm.PassiveAddr(7471)
	if err != nil {
		log.Fatal(err)
	}
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
	if err := id.Bind(src); err != nil {
		log.Fatal(err)
	}
	if err := id.Listen(0); err != nil {
		log.Fatal(err)
	}
	fmt.Println("listening on", src)
}

// glibc's order of the wildcards with the loopback interface down (no
// source address for either) and up, with its default tables.
func ExamplePassiveOrder() {
	tables := rdmacm.DefaultGaiTables()
	fmt.Println(rdmacm.PassiveOrder(rdmacm.WildcardSources{}, tables))
	up := rdmacm.WildcardSources{IPv6: netip.IPv6Loopback(), IPv4: netip.MustParseAddr("127.0.0.1")}
	fmt.Println(rdmacm.PassiveOrder(up, tables))
	// Output:
	// [:: 0.0.0.0]
	// [0.0.0.0 ::]
}
