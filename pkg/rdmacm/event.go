package rdmacm

import (
	"fmt"
	"syscall"
)

// EventType is what a CM event reports (enum rdma_cm_event_type).
type EventType uint32

// The CM's events, numbered as the kernel and librdmacm number them.
const (
	EventAddrResolved    EventType = 0
	EventAddrError       EventType = 1
	EventRouteResolved   EventType = 2
	EventRouteError      EventType = 3
	EventConnectRequest  EventType = 4
	EventConnectResponse EventType = 5
	EventConnectError    EventType = 6
	EventUnreachable     EventType = 7
	EventRejected        EventType = 8
	EventEstablished     EventType = 9
	EventDisconnected    EventType = 10
	EventDeviceRemoval   EventType = 11
	EventMulticastJoin   EventType = 12
	EventMulticastError  EventType = 13
	EventAddrChange      EventType = 14
	EventTimewaitExit    EventType = 15
)

var eventNames = [...]string{
	"RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR", "RDMA_CM_EVENT_ROUTE_RESOLVED",
	"RDMA_CM_EVENT_ROUTE_ERROR", "RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
	"RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE", "RDMA_CM_EVENT_REJECTED",
	"RDMA_CM_EVENT_ESTABLISHED", "RDMA_CM_EVENT_DISCONNECTED", "RDMA_CM_EVENT_DEVICE_REMOVAL",
	"RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR", "RDMA_CM_EVENT_ADDR_CHANGE",
	"RDMA_CM_EVENT_TIMEWAIT_EXIT",
}

// String names the event as librdmacm's rdma_event_str does
// ("RDMA_CM_EVENT_ESTABLISHED"), and "UNKNOWN EVENT" for a number it has
// no name for.
func (t EventType) String() string {
	if int(t) < len(eventNames) {
		return eventNames[t]
	}
	return "UNKNOWN EVENT"
}

// IsError says whether the event ends what the ID was doing with a
// failure: an address, route, connect or multicast error, an unreachable
// peer, a rejection, or the device gone.
func (t EventType) IsError() bool {
	switch t {
	case EventAddrError, EventRouteError, EventConnectError, EventUnreachable, EventRejected,
		EventDeviceRemoval, EventMulticastError:
		return true
	}
	return false
}

// Event is one event of an event channel, decoded.
type Event struct {
	Type EventType
	// ID is the CM ID the event is about; for a connect request, the new
	// ID of the connection (to accept or reject), whose Listener is the
	// listening ID.
	ID *ID
	// Listener is the listening ID of a connect request.
	Listener *ID
	// Multicast is the group of a multicast event.
	Multicast *Multicast
	// Status is the kernel's status: 0, a negative errno, or for
	// RDMA_CM_EVENT_REJECTED on InfiniBand and RoCE the IB CM's reject
	// reason (positive; 28 is "consumer defined": the peer's program
	// rejected).
	Status int32
	// Conn is the peer's connection parameters and private data (connect
	// request, response, established, rejected).
	Conn ConnParam
	// UD is the peer's or group's QP number, Q_Key and address vector
	// (UD IDs' route and connect events, multicast joins).
	UD UDParam
}

// String is the event as rping and ucmatose print one: its name and,
// when not zero, its status.
func (e *Event) String() string {
	if e.Status == 0 {
		return e.Type.String()
	}
	return fmt.Sprintf("%s, error %d", e.Type, e.Status)
}

// StatusText says what the status means: the errno's text for a
// negative status, the IB CM's reject reason for a rejection, the SIDR
// reply's status for a UD ID's unreachable peer.
func (e *Event) StatusText() string {
	switch {
	case e.Status < 0:
		return syscall.Errno(-e.Status).Error()
	case e.Status > 0 && e.Type == EventRejected:
		return RejectReason(e.Status).String()
	case e.Status > 0 && e.Type == EventUnreachable:
		return SIDRStatus(e.Status).String()
	case e.Status > 0:
		return syscall.Errno(e.Status).Error()
	}
	return "success"
}

// RejectReason is an IB CM REJ message's reason (IBA 12.6.7.2, table 112).
type RejectReason int32

var rejectReasons = map[RejectReason]string{
	1: "no QP", 2: "no EEC", 3: "no resources", 4: "timeout", 5: "unsupported request",
	6: "invalid communication ID", 7: "invalid communication instance", 8: "invalid service ID",
	9: "invalid transport type", 10: "stale connection", 11: "RDC does not exist", 12: "invalid GID",
	13: "invalid LID", 14: "invalid SL", 15: "invalid traffic class", 16: "invalid hop limit",
	17: "invalid packet rate", 18: "invalid alternate GID", 19: "invalid alternate LID",
	20: "invalid alternate SL", 21: "invalid alternate traffic class", 22: "invalid alternate hop limit",
	23: "invalid alternate packet rate", 24: "port CM redirect", 25: "port redirect",
	26: "invalid MTU", 27: "insufficient responder resources", 28: "consumer defined (the peer rejected)",
	29: "invalid RNR retry", 30: "duplicate local communication ID", 31: "invalid class version",
	32: "invalid flow label", 33: "invalid alternate flow label", 35: "vendor option not supported",
}

// String is the reason as the IBA names it.
func (r RejectReason) String() string {
	if s, ok := rejectReasons[r]; ok {
		return s
	}
	return fmt.Sprintf("reject reason %d", int32(r))
}

// SIDRStatus is the status of an IB CM SIDR_REP (IBA 12.11.3, table
// 118): a UD ID's RDMA_CM_EVENT_UNREACHABLE carries it when the peer's
// CM answered but did not resolve the service.
type SIDRStatus int32

var sidrStatuses = map[SIDRStatus]string{
	1: "service ID not supported (nobody listens)", 2: "rejected by the peer", 3: "no QP",
	4: "redirect", 5: "unsupported class version",
}

// String is the status as the IBA names it.
func (s SIDRStatus) String() string {
	if t, ok := sidrStatuses[s]; ok {
		return t
	}
	return fmt.Sprintf("SIDR status %d", int32(s))
}
