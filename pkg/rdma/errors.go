package rdma

import (
	"errors"
	"fmt"
	"os"
	"strings"
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

// DeviceError is the error of one entry of a device listing: a device
// under class/infiniband, or a uverbsN or umadN entry.
type DeviceError struct {
	Name string // the entry: "mlx5_0", "uverbs1", "umad2"
	Err  error  // why it was left out, usually a *SysError naming the file
}

// Error returns the message of Err, which names the file and so the entry.
func (e *DeviceError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *DeviceError) Unwrap() error { return e.Err }

// SkippedError reports entries a listing left out because a file that
// says what they are did not read or parse. The listing of the other
// entries is returned with it: the C libraries skip such entries without a
// word, and a tool that shows the listing can still show it, then say what
// it left out.
type SkippedError struct {
	Skipped []DeviceError // in listing order; never empty
}

// Error returns the messages of the skipped entries, one per line.
func (e *SkippedError) Error() string {
	msgs := make([]string, len(e.Skipped))
	for i := range e.Skipped {
		msgs[i] = e.Skipped[i].Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns the error of each skipped entry, so that errors.Is and
// errors.As look at every one and a caller can print one line for each.
func (e *SkippedError) Unwrap() []error {
	errs := make([]error, len(e.Skipped))
	for i := range e.Skipped {
		errs[i] = &e.Skipped[i]
	}
	return errs
}

// Lookup returns the error of the entry called name, or nil when that
// entry was not skipped.
func (e *SkippedError) Lookup(name string) error {
	for i := range e.Skipped {
		if e.Skipped[i].Name == name {
			return &e.Skipped[i]
		}
	}
	return nil
}
