package rdma

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ParseError reports an identifier or address that does not have the form
// its kind requires.
type ParseError struct {
	Kind   string // what was being parsed: "GUID", "LID", "GID", "DR path", ...
	Input  string // the text as given
	Reason string // what form was expected
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Kind, e.Input, e.Reason)
}

// SysError reports a failed system call or file access together with the
// path it concerned.
type SysError struct {
	Op   string // the call or action: "open", "read", "ioctl REGISTER_AGENT"
	Path string // the file or device
	Err  error  // usually a syscall.Errno
}

func (e *SysError) Error() string {
	msg := fmt.Sprintf("%s %s: %v", e.Op, e.Path, e.Err)
	if errors.Is(e.Err, os.ErrPermission) {
		msg += "; run as root or grant access to " + e.Path
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *SysError) Unwrap() error { return e.Err }

// Is maps EPERM and EACCES to os.ErrPermission and ENODEV and ENOENT to
// os.ErrNotExist, so callers test the meaning rather than the errno.
func (e *SysError) Is(target error) bool {
	var errno syscall.Errno
	if !errors.As(e.Err, &errno) {
		return false
	}
	switch target {
	case os.ErrPermission:
		return errno == syscall.EPERM || errno == syscall.EACCES
	case os.ErrNotExist:
		return errno == syscall.ENODEV || errno == syscall.ENOENT
	}
	return false
}
