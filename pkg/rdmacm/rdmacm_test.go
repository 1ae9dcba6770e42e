package rdmacm

import (
	"context"
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/verbs"
)

var (
	srcAddr = netip.MustParseAddrPort("198.51.100.1:0")
	dstAddr = netip.MustParseAddrPort("198.51.100.2:7174")
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestCreateIDCommand(t *testing.T) {
	ch, k := fakeChannel(t)
	for _, c := range []struct {
		ps   PortSpace
		want verbs.QPType
	}{{PortSpaceTCP, verbs.QPTypeRC}, {PortSpaceUDP, verbs.QPTypeUD}, {PortSpaceIPoIB, verbs.QPTypeUD}, {PortSpaceIB, verbs.QPTypeRC}} {
		id, err := ch.CreateID(c.ps)
		if err != nil {
			t.Fatal(err)
		}
		in := k.last(t, cmdCreateID)
		got := []any{len(in), le.Uint64(in[0:]), PortSpace(le.Uint16(in[16:])), verbs.QPType(in[18]), id.QPType()}
		want := []any{createIDSize, id.uid, c.ps, c.want, c.want}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: unexpected CREATE_ID (-want +got):\n%s", c.ps, diff)
		}
	}
}

func TestResolveAddr(t *testing.T) {
	ch, k := fakeChannel(t)
	id, err := ch.CreateID(PortSpaceTCP)
	if err != nil {
		t.Fatal(err)
	}
	k.setQuery(0x0200_00ff_fe00_0001, 1, netip.MustParseAddrPort("198.51.100.1:40000"), dstAddr)
	k.push(id.uid, id.handle, EventAddrResolved, 0, nil)
	if err := id.ResolveAddr(testCtx(t), srcAddr, dstAddr, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	in := k.last(t, cmdResolveAddr)
	got := []any{len(in), le.Uint32(in[0:]), le.Uint32(in[4:]), le.Uint16(in[8:]), le.Uint16(in[10:]), in[16:32], in[16+sockaddrStorage : 16+sockaddrStorage+16]}
	want := []any{resolveAddrSize, id.handle, uint32(2000), uint16(16), uint16(16),
		[]byte{2, 0, 0, 0, 198, 51, 100, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		[]byte{2, 0, 0x1c, 0x06, 198, 51, 100, 2, 0, 0, 0, 0, 0, 0, 0, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected RESOLVE_ADDR (-want +got):\n%s", diff)
	}
	wantAddr := Addr{NodeGUID: 0x0200_00ff_fe00_0001, Port: 1, PKey: 0xffff, Local: netip.MustParseAddrPort("198.51.100.1:40000"), Remote: dstAddr}
	if diff := cmp.Diff(wantAddr, id.Addr(), cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
		t.Errorf("unexpected address after resolution (-want +got):\n%s", diff)
	}
}

// TestErrorEvents: each error event ends the operation waiting for it
// with an *Error naming the operation, the address and the event, and
// the kernel's status as an errno where it is one.
func TestErrorEvents(t *testing.T) {
	for _, c := range []struct {
		name   string
		ev     EventType
		status int32
		op     func(context.Context, *ID) error
		want   string
		errno  syscall.Errno
	}{
		{"address timeout", EventAddrError, -int32(syscall.ETIMEDOUT),
			func(ctx context.Context, id *ID) error { return id.ResolveAddr(ctx, srcAddr, dstAddr, time.Second) },
			"rdma_cm: resolve address 198.51.100.2:7174: RDMA_CM_EVENT_ADDR_ERROR, error -110 (connection timed out)", syscall.ETIMEDOUT},
		{"no route", EventRouteError, -int32(syscall.ENODEV),
			func(ctx context.Context, id *ID) error { return id.ResolveRoute(ctx, time.Second) },
			"rdma_cm: resolve route: RDMA_CM_EVENT_ROUTE_ERROR, error -19 (no such device)", syscall.ENODEV},
		{"rejected by the peer", EventRejected, 28,
			func(ctx context.Context, id *ID) error { _, err := id.Connect(ctx, ConnParam{}); return err },
			"rdma_cm: connect: RDMA_CM_EVENT_REJECTED, error 28 (consumer defined (the peer rejected))", syscall.ECONNREFUSED},
		{"rejected on iWARP", EventRejected, -int32(syscall.ECONNREFUSED),
			func(ctx context.Context, id *ID) error { _, err := id.Connect(ctx, ConnParam{}); return err },
			"rdma_cm: connect: RDMA_CM_EVENT_REJECTED, error -111 (connection refused)", syscall.ECONNREFUSED},
		{"unreachable", EventUnreachable, -int32(syscall.ETIMEDOUT),
			func(ctx context.Context, id *ID) error { _, err := id.Connect(ctx, ConnParam{}); return err },
			"rdma_cm: connect: RDMA_CM_EVENT_UNREACHABLE, error -110 (connection timed out)", syscall.ETIMEDOUT},
		{"UD peer's CM does not know the service", EventUnreachable, 1,
			func(ctx context.Context, id *ID) error { _, err := id.Connect(ctx, ConnParam{}); return err },
			"rdma_cm: connect: RDMA_CM_EVENT_UNREACHABLE, error 1 (service ID not supported (nobody listens))", syscall.ECONNREFUSED},
		{"connect error", EventConnectError, -int32(syscall.ECONNRESET),
			func(ctx context.Context, id *ID) error { _, err := id.Connect(ctx, ConnParam{}); return err },
			"rdma_cm: connect: RDMA_CM_EVENT_CONNECT_ERROR, error -104 (connection reset by peer)", syscall.ECONNRESET},
		{"device removed while accepting", EventDeviceRemoval, 0,
			func(ctx context.Context, id *ID) error { return id.Accept(ctx, ConnParam{}) },
			"rdma_cm: accept: RDMA_CM_EVENT_DEVICE_REMOVAL", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch, k := fakeChannel(t)
			id, err := ch.CreateID(PortSpaceTCP)
			if err != nil {
				t.Fatal(err)
			}
			k.push(id.uid, id.handle, c.ev, c.status, nil)
			err = c.op(testCtx(t), id)
			var e *Error
			if !errors.As(err, &e) || e.Event == nil || e.Event.Type != c.ev {
				t.Fatalf("got %v, want an *Error with %s", err, c.ev)
			}
			if got := err.Error(); got != c.want {
				t.Errorf("unexpected message (-want +got):\n%s", cmp.Diff(c.want, got))
			}
			if c.errno != 0 && !errors.Is(err, c.errno) {
				t.Errorf("%v does not match %v", err, c.errno)
			}
		})
	}
}

func TestCommandRefused(t *testing.T) {
	for _, c := range []struct {
		errno  syscall.Errno
		target error
	}{{syscall.EACCES, os.ErrPermission}, {syscall.ENODEV, os.ErrNotExist}, {syscall.EADDRINUSE, syscall.EADDRINUSE}} {
		ch, k := fakeChannel(t)
		id, err := ch.CreateID(PortSpaceTCP)
		if err != nil {
			t.Fatal(err)
		}
		k.fail[cmdBind] = c.errno
		err = id.Bind(dstAddr)
		if !errors.Is(err, c.target) || !strings.Contains(err.Error(), "bind 198.51.100.2:7174") {
			t.Errorf("bind refused with %v: got %v, want it to name the bind and match %v", c.errno, err, c.target)
		}
	}
}

// TestListenConnectRequest: a connect request makes a new ID whose
// listener is the listening one, with the peer's parameters and private
// data; accepting it sends the new ID's uid and waits for ESTABLISHED.
func TestListenConnectRequest(t *testing.T) {
	ch, k := fakeChannel(t)
	l, err := ch.CreateID(PortSpaceTCP)
	if err != nil {
		t.Fatal(err)
	}
	k.setQuery(0x1, 1, dstAddr, netip.AddrPort{})
	if err := l.Bind(dstAddr); err != nil {
		t.Fatal(err)
	}
	if in := k.last(t, cmdBind); le.Uint32(in[0:]) != l.handle || le.Uint16(in[4:]) != 16 {
		t.Errorf("unexpected BIND %x", in[:24])
	}
	if err := l.Listen(3); err != nil {
		t.Fatal(err)
	}
	req := ConnParam{PrivateData: []byte("hello"), ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7, QPNum: 0x11}
	k.push(l.uid, 777, EventConnectRequest, 0, connParamBytes(t, req))
	ev, err := l.Await(testCtx(t), "listen")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != EventConnectRequest || ev.Listener != l || ev.ID == l || ev.ID.handle != 777 || ev.ID.Listener() != l {
		t.Fatalf("unexpected connect request %+v", ev)
	}
	if diff := cmp.Diff(req, ev.Conn); diff != "" {
		t.Errorf("unexpected request parameters (-want +got):\n%s", diff)
	}
	child := ev.ID
	k.push(child.uid, child.handle, EventEstablished, 0, nil)
	if err := child.Accept(testCtx(t), ConnParam{ResponderResources: 1, InitiatorDepth: 1}); err != nil {
		t.Fatal(err)
	}
	in := k.last(t, cmdAccept)
	if le.Uint64(in[0:]) != child.uid || le.Uint32(in[8+connParamSize:]) != 777 || in[8+8+maxPrivateData+7] != 1 {
		t.Errorf("unexpected ACCEPT: uid %d id %d valid %d", le.Uint64(in[0:]), le.Uint32(in[8+connParamSize:]), in[8+8+maxPrivateData+7])
	}
}

// TestConnectEstablished: a connect without a QP is established at
// ESTABLISHED (iWARP, or a kernel QP) and hands a CONNECT_RESPONSE back
// to the caller (who moves the QP and calls Establish).
func TestConnectEstablished(t *testing.T) {
	for _, c := range []struct {
		ev   EventType
		want EventType
	}{{EventEstablished, EventEstablished}, {EventConnectResponse, EventConnectResponse}} {
		ch, k := fakeChannel(t)
		id, err := ch.CreateID(PortSpaceTCP)
		if err != nil {
			t.Fatal(err)
		}
		k.push(id.uid, id.handle, c.ev, 0, connParamBytes(t, ConnParam{PrivateData: []byte{1, 2, 3}}))
		ev, err := id.Connect(testCtx(t), ConnParam{PrivateData: []byte("req"), QPNum: 0x42, RetryCount: 7})
		if err != nil || ev.Type != c.want {
			t.Fatalf("%s: got %v, %v", c.ev, ev, err)
		}
		if diff := cmp.Diff([]byte{1, 2, 3}, ev.Conn.PrivateData); diff != "" {
			t.Errorf("unexpected private data (-want +got):\n%s", diff)
		}
		in := k.last(t, cmdConnect)
		if le.Uint32(in[0:]) != 0x42 || string(in[8:11]) != "req" || in[8+maxPrivateData] != 3 || in[8+maxPrivateData+5] != 7 || le.Uint32(in[connParamSize:]) != id.handle {
			t.Errorf("unexpected CONNECT %x", in)
		}
	}
}

func TestConnectPrivateDataTooLong(t *testing.T) {
	ch, _ := fakeChannel(t)
	id, _ := ch.CreateID(PortSpaceTCP)
	if _, err := id.Connect(testCtx(t), ConnParam{PrivateData: make([]byte, 257)}); err == nil || !strings.Contains(err.Error(), "257 bytes of private data") {
		t.Errorf("got %v", err)
	}
}

// TestBacklog: events of another ID wait for it while one ID waits for
// its own.
func TestBacklog(t *testing.T) {
	ch, k := fakeChannel(t)
	a, _ := ch.CreateID(PortSpaceTCP)
	b, _ := ch.CreateID(PortSpaceTCP)
	k.push(b.uid, b.handle, EventDisconnected, 0, nil)
	k.push(a.uid, a.handle, EventAddrResolved, 0, nil)
	if err := a.ResolveAddr(testCtx(t), netip.AddrPort{}, dstAddr, time.Second); err != nil {
		t.Fatal(err)
	}
	ev, err := b.Await(testCtx(t), "connection")
	if err != nil || ev.Type != EventDisconnected || ev.ID != b {
		t.Fatalf("got %v, %v; want b's DISCONNECTED", ev, err)
	}
}

// TestConcurrentAwait: two goroutines wait each for its own ID; the one
// fetching hands the other's event over.
func TestConcurrentAwait(t *testing.T) {
	ch, k := fakeChannel(t)
	a, _ := ch.CreateID(PortSpaceTCP)
	b, _ := ch.CreateID(PortSpaceTCP)
	got := make(chan *Event, 2)
	for _, id := range []*ID{a, b} {
		go func() {
			ev, err := id.Await(testCtx(t), "connection")
			if err != nil {
				t.Error(err)
			}
			got <- ev
		}()
	}
	time.Sleep(10 * time.Millisecond)
	k.push(b.uid, b.handle, EventDisconnected, 0, nil)
	k.push(a.uid, a.handle, EventTimewaitExit, 0, nil)
	seen := map[*ID]EventType{}
	for range 2 {
		select {
		case ev := <-got:
			seen[ev.ID] = ev.Type
		case <-time.After(5 * time.Second):
			t.Fatal("a waiter never got its event")
		}
	}
	if seen[a] != EventTimewaitExit || seen[b] != EventDisconnected {
		t.Errorf("unexpected events %v", seen)
	}
}

func TestAwaitContextEnds(t *testing.T) {
	ch, _ := fakeChannel(t)
	id, _ := ch.CreateID(PortSpaceTCP)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := id.Await(ctx, "connection")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want the context's deadline", err)
	}
}

// TestEventOfDestroyedID: an event the kernel queued for an ID before it
// was destroyed is dropped, not handed to anyone.
func TestEventOfDestroyedID(t *testing.T) {
	ch, k := fakeChannel(t)
	a, _ := ch.CreateID(PortSpaceTCP)
	b, _ := ch.CreateID(PortSpaceTCP)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if in := k.last(t, cmdDestroyID); le.Uint32(in[8:]) != a.handle {
		t.Errorf("DESTROY_ID of %d, want %d", le.Uint32(in[8:]), a.handle)
	}
	k.push(a.uid, a.handle, EventDisconnected, 0, nil)
	k.push(b.uid, b.handle, EventDisconnected, 0, nil)
	ev, err := ch.GetEvent(testCtx(t))
	if err != nil || ev.ID != b {
		t.Fatalf("got %v, %v; want b's event", ev, err)
	}
	if err := a.Bind(dstAddr); !errors.Is(err, ErrClosed) {
		t.Errorf("bind on a closed ID: got %v", err)
	}
}

// TestEveryEvent: each event type decodes with its name, the connection
// parameters of an RC ID, the UD parameters of a UD ID.
func TestEveryEvent(t *testing.T) {
	ch, k := fakeChannel(t)
	rc, _ := ch.CreateID(PortSpaceTCP)
	ud, _ := ch.CreateID(PortSpaceUDP)
	udp := make([]byte, udParamSize)
	le.PutUint32(udp[0:], 0x123)
	le.PutUint32(udp[4:], 0x11111111)
	udp[8+29] = 1                        // is_global
	udp[8+ahAttrSize+maxPrivateData] = 2 // private data length
	udp[8+ahAttrSize] = 9
	for typ := EventAddrResolved; typ <= EventTimewaitExit; typ++ {
		if typ == EventConnectRequest || typ == EventMulticastJoin || typ == EventMulticastError {
			continue // their own tests
		}
		k.push(rc.uid, rc.handle, typ, 0, connParamBytes(t, ConnParam{QPNum: 7}))
		ev, err := ch.GetEvent(testCtx(t))
		if err != nil || ev.Type != typ || ev.ID != rc || ev.Conn.QPNum != 7 {
			t.Errorf("%s on RC: got %+v, %v", typ, ev, err)
		}
		if !strings.HasPrefix(typ.String(), "RDMA_CM_EVENT_") {
			t.Errorf("event %d is named %q", int(typ), typ)
		}
		k.push(ud.uid, ud.handle, typ, 0, udp)
		ev, err = ch.GetEvent(testCtx(t))
		want := UDParam{QPNum: 0x123, QKey: 0x11111111, AH: AHAttr{IsGlobal: true}, PrivateData: []byte{9, 0}}
		if err != nil || ev.ID != ud || !cmp.Equal(want, ev.UD) {
			t.Errorf("%s on UD: got %+v, %v", typ, ev, err)
		}
	}
	if got := EventType(16).String(); got != "UNKNOWN EVENT" {
		t.Errorf("event 16 is %q", got)
	}
}

func TestMulticastJoin(t *testing.T) {
	ch, k := fakeChannel(t)
	id, _ := ch.CreateID(PortSpaceUDP)
	group := netip.MustParseAddr("239.1.2.3")
	go func() {
		// The join's uid is the next one the channel hands out.
		udp := make([]byte, udParamSize)
		le.PutUint32(udp[0:], 0xffffff)
		le.PutUint32(udp[4:], 0x01234567)
		k.push(id.uid+1, 501, EventMulticastJoin, 0, udp)
	}()
	mc, ev, err := id.JoinMulticast(testCtx(t), group, false)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Multicast != mc || ev.UD.QPNum != 0xffffff || ev.UD.QKey != 0x01234567 || mc.Addr != group {
		t.Errorf("unexpected join event %+v", ev)
	}
	in := k.last(t, cmdJoinMcast)
	if le.Uint32(in[16:]) != id.handle || le.Uint16(in[20:]) != 16 || le.Uint16(in[22:]) != 0 {
		t.Errorf("unexpected JOIN_MCAST %x", in[:40])
	}
	if err := mc.Leave(); err != nil {
		t.Fatal(err)
	}
	if in := k.last(t, cmdLeaveMcast); le.Uint32(in[8:]) != 501 {
		t.Errorf("LEAVE_MCAST of %d, want 501", le.Uint32(in[8:]))
	}
}

func TestDevice(t *testing.T) {
	old := devices
	t.Cleanup(func() { devices = old; deviceCache.devs = nil })
	devices = func() ([]verbs.Device, error) {
		return []verbs.Device{{Name: "rxe0", NodeGUID: 0x10}, {Name: "siw0", NodeGUID: 0x20, Transport: verbs.TransportIWARP}}, nil
	}
	deviceCache.devs = nil
	ch, k := fakeChannel(t)
	id, _ := ch.CreateID(PortSpaceTCP)
	k.setQuery(0x20, 1, srcAddr, dstAddr)
	d, err := id.Device()
	if err != nil || d.Name != "siw0" {
		t.Fatalf("got %v, %v", d.Name, err)
	}
	if iw, _ := id.iwarp(); !iw {
		t.Error("siw0 is not iWARP")
	}
	id2, _ := ch.CreateID(PortSpaceTCP)
	k.setQuery(0x30, 1, srcAddr, dstAddr)
	if _, err := id2.Device(); err == nil || !strings.Contains(err.Error(), "no verbs device has node GUID 0x0000000000000030") {
		t.Errorf("got %v", err)
	}
}

func TestSockaddrIPv6(t *testing.T) {
	a := netip.MustParseAddrPort("[2001:db8::1]:7174")
	b := make([]byte, sockaddrStorage)
	if n := putSockaddr(b, a); n != 28 {
		t.Fatalf("sockaddr_in6 of %d bytes", n)
	}
	got, err := sockaddr(b)
	if err != nil || got != a {
		t.Errorf("got %v, %v; want %v", got, err, a)
	}
	ib := make([]byte, 48)
	le.PutUint16(ib[0:], afIB)
	copy(ib[8:24], netip.MustParseAddr("fe80::2:c903:0:1492").AsSlice())
	ib[31] = 0x22
	if got, err := sockaddr(ib); err != nil || got.String() != "[fe80::2:c903:0:1492]:34" {
		t.Errorf("AF_IB: got %v, %v", got, err)
	}
	bad := make([]byte, 16)
	le.PutUint16(bad, 99)
	if _, err := sockaddr(bad); !errors.Is(err, errMalformed) {
		t.Errorf("family 99: got %v", err)
	}
}

func TestQPAttr(t *testing.T) {
	b := make([]byte, qpAttrResp)
	le.PutUint32(b[0:], uint32(QPAttrState|QPAttrAV|QPAttrPathMTU))
	le.PutUint32(b[4:], uint32(verbs.QPStateRTR))
	le.PutUint32(b[12:], uint32(verbs.MTU1024))
	le.PutUint32(b[24:], 0xabcdef)
	le.PutUint32(b[32:], 0x99)
	le.PutUint32(b[36:], uint32(verbs.AccessRemoteRead|verbs.AccessRemoteWrite))
	b[40] = 0xfe  // dgid[0]
	b[40+20] = 1  // sgid_index
	b[40+21] = 64 // hop limit
	b[40+29] = 1  // is_global
	b[131] = 1    // max_dest_rd_atomic
	b[132] = 12   // min_rnr_timer
	b[133] = 1    // port
	a := decodeQPAttr(b)
	var dgid [16]byte
	dgid[0] = 0xfe
	want := verbs.RTRAttr{PathMTU: verbs.MTU1024, DestQPN: 0x99, RQPSN: 0xabcdef, MaxDestRdAtomic: 1, MinRNRTimer: 12,
		GRH: &verbs.GRH{DGID: dgid, SGIDIndex: 1, HopLimit: 64}}
	if diff := cmp.Diff(want, a.RTRAttr()); diff != "" {
		t.Errorf("unexpected RTR attributes (-want +got):\n%s", diff)
	}
	if got := a.InitAttr(); got.Port != 1 || got.Access != verbs.AccessRemoteRead|verbs.AccessRemoteWrite {
		t.Errorf("unexpected INIT attributes %+v", got)
	}
}

func TestInitQPAttrCommand(t *testing.T) {
	ch, k := fakeChannel(t)
	id, _ := ch.CreateID(PortSpaceTCP)
	k.qpAttr = make([]byte, qpAttrResp)
	k.qpAttr[133] = 1
	a, err := id.InitQPAttr(verbs.QPStateRTS)
	if err != nil || a.Port != 1 {
		t.Fatalf("got %+v, %v", a, err)
	}
	if in := k.last(t, cmdInitQPAttr); le.Uint32(in[8:]) != id.handle || le.Uint32(in[12:]) != uint32(verbs.QPStateRTS) {
		t.Errorf("unexpected INIT_QP_ATTR %x", in)
	}
}

func TestRejectAndDisconnect(t *testing.T) {
	ch, k := fakeChannel(t)
	id, _ := ch.CreateID(PortSpaceTCP)
	if err := id.Reject([]byte("busy")); err != nil {
		t.Fatal(err)
	}
	if in := k.last(t, cmdReject); le.Uint32(in[0:]) != id.handle || in[4] != 4 || string(in[8:12]) != "busy" {
		t.Errorf("unexpected REJECT %x", in[:16])
	}
	if err := id.Disconnect(); err != nil {
		t.Fatal(err)
	}
	if in := k.last(t, cmdDisconnect); le.Uint32(in[0:]) != id.handle {
		t.Errorf("unexpected DISCONNECT %x", in)
	}
}

func TestClosedChannel(t *testing.T) {
	ch, k := fakeChannel(t)
	id, _ := ch.CreateID(PortSpaceTCP)
	ch.Close()
	if !k.closed {
		t.Error("the kernel device was not closed")
	}
	if _, err := ch.CreateID(PortSpaceTCP); !errors.Is(err, ErrClosed) {
		t.Errorf("CreateID on a closed channel: %v", err)
	}
	if _, err := ch.GetEvent(testCtx(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("GetEvent on a closed channel: %v", err)
	}
	if err := id.Close(); err != nil {
		t.Errorf("closing an ID of a closed channel: %v", err)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add(uint32(EventConnectRequest), []byte("private"), true)
	f.Add(uint32(EventMulticastJoin), []byte{}, false)
	f.Fuzz(func(t *testing.T, typ uint32, param []byte, ud bool) {
		ch := newChannel(newFake())
		ps := PortSpaceTCP
		if ud {
			ps = PortSpaceUDP
		}
		id, _ := ch.CreateID(ps)
		b := make([]byte, eventResp)
		le.PutUint64(b[0:], id.uid)
		le.PutUint32(b[8:], id.handle)
		le.PutUint32(b[12:], typ)
		copy(b[20:], param)
		ch.mu.Lock()
		ev, err := ch.decode(b)
		ch.mu.Unlock()
		if err == nil && ev != nil && ev.ID == nil {
			t.Errorf("event %d decoded without an ID", typ)
		}
	})
}

func FuzzSockaddr(f *testing.F) {
	f.Add([]byte{2, 0, 0x1c, 0x06, 198, 51, 100, 2, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(make([]byte, 28))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := sockaddr(b)
		if err != nil || !a.IsValid() || len(b) < 2 || le.Uint16(b) == afIB || a.Addr().Zone() != "" {
			return
		}
		out := make([]byte, sockaddrStorage)
		putSockaddr(out, a)
		again, err := sockaddr(out)
		if err != nil || again != a {
			t.Errorf("%v round-trips to %v, %v", a, again, err)
		}
	})
}

// TestSetOption: each option is a SET_OPTION of level RDMA_OPTION_ID
// with its name, and its value in the buffer the command points to.
func TestSetOption(t *testing.T) {
	ch, k := fakeChannel(t)
	id, err := ch.CreateID(PortSpaceTCP)
	if err != nil {
		t.Fatal(err)
	}
	type cmd struct {
		Len, ID, Level, Name, OptLen uint32
		Val                          []byte
	}
	for _, c := range []struct {
		name string
		set  func() error
		want cmd
	}{
		{"TOS", func() error { return id.SetTOS(0x48) }, cmd{setOptionSize, id.handle, 0, 0, 1, []byte{0x48}}},
		{"reuse address", func() error { return id.SetReuseAddr(true) }, cmd{setOptionSize, id.handle, 0, 1, 4, []byte{1, 0, 0, 0}}},
		{"IPv6 only", func() error { return id.SetAFOnly(false) }, cmd{setOptionSize, id.handle, 0, 2, 4, []byte{0, 0, 0, 0}}},
		{"ACK timeout", func() error { return id.SetAckTimeout(14) }, cmd{setOptionSize, id.handle, 0, 3, 1, []byte{14}}},
	} {
		if err := c.set(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := k.lastCmd(t, cmdSetOption)
		g := cmd{uint32(len(got.in)), le.Uint32(got.in[8:]), le.Uint32(got.in[12:]), le.Uint32(got.in[16:]), le.Uint32(got.in[20:]), got.buf}
		if diff := cmp.Diff(c.want, g); diff != "" {
			t.Errorf("%s: unexpected SET_OPTION (-want +got):\n%s", c.name, diff)
		}
	}
	if err := id.SetAckTimeout(32); err == nil || !strings.Contains(err.Error(), "set the ACK timeout") {
		t.Errorf("ACK timeout exponent 32: %v, want an error that names the option", err)
	}
	k.fail[cmdSetOption] = syscall.ENOSYS
	var e *Error
	if err := id.SetTOS(1); !errors.As(err, &e) || !errors.Is(err, syscall.ENOSYS) || e.Op != "set the type of service" {
		t.Errorf("refused SET_OPTION: %v, want an *Error of the option wrapping ENOSYS", err)
	}
}

// TestMigrate: MIGRATE_ID goes to the new channel's device naming the
// old one's; the ID's events, queued and still to come, arrive on the
// new channel, and the old one no longer knows the ID.
func TestMigrate(t *testing.T) {
	from, kf := fakeChannel(t)
	to, kt := fakeChannel(t)
	id, err := from.CreateID(PortSpaceTCP)
	if err != nil {
		t.Fatal(err)
	}
	other, err := from.CreateID(PortSpaceTCP)
	if err != nil {
		t.Fatal(err)
	}
	// One event of the ID fetched on the old channel while another ID
	// waited: it must move with the ID.
	kf.push(id.uid, id.handle, EventEstablished, 0, nil)
	kf.push(other.uid, other.handle, EventEstablished, 0, nil)
	if _, err := other.Await(testCtx(t), "wait"); err != nil {
		t.Fatal(err)
	}
	if err := id.Migrate(to); err != nil {
		t.Fatal(err)
	}
	in := kt.last(t, cmdMigrateID)
	got := []uint32{uint32(len(in)), le.Uint32(in[8:]), le.Uint32(in[12:])}
	if diff := cmp.Diff([]uint32{migrateIDSize, id.handle, uint32(kf.fd)}, got); diff != "" {
		t.Errorf("unexpected MIGRATE_ID (-want +got):\n%s", diff)
	}
	kt.push(id.uid, id.handle, EventDisconnected, 0, nil)
	var types []EventType
	for range 2 {
		ev, err := to.GetEvent(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if ev.ID != id {
			t.Fatalf("event %s of ID %v on the new channel, want the migrated ID's", ev.Type, ev.ID)
		}
		types = append(types, ev.Type)
	}
	if diff := cmp.Diff([]EventType{EventEstablished, EventDisconnected}, types); diff != "" {
		t.Errorf("unexpected events on the new channel (-want +got):\n%s", diff)
	}
	// The old channel drops an event the kernel queued for the ID before
	// it moved, as it does one of a destroyed ID.
	kf.push(id.uid, id.handle, EventDisconnected, 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if ev, err := from.GetEvent(ctx); err == nil {
		t.Errorf("the old channel returned %s of ID %v after the migration", ev.Type, ev.ID)
	}
	if err := id.Close(); err != nil {
		t.Fatal(err)
	}
	if in := kt.last(t, cmdDestroyID); le.Uint32(in[8:]) != id.handle {
		t.Errorf("the migrated ID was destroyed on the new channel as handle %d, want %d", le.Uint32(in[8:]), id.handle)
	}
}

// TestIBAddr: an AF_IB address goes to BIND, RESOLVE_ADDR and JOIN_MCAST
// as struct sockaddr_ib, its service ID and mask as librdmacm's
// ucma_set_sid makes them.
func TestIBAddr(t *testing.T) {
	gid := netip.MustParseAddr("fe80::2:c903:0:1492")
	a := IBServiceAddr(gid, PortSpaceTCP, 7471)
	want := []byte{27, 0, 0xff, 0xff, 0, 0, 0, 0,
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x02, 0xc9, 0x03, 0, 0, 0x14, 0x92,
		0, 0, 0, 0, 0x01, 0x06, 0x1d, 0x2f,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0, 0, 0, 0, 0, 0, 0, 0}
	ch, k := fakeChannel(t)
	id, err := ch.CreateID(PortSpaceTCP)
	if err != nil {
		t.Fatal(err)
	}
	if err := id.BindIB(a); err != nil {
		t.Fatal(err)
	}
	in := k.last(t, cmdBind)
	if diff := cmp.Diff(want, in[8:8+sockaddrIBSize]); diff != "" || le.Uint16(in[4:]) != sockaddrIBSize {
		t.Errorf("unexpected BIND sockaddr_ib of %d bytes (-want +got):\n%s", le.Uint16(in[4:]), diff)
	}
	k.push(id.uid, id.handle, EventAddrResolved, 0, nil)
	src := IBServiceAddr(netip.MustParseAddr("fe80::2:c903:0:1491"), PortSpaceTCP, 0)
	if err := id.ResolveAddrIB(testCtx(t), src, a, time.Second); err != nil {
		t.Fatal(err)
	}
	in = k.last(t, cmdResolveAddr)
	got := []any{le.Uint16(in[8:]), le.Uint16(in[10:]), in[16+sockaddrStorage : 16+sockaddrStorage+sockaddrIBSize],
		binary.BigEndian.Uint64(in[16+24:]), binary.BigEndian.Uint64(in[16+32:])}
	wantR := []any{uint16(sockaddrIBSize), uint16(sockaddrIBSize), want, uint64(0x0106_0000), ibServicePSMask}
	if diff := cmp.Diff(wantR, got); diff != "" {
		t.Errorf("unexpected RESOLVE_ADDR (-want +got):\n%s", diff)
	}
	if got := a.AddrPort().String(); got != "[fe80::2:c903:0:1492]:7471" {
		t.Errorf("AddrPort %s", got)
	}
	ud, _ := ch.CreateID(PortSpaceUDP)
	mgid := IBAddr{GID: netip.MustParseAddr("ff12:401b:ffff::1")}
	go func() {
		// The join's uid is the next one handed out.
		k.push(ud.uid+1, 502, EventMulticastJoin, 0, make([]byte, udParamSize))
	}()
	if _, _, err := ud.JoinMulticastIB(testCtx(t), mgid, false); err != nil {
		t.Fatal(err)
	}
	in = k.last(t, cmdJoinMcast)
	if le.Uint16(in[20:]) != sockaddrIBSize || le.Uint16(in[24:]) != afIB || netip.AddrFrom16([16]byte(in[24+8:24+24])) != mgid.GID {
		t.Errorf("unexpected JOIN_MCAST %x", in[20:24+24])
	}
}
