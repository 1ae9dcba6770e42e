package verbs

import (
	"context"
	"fmt"
)

// EventType is an async event's type (enum ibv_event_type).
type EventType int

// Async event types.
const (
	EventCQErr EventType = iota
	EventQPFatal
	EventQPReqErr
	EventQPAccessErr
	EventCommEst
	EventSQDrained
	EventPathMig
	EventPathMigErr
	EventDeviceFatal
	EventPortActive
	EventPortErr
	EventLIDChange
	EventPKeyChange
	EventSMChange
	EventSRQErr
	EventSRQLimitReached
	EventQPLastWQEReached
	EventClientReregister
	EventGIDChange
	EventWQFatal
)

var eventNames = []string{"IBV_EVENT_CQ_ERR", "IBV_EVENT_QP_FATAL", "IBV_EVENT_QP_REQ_ERR", "IBV_EVENT_QP_ACCESS_ERR",
	"IBV_EVENT_COMM_EST", "IBV_EVENT_SQ_DRAINED", "IBV_EVENT_PATH_MIG", "IBV_EVENT_PATH_MIG_ERR", "IBV_EVENT_DEVICE_FATAL",
	"IBV_EVENT_PORT_ACTIVE", "IBV_EVENT_PORT_ERR", "IBV_EVENT_LID_CHANGE", "IBV_EVENT_PKEY_CHANGE", "IBV_EVENT_SM_CHANGE",
	"IBV_EVENT_SRQ_ERR", "IBV_EVENT_SRQ_LIMIT_REACHED", "IBV_EVENT_QP_LAST_WQE_REACHED", "IBV_EVENT_CLIENT_REREGISTER",
	"IBV_EVENT_GID_CHANGE", "IBV_EVENT_WQ_FATAL"}

// String is the enum's name in verbs.h ("IBV_EVENT_PORT_ERR").
func (t EventType) String() string {
	if t >= 0 && int(t) < len(eventNames) {
		return eventNames[t]
	}
	return fmt.Sprintf("event type %d", int(t))
}

// PortEvent reports whether the event is about a port or the device
// (its Port is meaningful), not about a QP, CQ, SRQ or WQ.
func (t EventType) PortEvent() bool {
	switch t {
	case EventDeviceFatal, EventPortActive, EventPortErr, EventLIDChange, EventPKeyChange,
		EventSMChange, EventClientReregister, EventGIDChange:
		return true
	}
	return false
}

// AsyncEvent is one event of a device (struct ibv_async_event, already
// acknowledged): its type and the port number of its element.
type AsyncEvent struct {
	Type EventType
	Port int
}

// AsyncFD is the file descriptor libibverbs reads the device's async
// events from.
func (c *Context) AsyncFD() int {
	c.use("AsyncFD")
	return drv.asyncFD(c.h)
}

// NextAsyncEvent waits for the device's next async event and returns it
// acknowledged. It returns the context's error when ctx ends first.
func (c *Context) NextAsyncEvent(ctx context.Context) (AsyncEvent, error) {
	c.use("NextAsyncEvent")
	for {
		// Wait in slices so that the end of ctx is seen.
		ok, err := drv.waitAsync(c.h, 100)
		if err != nil {
			return AsyncEvent{}, verbError("poll", c.name+" async event FD", err)
		}
		if ok {
			e, err := drv.getAsyncEvent(c.h)
			if err != nil {
				return AsyncEvent{}, verbError("ibv_get_async_event", c.name, err)
			}
			return e, nil
		}
		if err := ctx.Err(); err != nil {
			return AsyncEvent{}, err
		}
	}
}
