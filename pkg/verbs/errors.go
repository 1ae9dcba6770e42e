package verbs

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// VerbError is a libibverbs call that failed at run time: which verb, on
// which object, and the errno it returned. It unwraps to the errno, and
// errors.Is matches os.ErrNotExist for ENODEV and ENOENT and
// os.ErrPermission for EPERM and EACCES.
type VerbError struct {
	Verb   string // the libibverbs function, e.g. "ibv_reg_mr"
	Object string // what it was called on, e.g. "rxe0 PD 1"
	Err    error  // usually a syscall.Errno
}

func (e *VerbError) Error() string { return fmt.Sprintf("%s: %s: %v", e.Object, e.Verb, e.Err) }

// Unwrap returns the errno.
func (e *VerbError) Unwrap() error { return e.Err }

// Is maps the errnos that say "no such thing" and "not allowed" onto the
// os package's sentinels.
func (e *VerbError) Is(target error) bool {
	var errno syscall.Errno
	if !errors.As(e.Err, &errno) {
		return false
	}
	switch target {
	case os.ErrNotExist:
		return errno == syscall.ENODEV || errno == syscall.ENOENT
	case os.ErrPermission:
		return errno == syscall.EPERM || errno == syscall.EACCES
	}
	return false
}

// verbError builds a VerbError; a nil err (a C call that failed without
// setting errno) becomes EIO.
func verbError(verb, object string, err error) error {
	if err == nil {
		err = syscall.EIO
	}
	return &VerbError{Verb: verb, Object: object, Err: err}
}

// ErrDeviceNotFound is wrapped by Open for a device name libibverbs does
// not list; errors.Is also matches it with os.ErrNotExist.
var ErrDeviceNotFound error = deviceNotFound{}

type deviceNotFound struct{}

func (deviceNotFound) Error() string        { return "no such RDMA device" }
func (deviceNotFound) Is(target error) bool { return target == os.ErrNotExist }

// WCStatus is the status of a work completion (enum ibv_wc_status).
type WCStatus uint32

// Work completion statuses.
const (
	WCSuccess WCStatus = iota
	WCLocLenErr
	WCLocQPOpErr
	WCLocEECOpErr
	WCLocProtErr
	WCWRFlushErr
	WCMWBindErr
	WCBadRespErr
	WCLocAccessErr
	WCRemInvReqErr
	WCRemAccessErr
	WCRemOpErr
	WCRetryExcErr
	WCRNRRetryExcErr
	WCLocRDDViolErr
	WCRemInvRDReqErr
	WCRemAbortErr
	WCInvEECNErr
	WCInvEECStateErr
	WCFatalErr
	WCRespTimeoutErr
	WCGeneralErr
	WCTMErr
	WCTMRndvIncomplete
)

// wcStatusText is libibverbs' ibv_wc_status_str.
var wcStatusText = []string{
	"success", "local length error", "local QP operation error", "local EE context operation error",
	"local protection error", "Work Request Flushed Error", "memory management operation error",
	"bad response error", "local access error", "remote invalid request error", "remote access error",
	"remote operation error", "transport retry counter exceeded", "RNR retry counter exceeded",
	"local RDD violation error", "remote invalid RD request", "aborted error", "invalid EE context number",
	"invalid EE context state", "fatal error", "response timeout error", "general error", "TM error",
	"TM rendezvous error",
}

// String is the status as ibv_wc_status_str words it.
func (s WCStatus) String() string {
	if int(s) < len(wcStatusText) {
		return wcStatusText[s]
	}
	return "unknown"
}

// CompletionError is a work request that completed with an error status.
type CompletionError struct {
	Object string // the CQ, e.g. "rxe0 CQ 2"
	WC     WorkCompletion
}

func (e *CompletionError) Error() string {
	return fmt.Sprintf("%s: work request %d (%s) on QP %#x completed with status %s (%d), vendor error %#x",
		e.Object, e.WC.ID, e.WC.Opcode, e.WC.QPNum, e.WC.Status, uint32(e.WC.Status), e.WC.VendorErr)
}
