package rdmacm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// EventChannel is an open connection manager (struct
// rdma_event_channel): the IDs made on it report their events through
// it. One goroutine at a time waits for its events.
type EventChannel struct {
	k kernel

	mu     sync.Mutex
	closed bool
	ids    map[uint32]*ID // by the kernel's handle
	mcs    map[uint64]*Multicast
	// backlog holds the events fetched while waiting for another ID's;
	// fetching says a goroutine is fetching from the kernel, and changed
	// is closed when it fetched or stopped.
	backlog  []*Event
	fetching bool
	changed  chan struct{}
}

// NewEventChannel opens the kernel's connection manager (DevicePath). A
// missing device (rdma_ucm not loaded) matches os.ErrNotExist.
func NewEventChannel() (*EventChannel, error) {
	k, err := openKernel(DevicePath)
	if err != nil {
		return nil, err
	}
	return newChannel(k), nil
}

// lastUID numbers the IDs and multicast groups of the process (the uid
// the kernel's events carry): one sequence for all channels, so that an
// ID that migrates keeps a number no other ID of its new channel has.
var lastUID atomic.Uint64

func newUID() uint64 { return lastUID.Add(1) }

func newChannel(k kernel) *EventChannel {
	return &EventChannel{k: k, ids: map[uint32]*ID{}, mcs: map[uint64]*Multicast{}}
}

// Close closes the channel; the kernel destroys the IDs still open on
// it, so none outlives the channel.
func (ch *EventChannel) Close() error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return nil
	}
	ch.closed = true
	for _, id := range ch.ids {
		id.closed = true
	}
	return ch.k.close()
}

// PortSpace is the CM's port space of an ID (enum rdma_port_space): it
// decides the service ID and the QP type.
type PortSpace uint16

// Port spaces.
const (
	PortSpaceIPoIB PortSpace = 0x0002
	PortSpaceTCP   PortSpace = 0x0106 // reliable connections, as TCP ports
	PortSpaceUDP   PortSpace = 0x0111 // unreliable datagrams, as UDP ports
	PortSpaceIB    PortSpace = 0x013f
)

// String names the port space as rdma_cma.h does.
func (ps PortSpace) String() string {
	switch ps {
	case PortSpaceIPoIB:
		return "RDMA_PS_IPOIB"
	case PortSpaceTCP:
		return "RDMA_PS_TCP"
	case PortSpaceUDP:
		return "RDMA_PS_UDP"
	case PortSpaceIB:
		return "RDMA_PS_IB"
	}
	return fmt.Sprintf("port space %#x", uint16(ps))
}

// QPType is the type of QP an ID of the port space connects: UD for the
// UDP and IPoIB spaces, RC otherwise (as librdmacm's rdma_create_id).
func (ps PortSpace) QPType() verbs.QPType {
	if ps == PortSpaceUDP || ps == PortSpaceIPoIB {
		return verbs.QPTypeUD
	}
	return verbs.QPTypeRC
}

// CreateID makes a CM ID in port space ps with the QP type it implies.
func (ch *EventChannel) CreateID(ps PortSpace) (*ID, error) {
	return ch.CreateIDType(ps, ps.QPType())
}

// Takes says whether IDs of the port space connect QPs of type t, as
// the kernel's CM has them: RDMA_PS_TCP RC, RDMA_PS_UDP and
// RDMA_PS_IPOIB UD, RDMA_PS_IB RC, UD and the two ends of XRC (XRC_SEND
// connects to an XRC_RECV listener, as librdmacm's rdma_xclient and
// rdma_xserver do). A port space the package does not name takes any:
// the kernel decides.
func (ps PortSpace) Takes(t verbs.QPType) bool {
	switch ps {
	case PortSpaceTCP:
		return t == verbs.QPTypeRC
	case PortSpaceUDP, PortSpaceIPoIB:
		return t == verbs.QPTypeUD
	case PortSpaceIB:
		return t == verbs.QPTypeRC || t == verbs.QPTypeUD || t == verbs.QPTypeXRCSend || t == verbs.QPTypeXRCRecv
	}
	return true
}

// CreateIDType makes a CM ID in port space ps for QPs of type t; a type
// the port space does not take (Takes) panics. An XRC_SEND ID's QP
// (CreateQP) wants a send CQ only, an XRC_RECV ID's an XRCD and no CQs;
// the XRC_RECV side tells its peer the number of its XRC SRQ itself (in
// the accept's private data, as rdma_xserver does).
func (ch *EventChannel) CreateIDType(ps PortSpace, t verbs.QPType) (*ID, error) {
	if !ps.Takes(t) {
		panic(fmt.Sprintf("rdmacm: CreateIDType: %s takes no %s QPs", ps, t))
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return nil, &Error{Op: "create ID", Err: ErrClosed}
	}
	uid := newUID()
	in := make([]byte, createIDSize)
	le.PutUint64(in[0:], uid)
	le.PutUint16(in[16:], uint16(ps))
	in[18] = uint8(t)
	out := make([]byte, createIDResp)
	if err := ch.k.command(cmdCreateID, in, 8, out); err != nil {
		return nil, &Error{Op: "create ID (" + ps.String() + ")", Err: err}
	}
	id := &ID{ch: ch, handle: le.Uint32(out), uid: uid, ps: ps, qpType: t}
	ch.ids[id.handle] = id
	return id, nil
}

// GetEvent returns the channel's next event, of any ID, waiting for
// one until ctx ends. Error events are events here, not errors; the
// error is the channel's own (closed, ctx ended, a reply that does not
// decode).
func (ch *EventChannel) GetEvent(ctx context.Context) (*Event, error) {
	return ch.await(ctx, nil)
}

// await returns the next event of id (of any ID when id is nil). Several
// goroutines may wait at once, each for its own IDs: one of them at a
// time fetches from the kernel, and the events it fetches for the others
// wait in the backlog, where their goroutines are woken to find them.
func (ch *EventChannel) await(ctx context.Context, id *ID) (*Event, error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	for {
		if ev := ch.take(id); ev != nil {
			return ev, nil
		}
		if !ch.fetching {
			ch.fetching = true
			ch.mu.Unlock()
			ev, err := ch.fetch(ctx)
			ch.mu.Lock()
			ch.fetching = false
			ch.wake()
			if err != nil {
				return nil, err
			}
			if id == nil || ev.ID == id || ev.Listener == id {
				return ev, nil
			}
			ch.backlog = append(ch.backlog, ev)
			continue
		}
		if ch.changed == nil {
			ch.changed = make(chan struct{})
		}
		changed := ch.changed
		ch.mu.Unlock()
		select {
		case <-changed:
			ch.mu.Lock()
		case <-ctx.Done():
			ch.mu.Lock()
			return nil, ctx.Err()
		}
	}
}

// take removes and returns the first event of id (any, for nil) from the
// backlog. ch.mu is held.
func (ch *EventChannel) take(id *ID) *Event {
	for i, ev := range ch.backlog {
		if id == nil || ev.ID == id || ev.Listener == id {
			ch.backlog = append(ch.backlog[:i:i], ch.backlog[i+1:]...)
			return ev
		}
	}
	return nil
}

// wake tells the goroutines waiting for the backlog to change that it
// did, or that nobody fetches any more. ch.mu is held.
func (ch *EventChannel) wake() {
	if ch.changed != nil {
		close(ch.changed)
		ch.changed = nil
	}
}

// fetch gets one event from the kernel, waiting until ctx ends.
func (ch *EventChannel) fetch(ctx context.Context) (*Event, error) {
	out := make([]byte, eventResp)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ch.mu.Lock()
		if ch.closed {
			ch.mu.Unlock()
			return nil, &Error{Op: "get event", Err: ErrClosed}
		}
		err := ch.k.command(cmdGetEvent, make([]byte, getEventSize), 0, out)
		var ev *Event
		if err == nil {
			ev, err = ch.decode(out)
		}
		ch.mu.Unlock()
		if errors.Is(err, syscall.EAGAIN) {
			if err := ch.k.wait(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, &Error{Op: "get event", Err: err}
		}
		if ev != nil {
			return ev, nil
		}
	}
}

// decode turns a struct rdma_ucm_event_resp into an Event, making the
// new ID of a connect request (ch.mu is held). An event of an ID
// already destroyed decodes to nil (the kernel may have queued it before
// the destroy).
func (ch *EventChannel) decode(b []byte) (*Event, error) {
	uid, handle := le.Uint64(b[0:]), le.Uint32(b[8:])
	ev := &Event{Type: EventType(le.Uint32(b[12:])), Status: int32(le.Uint32(b[16:]))}
	param := b[20 : 20+udParamSize]
	switch ev.Type {
	case EventMulticastJoin, EventMulticastError:
		mc := ch.mcs[uid]
		if mc == nil {
			return nil, nil
		}
		ev.Multicast, ev.ID = mc, mc.id
		ev.UD = udParam(param)
		return ev, nil
	case EventConnectRequest:
		var listener *ID
		for _, id := range ch.ids {
			if id.uid == uid {
				listener = id
				break
			}
		}
		if listener == nil {
			return nil, fmt.Errorf("%w: %s for unknown ID uid %d", errMalformed, ev.Type, uid)
		}
		child := &ID{ch: ch, handle: handle, uid: newUID(), ps: listener.ps, qpType: listener.qpType, listener: listener}
		ch.ids[handle] = child
		ev.ID, ev.Listener = child, listener
	default:
		id := ch.ids[handle]
		if id == nil {
			return nil, nil
		}
		ev.ID = id
	}
	if ev.ID.qpType == verbs.QPTypeUD {
		ev.UD = udParam(param)
	} else {
		ev.Conn = connParam(param)
	}
	return ev, nil
}
