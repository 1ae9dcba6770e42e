package rdmacm

import (
	"context"
	"fmt"
	"net/netip"
	"sync"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// devices lists the verbs devices; tests swap it.
var devices = verbs.Devices

// deviceCache keeps the verbs device list of the process: devices do not
// come and go during one tool's run, and listing them opens each one.
var deviceCache struct {
	sync.Mutex
	devs []verbs.Device
}

// Device is the verbs device the ID is bound to (after Bind to a local
// address, ResolveAddr, or on a connect request), found by its node
// GUID. An ID bound to no device, or to one libibverbs does not list, is
// an error.
func (id *ID) Device() (verbs.Device, error) {
	if id.dev != nil {
		return *id.dev, nil
	}
	if id.addr.NodeGUID == 0 {
		if _, err := id.Query(); err != nil {
			return verbs.Device{}, err
		}
		if id.addr.NodeGUID == 0 {
			return verbs.Device{}, &Error{Op: "find the device", Addr: id.addr.Remote, Err: fmt.Errorf("the ID is bound to no RDMA device yet")}
		}
	}
	deviceCache.Lock()
	defer deviceCache.Unlock()
	if deviceCache.devs == nil {
		devs, err := devices()
		if err != nil {
			return verbs.Device{}, &Error{Op: "find the device", Addr: id.addr.Remote, Err: err}
		}
		deviceCache.devs = devs
	}
	for i := range deviceCache.devs {
		if deviceCache.devs[i].NodeGUID == id.addr.NodeGUID {
			d := deviceCache.devs[i]
			id.dev = &d
			return d, nil
		}
	}
	return verbs.Device{}, &Error{Op: "find the device", Addr: id.addr.Remote,
		Err: fmt.Errorf("no verbs device has node GUID %#016x", id.addr.NodeGUID)}
}

// OpenDevice opens the verbs device the ID is bound to: the context its
// PD, CQs and QP come from.
func (id *ID) OpenDevice() (*verbs.Context, error) {
	d, err := id.Device()
	if err != nil {
		return nil, err
	}
	return verbs.Open(d.Name)
}

// iwarp says whether the ID's device is iWARP, where the kernel moves a
// connecting QP to RTS itself.
func (id *ID) iwarp() (bool, error) {
	d, err := id.Device()
	if err != nil {
		return false, err
	}
	return d.Transport == verbs.TransportIWARP, nil
}

// CreateQP makes the ID's QP on pd from cfg (its type is the ID's) and
// moves it to INIT with what the CM says (a UD QP on to RTS, as
// librdmacm's rdma_create_qp does), so that receives can be posted
// before the connection is made. Connect and Accept then move it on, and
// Close destroys it with the ID.
func (id *ID) CreateQP(pd *verbs.PD, cfg verbs.QPConfig) (*verbs.QP, error) {
	if id.qp != nil {
		return nil, &Error{Op: "create QP", Addr: id.addr.Remote, Err: fmt.Errorf("the ID has a QP already")}
	}
	if _, err := id.Device(); err != nil {
		return nil, err
	}
	cfg.Type = id.qpType
	qp, err := pd.CreateQP(cfg)
	if err != nil {
		return nil, &Error{Op: "create QP", Addr: id.addr.Remote, Err: noXRC(*id.dev, id.qpType, err)}
	}
	if err := id.initQP(qp); err != nil {
		qp.Close()
		return nil, err
	}
	id.qp = qp
	return qp, nil
}

// noXRC is err, the failure to make a QP of type t on dev, with
// ErrNoXRC added when t is an XRC type and dev has no XRC.
func noXRC(dev verbs.Device, t verbs.QPType, err error) error {
	if (t != verbs.QPTypeXRCSend && t != verbs.QPTypeXRCRecv) || dev.Attr.XRC() {
		return err
	}
	return fmt.Errorf("%w: %w", ErrNoXRC, err)
}

// initQP moves a new QP to INIT (and a UD one on to RTS).
func (id *ID) initQP(qp *verbs.QP) error {
	a, err := id.InitQPAttr(verbs.QPStateInit)
	if err != nil {
		return err
	}
	if err := qp.Init(a.InitAttr()); err != nil {
		return &Error{Op: "move the QP to INIT", Addr: id.addr.Remote, Err: err}
	}
	if id.qpType != verbs.QPTypeUD {
		return nil
	}
	if err := qp.ReadyToReceive(verbs.RTRAttr{}); err != nil {
		return &Error{Op: "move the QP to RTR", Addr: id.addr.Remote, Err: err}
	}
	if err := qp.ReadyToSend(verbs.RTSAttr{}); err != nil {
		return &Error{Op: "move the QP to RTS", Addr: id.addr.Remote, Err: err}
	}
	return nil
}

// readyQP moves the ID's QP (if it has one) through RTR to RTS with the
// CM's attributes, INIT again first for the access flags the connection
// settled; on iWARP the kernel does it.
func (id *ID) readyQP() error {
	if id.qp == nil || id.qpType == verbs.QPTypeUD {
		return nil
	}
	if iw, err := id.iwarp(); err != nil || iw {
		return err
	}
	steps := []struct {
		state verbs.QPState
		move  func(QPAttr) error
	}{
		{verbs.QPStateInit, func(a QPAttr) error { return id.qp.Reinit(a.InitAttr()) }},
		{verbs.QPStateRTR, func(a QPAttr) error { return id.qp.ReadyToReceive(a.RTRAttr()) }},
		{verbs.QPStateRTS, func(a QPAttr) error { return id.qp.ReadyToSend(a.RTSAttr()) }},
	}
	for _, s := range steps {
		a, err := id.InitQPAttr(s.state)
		if err != nil {
			return err
		}
		if err := s.move(a); err != nil {
			return &Error{Op: "move the QP to " + s.state.String(), Addr: id.addr.Remote, Err: err}
		}
	}
	return nil
}

// established records a connection the kernel made: on iWARP the QP is
// in RTS now.
func (id *ID) established() {
	if id.qp != nil && id.qp.State() < verbs.QPStateRTS {
		id.qp.Moved(verbs.QPStateRTS)
	}
}

// Connect connects a route-resolved ID to its peer with p (the QP
// number is the ID's QP's, when it has one), waiting until the
// connection is established, refused, or ctx ends. On InfiniBand and
// RoCE the QP goes to RTS when the peer's reply comes and the kernel
// then completes the handshake (librdmacm's RDMA_CM_EVENT_CONNECT_RESPONSE
// handling); a UD ID gets the peer's QP number and Q_Key in the event.
func (id *ID) Connect(ctx context.Context, p ConnParam) (*Event, error) {
	dst := id.addr.Remote
	if id.qp != nil {
		p.QPNum = id.qp.Num()
	}
	in := make([]byte, connectSize)
	if err := putConnParam(in[0:], p); err != nil {
		return nil, &Error{Op: "connect", Addr: dst, Err: err}
	}
	le.PutUint32(in[connParamSize:], id.handle)
	if err := id.command("connect", dst, cmdConnect, in, 0, nil); err != nil {
		return nil, err
	}
	ev, err := id.ch.await(ctx, id)
	if err != nil {
		return nil, &Error{Op: "connect", Addr: dst, Err: err}
	}
	switch {
	case ev.Type == EventConnectResponse && id.qp != nil:
		if err := id.readyQP(); err != nil {
			id.qp.SetState(verbs.QPStateErr)
			return ev, err
		}
		if err := id.Establish(); err != nil {
			return ev, err
		}
		ev.Type = EventEstablished
		return ev, nil
	case ev.Type == EventEstablished:
		id.established()
		return ev, nil
	case ev.Type == EventConnectResponse:
		return ev, nil
	}
	e := eventError("connect", dst, ev)
	if !ev.Type.IsError() {
		e.Err = fmt.Errorf("%s while connecting", ev.Type)
	}
	return ev, e
}

// Accept accepts a connect request (the ID of a RDMA_CM_EVENT_CONNECT_REQUEST)
// with p, moving the ID's QP to RTS first (InfiniBand, RoCE), and waits
// until the connection is established or ctx ends. A UD ID's accept
// (SIDR reply) does not wait.
func (id *ID) Accept(ctx context.Context, p ConnParam) error {
	peer := id.addr.Remote
	if id.qp != nil {
		p.QPNum = id.qp.Num()
		if err := id.readyQP(); err != nil {
			id.qp.SetState(verbs.QPStateErr)
			return err
		}
	}
	in := make([]byte, acceptSize)
	le.PutUint64(in[0:], id.uid)
	if err := putConnParam(in[8:], p); err != nil {
		return &Error{Op: "accept", Addr: peer, Err: err}
	}
	le.PutUint32(in[8+connParamSize:], id.handle)
	if err := id.command("accept", peer, cmdAccept, in, 0, nil); err != nil {
		if id.qp != nil {
			id.qp.SetState(verbs.QPStateErr)
		}
		return err
	}
	if id.qpType == verbs.QPTypeUD {
		return nil
	}
	if _, err := id.expect(ctx, "accept", peer, EventEstablished); err != nil {
		return err
	}
	id.established()
	return nil
}

// Disconnect ends the connection: the QP's work requests are flushed
// (InfiniBand, RoCE: the QP goes to ERR) or its sends drained (iWARP:
// SQD), and the kernel tells the peer (DREQ, or the TCP stream closed).
// The peer and this side each see RDMA_CM_EVENT_DISCONNECTED.
func (id *ID) Disconnect() error {
	if id.qp != nil && id.qp.State() != verbs.QPStateErr {
		to := verbs.QPStateErr
		if iw, _ := id.iwarp(); iw {
			to = verbs.QPStateSQD
		}
		if err := id.qp.SetState(to); err != nil {
			return &Error{Op: "disconnect", Addr: id.addr.Remote, Err: err}
		}
	}
	in := make([]byte, disconnectSize)
	le.PutUint32(in[0:], id.handle)
	return id.command("disconnect", id.addr.Remote, cmdDisconnect, in, 0, nil)
}

// Peer is the remote address of a connected or connecting ID.
func (id *ID) Peer() netip.AddrPort { return id.addr.Remote }

// Establish completes a connection whose QP the caller moves itself (an
// ID without CreateQP's QP, whose Connect returned
// RDMA_CM_EVENT_CONNECT_RESPONSE): once the QP is in RTS, the kernel
// sends the peer the ready-to-use message (librdmacm's rdma_establish).
func (id *ID) Establish() error {
	in := make([]byte, acceptSize)
	le.PutUint32(in[8+connParamSize:], id.handle)
	return id.command("establish", id.addr.Remote, cmdAccept, in, 0, nil)
}

// DestroyQP destroys the ID's QP (CreateQP's), keeping the ID, as
// librdmacm's rdma_destroy_qp: after a Disconnect, the ID still waits
// for its RDMA_CM_EVENT_DISCONNECTED. An ID without a QP does nothing.
func (id *ID) DestroyQP() error {
	if id.qp == nil {
		return nil
	}
	qp := id.qp
	id.qp = nil
	if err := qp.Close(); err != nil {
		return &Error{Op: "destroy the QP", Addr: id.addr.Remote, Err: err}
	}
	return nil
}
