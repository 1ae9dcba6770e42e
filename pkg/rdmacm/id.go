package rdmacm

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// ID is a CM ID (struct rdma_cm_id): one end of a connection, a
// listener, or a UD endpoint. Its methods that wait for the kernel's
// answer (address and route resolution, connect, accept) fetch the
// channel's events until the ID's own arrives; events of other IDs of
// the channel wait for their callers. Close it when done: until then
// the kernel keeps it (`rdma resource show cm_id` lists it).
type ID struct {
	ch       *EventChannel
	handle   uint32
	uid      uint64
	ps       PortSpace
	qpType   verbs.QPType
	listener *ID
	closed   bool

	// addr is what Query last returned.
	addr Addr
	// dev is the verbs device the ID is bound to, once looked up.
	dev *verbs.Device
	qp  *verbs.QP
}

// Addr is where an ID is: its device and port and both ends' addresses
// (RDMA_USER_CM_QUERY_ADDR).
type Addr struct {
	// NodeGUID and Port are the RDMA device and port the ID is bound to;
	// zero before it is bound to one.
	NodeGUID uint64
	Port     int
	PKey     uint16
	Local    netip.AddrPort
	Remote   netip.AddrPort
}

// String names the ID in messages: its addresses and port space.
func (id *ID) String() string {
	return fmt.Sprintf("%s ID %d (%s -> %s)", id.ps, id.handle, id.addr.Local, id.addr.Remote)
}

// PortSpace is the ID's port space.
func (id *ID) PortSpace() PortSpace { return id.ps }

// QPType is the type of QP the ID connects.
func (id *ID) QPType() verbs.QPType { return id.qpType }

// Listener is the listening ID a connect request came to, or nil.
func (id *ID) Listener() *ID { return id.listener }

// QP is the ID's QP (CreateQP), or nil.
func (id *ID) QP() *verbs.QP { return id.qp }

// Addr is what the last Query returned (resolution, bind, listen and
// connect requests query it).
func (id *ID) Addr() Addr { return id.addr }

// command runs one command of the ID.
func (id *ID) command(op string, addr netip.AddrPort, cmd uint32, in []byte, respAt int, out []byte) error {
	id.ch.mu.Lock()
	closed := id.closed || id.ch.closed
	id.ch.mu.Unlock()
	if closed {
		return &Error{Op: op, Addr: addr, Err: ErrClosed}
	}
	if err := id.ch.k.command(cmd, in, respAt, out); err != nil {
		return &Error{Op: op, Addr: addr, Err: err}
	}
	return nil
}

// Await waits until ctx ends for the ID's next event (a listener's: the
// next connect request). An error event comes back with an *Error that
// names op.
func (id *ID) Await(ctx context.Context, op string) (*Event, error) {
	ev, err := id.ch.await(ctx, id)
	if err != nil {
		return nil, &Error{Op: op, Addr: id.addr.Remote, Err: err}
	}
	if ev.Type.IsError() {
		return ev, eventError(op, id.addr.Remote, ev)
	}
	return ev, nil
}

// expect waits for the ID's next event and checks that it is want.
func (id *ID) expect(ctx context.Context, op string, addr netip.AddrPort, want EventType) (*Event, error) {
	ev, err := id.ch.await(ctx, id)
	if err != nil {
		return nil, &Error{Op: op, Addr: addr, Err: err}
	}
	if ev.Type != want {
		e := eventError(op, addr, ev)
		if !ev.Type.IsError() {
			e.Err = fmt.Errorf("%s while waiting for %s", ev.Type, want)
		}
		return ev, e
	}
	return ev, nil
}

// Bind binds the ID to a local address and port (port 0: the kernel
// picks one), and with it to the RDMA device of that address, if any (a
// wildcard address binds none).
func (id *ID) Bind(a netip.AddrPort) error {
	return id.bind(a, func(b []byte) int { return putSockaddr(b, a) })
}

// bind binds the ID to the sockaddr put writes (a names it in errors).
func (id *ID) bind(a netip.AddrPort, put func([]byte) int) error {
	in := make([]byte, bindSize)
	le.PutUint32(in[0:], id.handle)
	n := put(in[8:])
	if n == 0 {
		return &Error{Op: "bind", Err: fmt.Errorf("no address")}
	}
	le.PutUint16(in[4:], uint16(n))
	if err := id.command("bind", a, cmdBind, in, 0, nil); err != nil {
		return err
	}
	_, err := id.Query()
	return err
}

// ResolveAddr resolves dst (and src, when valid) to the local RDMA
// device and port that reach it, waiting until the kernel says or ctx
// ends; timeout bounds the kernel's resolution (ARP, neighbour
// discovery).
func (id *ID) ResolveAddr(ctx context.Context, src, dst netip.AddrPort, timeout time.Duration) error {
	return id.resolveAddr(ctx, dst, func(b []byte) int { return putSockaddr(b, src) },
		func(b []byte) int { return putSockaddr(b, dst) }, timeout)
}

// resolveAddr resolves the sockaddr putDst writes, from the one putSrc
// writes (none: 0 bytes); dst names it in errors.
func (id *ID) resolveAddr(ctx context.Context, dst netip.AddrPort, putSrc, putDst func([]byte) int, timeout time.Duration) error {
	in := make([]byte, resolveAddrSize)
	le.PutUint32(in[0:], id.handle)
	le.PutUint32(in[4:], uint32(timeout.Milliseconds()))
	n := putSrc(in[16:])
	le.PutUint16(in[8:], uint16(n))
	m := putDst(in[16+sockaddrStorage:])
	if m == 0 {
		return &Error{Op: "resolve address", Err: fmt.Errorf("no destination")}
	}
	le.PutUint16(in[10:], uint16(m))
	if err := id.command("resolve address", dst, cmdResolveAddr, in, 0, nil); err != nil {
		return err
	}
	id.addr.Remote = dst
	if _, err := id.expect(ctx, "resolve address", dst, EventAddrResolved); err != nil {
		return err
	}
	_, err := id.Query()
	return err
}

// ResolveRoute resolves the path to the resolved address (on InfiniBand
// a path record from the SA; on RoCE and iWARP the local route),
// waiting until the kernel says or ctx ends.
func (id *ID) ResolveRoute(ctx context.Context, timeout time.Duration) error {
	in := make([]byte, resolveRouteSize)
	le.PutUint32(in[0:], id.handle)
	le.PutUint32(in[4:], uint32(timeout.Milliseconds()))
	dst := id.addr.Remote
	if err := id.command("resolve route", dst, cmdResolveRoute, in, 0, nil); err != nil {
		return err
	}
	_, err := id.expect(ctx, "resolve route", dst, EventRouteResolved)
	return err
}

// Listen makes a bound ID listen for connect requests (Await returns
// them), with up to backlog of them pending.
func (id *ID) Listen(backlog int) error {
	in := make([]byte, listenSize)
	le.PutUint32(in[0:], id.handle)
	le.PutUint32(in[4:], uint32(backlog))
	return id.command("listen", id.addr.Local, cmdListen, in, 0, nil)
}

// Query reads where the ID is bound and connected to.
func (id *ID) Query() (Addr, error) {
	in := make([]byte, querySize)
	le.PutUint32(in[8:], id.handle)
	le.PutUint32(in[12:], 0) // RDMA_USER_CM_QUERY_ADDR
	out := make([]byte, queryAddrResp)
	if err := id.command("query address", id.addr.Remote, cmdQuery, in, 0, out); err != nil {
		return Addr{}, err
	}
	a, err := decodeAddr(out)
	if err != nil {
		return Addr{}, &Error{Op: "query address", Addr: id.addr.Remote, Err: err}
	}
	id.addr = a
	return a, nil
}

func decodeAddr(b []byte) (Addr, error) {
	a := Addr{NodeGUID: binary.BigEndian.Uint64(b[0:]), Port: int(b[8]), PKey: le.Uint16(b[10:])}
	src, err := sockaddr(b[16 : 16+sockaddrStorage])
	if err != nil {
		return Addr{}, err
	}
	dst, err := sockaddr(b[16+sockaddrStorage : 16+2*sockaddrStorage])
	if err != nil {
		return Addr{}, err
	}
	a.Local, a.Remote = src, dst
	return a, nil
}

// Reject refuses a connect request, sending privateData with the
// rejection (the peer's RDMA_CM_EVENT_REJECTED carries it).
func (id *ID) Reject(privateData []byte) error {
	if len(privateData) > maxPrivateData {
		return &Error{Op: "reject", Addr: id.addr.Remote, Err: fmt.Errorf("%d bytes of private data, at most %d", len(privateData), maxPrivateData)}
	}
	in := make([]byte, rejectSize)
	le.PutUint32(in[0:], id.handle)
	in[4] = uint8(len(privateData))
	copy(in[8:], privateData)
	return id.command("reject", id.addr.Remote, cmdReject, in, 0, nil)
}

// Close destroys the ID (its QP, if CreateQP made one, goes first).
// Closing it twice does nothing.
func (id *ID) Close() error {
	id.ch.mu.Lock()
	if id.closed || id.ch.closed {
		id.closed = true
		id.ch.mu.Unlock()
		return nil
	}
	id.ch.mu.Unlock()
	var qpErr error
	if id.qp != nil {
		qpErr = id.qp.Close()
		id.qp = nil
	}
	in := make([]byte, destroyIDSize)
	le.PutUint32(in[8:], id.handle)
	out := make([]byte, destroyIDResp)
	err := id.ch.k.command(cmdDestroyID, in, 0, out)
	id.ch.mu.Lock()
	id.closed = true
	delete(id.ch.ids, id.handle)
	kept := id.ch.backlog[:0]
	for _, ev := range id.ch.backlog {
		if ev.ID != id {
			kept = append(kept, ev)
		}
	}
	id.ch.backlog = kept
	id.ch.mu.Unlock()
	if err != nil {
		return &Error{Op: "destroy ID", Addr: id.addr.Remote, Err: err}
	}
	return qpErr
}
