package umad

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Sys is the set of system calls the transport makes. UnixSys makes them for
// real; tests substitute a fake. Every method returns a syscall.Errno as its
// error when the call fails.
type Sys interface {
	// Open opens path with the open(2) flags and returns the descriptor.
	Open(path string, flags int) (int, error)
	// Close closes fd.
	Close(fd int) error
	// Read reads from fd into p once.
	Read(fd int, p []byte) (int, error)
	// Write writes p to fd once.
	Write(fd int, p []byte) (int, error)
	// Ioctl issues request req on fd with arg, which points at the
	// request's argument or is nil.
	Ioctl(fd int, req uint, arg unsafe.Pointer) error
	// Poll waits up to timeout milliseconds (negative: without limit) for
	// events on fds and returns how many have revents set.
	Poll(fds []unix.PollFd, timeout int) (int, error)
	// Eventfd creates an eventfd(2) with the given initial value and flags.
	Eventfd(initval uint, flags int) (int, error)
}

// UnixSys makes the system calls of Sys through golang.org/x/sys/unix.
type UnixSys struct{}

var _ Sys = UnixSys{}

// Open calls open(2).
func (UnixSys) Open(path string, flags int) (int, error) { return unix.Open(path, flags, 0) }

// Close calls close(2).
func (UnixSys) Close(fd int) error { return unix.Close(fd) }

// Read calls read(2).
func (UnixSys) Read(fd int, p []byte) (int, error) { return unix.Read(fd, p) }

// Write calls write(2).
func (UnixSys) Write(fd int, p []byte) (int, error) { return unix.Write(fd, p) }

// Ioctl calls ioctl(2) with arg as its pointer argument.
func (UnixSys) Ioctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if errno != 0 {
		return errno
	}
	return nil
}

// Poll calls poll(2).
func (UnixSys) Poll(fds []unix.PollFd, timeout int) (int, error) { return unix.Poll(fds, timeout) }

// Eventfd calls eventfd2(2).
func (UnixSys) Eventfd(initval uint, flags int) (int, error) { return unix.Eventfd(initval, flags) }
