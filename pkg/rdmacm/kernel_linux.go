package rdmacm

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// devKernel is an open DevicePath in non-blocking mode (GET_EVENT returns
// EAGAIN when no event is queued; every other command completes in the
// write), with an eventfd that ends a wait when its context ends.
type devKernel struct {
	fd, efd int

	mu sync.Mutex
	// buf holds the header and command, resp the reply: heap memory the
	// kernel writes to by address while the write runs.
	buf  []byte
	resp []byte
}

func openKernel(path string) (kernel, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ENOENT) {
		// The device is there once the module is: rdma-core's udev
		// rules and systemd units load it at boot, a bare system not.
		return nil, &Error{Op: "open " + path, Err: fmt.Errorf("%w (the rdma_ucm kernel module is not loaded: modprobe rdma_ucm)", err)}
	}
	if err != nil {
		return nil, &Error{Op: "open " + path, Err: err}
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(fd)
		return nil, &Error{Op: "eventfd", Err: err}
	}
	return &devKernel{fd: fd, efd: efd, buf: make([]byte, 1024), resp: make([]byte, 1024)}, nil
}

func (k *devKernel) command(op uint32, in []byte, respAt int, out []byte) error {
	if hdrSize+len(in) > len(k.buf) || len(out) > len(k.resp) {
		return fmt.Errorf("command %d of %d bytes with a %d-byte reply: %w", op, len(in), len(out), syscall.EINVAL)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.buf[:hdrSize+len(in)]
	le.PutUint32(b[0:], op)
	le.PutUint16(b[4:], uint16(len(in)))
	le.PutUint16(b[6:], uint16(len(out)))
	copy(b[hdrSize:], in)
	if out != nil {
		copy(k.resp[:len(out)], out)
		le.PutUint64(b[hdrSize+respAt:], uint64(uintptr(unsafe.Pointer(&k.resp[0]))))
	}
	for {
		_, err := unix.Write(k.fd, b)
		runtime.KeepAlive(k.resp)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	copy(out, k.resp)
	return nil
}

func (k *devKernel) wait(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		one := [8]byte{1}
		unix.Write(k.efd, one[:])
	})
	defer stop()
	for {
		fds := []unix.PollFd{{Fd: int32(k.fd), Events: unix.POLLIN}, {Fd: int32(k.efd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return &Error{Op: "poll " + DevicePath, Err: err}
		}
		if fds[1].Revents&unix.POLLIN != 0 {
			var v [8]byte
			unix.Read(k.efd, v[:])
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			return nil
		}
		if fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
			return &Error{Op: "poll " + DevicePath, Err: syscall.EIO}
		}
	}
}

func (k *devKernel) file() int { return k.fd }

func (k *devKernel) close() error {
	unix.Close(k.efd)
	return unix.Close(k.fd)
}
