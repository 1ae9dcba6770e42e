package rdmacm

import "context"

// DevicePath is the kernel's RDMA connection manager device, which the
// rdma_ucm module provides.
const DevicePath = "/dev/infiniband/rdma_cm"

// kernel is the CM device as the package uses it; the real one is a
// file descriptor of DevicePath, tests put a fake in its place.
type kernel interface {
	// command writes command op with its struct in. When out is not nil,
	// the 8 bytes at in[respAt:] carry the address of a buffer of
	// len(out) bytes that the kernel fills, and out gets what it wrote.
	// The buffer holds out's bytes when the command is written: a
	// command that reads it (SET_OPTION's value) finds them there.
	// A refused command returns its errno (syscall.Errno).
	command(op uint32, in []byte, respAt int, out []byte) error
	// wait blocks until an event is ready to be fetched (a GET_EVENT
	// then does not return EAGAIN) or ctx ends, whose error it returns.
	wait(ctx context.Context) error
	// file is the descriptor of the open device (MIGRATE_ID names the
	// channel an ID leaves by it).
	file() int
	close() error
}
