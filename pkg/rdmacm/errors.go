package rdmacm

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"syscall"
)

var (
	errShort     = errors.New("short reply")
	errMalformed = errors.New("malformed reply")
	// ErrClosed is wrapped by what a closed channel or ID returns.
	ErrClosed = errors.New("closed")
	// ErrNoXRC is wrapped by CreateQP's error on an XRC_SEND or XRC_RECV
	// ID whose device has no XRC (verbs.Attr.XRC), beside the verbs
	// error (EOPNOTSUPP on Soft-RoCE and Soft-iWARP).
	ErrNoXRC = errors.New("the device has no XRC domains")
)

// Error is a failed CM operation: the command the kernel refused (Err is
// then its errno), or an event that ended the operation with a failure
// (Event is then set and Err is the status as an errno where it is one).
type Error struct {
	// Op is what was done: "bind", "resolve address", "resolve route",
	// "listen", "connect", "accept", ...
	Op string
	// Addr is the address the operation was about (the peer's, or the
	// local one of a bind or listen); invalid when it had none.
	Addr netip.AddrPort
	// Event is the error event that ended the operation, or nil.
	Event *Event
	// Err is the cause: an errno (syscall.Errno) or another error.
	Err error
}

// Error says what was done, to which address, and what happened.
func (e *Error) Error() string {
	s := "rdma_cm: " + e.Op
	if e.Addr.IsValid() {
		s += " " + e.Addr.String()
	}
	if e.Event != nil && e.Event.Status != 0 {
		return fmt.Sprintf("%s: %s (%s)", s, e.Event, e.Event.StatusText())
	}
	if e.Event != nil {
		return fmt.Sprintf("%s: %s", s, e.Event)
	}
	return fmt.Sprintf("%s: %v", s, e.Err)
}

// Unwrap is the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is match a device that is missing or not accessible
// with os.ErrNotExist and os.ErrPermission.
func (e *Error) Is(target error) bool {
	var errno syscall.Errno
	if !errors.As(e.Err, &errno) {
		return false
	}
	switch target {
	case os.ErrNotExist:
		return errno == syscall.ENOENT || errno == syscall.ENODEV
	case os.ErrPermission:
		return errno == syscall.EPERM || errno == syscall.EACCES
	}
	return false
}

// eventError turns an error event into an *Error of op on addr.
func eventError(op string, addr netip.AddrPort, ev *Event) *Error {
	e := &Error{Op: op, Addr: addr, Event: ev}
	switch {
	case ev.Status < 0:
		e.Err = syscall.Errno(-ev.Status)
	case ev.Type == EventRejected, ev.Type == EventUnreachable:
		e.Err = syscall.ECONNREFUSED // positive: the IB CM's reason or SIDR status
	case ev.Status > 0:
		e.Err = syscall.Errno(ev.Status)
	default:
		e.Err = fmt.Errorf("%s", ev.Type)
	}
	return e
}
