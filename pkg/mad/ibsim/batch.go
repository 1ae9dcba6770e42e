package ibsim

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// batchFrames is how many frames one read takes at most. ibsim answers
// the requests in flight one after another, and a reader that falls
// behind finds several queued: on the 4,000-host tree an SA discovery
// read 12,000 frames in 5,700 reads, and ibqueryerrors' CPU fell by a
// tenth.
const batchFrames = 32

// batch holds the frames one recvmmsg read, handed out one by one.
type batch struct {
	bufs [batchFrames][requestLen + 1]byte // one byte over, to spot oversize frames
	iov  [batchFrames]unix.Iovec
	hdrs [batchFrames]unix.Mmsghdr
	n    int  // frames read
	next int  // the next frame to hand out
	init bool // the headers point at the buffers
}

// readFrame returns the next frame ibsim sent: one left from the last
// read, or the first of a new one. Where the socket cannot be read
// with recvmmsg, it reads one frame into fallback.
func (c *Client) readFrame(fallback []byte) ([]byte, error) {
	b := &c.batch
	if b.next < b.n {
		i := b.next
		b.next++
		return b.bufs[i][:b.hdrs[i].Len], nil
	}
	if c.raw == nil {
		n, err := c.read(fallback)
		return fallback[:n], err
	}
	if !b.init {
		for i := range b.hdrs {
			b.iov[i].Base = &b.bufs[i][0]
			b.iov[i].SetLen(len(b.bufs[i]))
			b.hdrs[i].Hdr.Iov = &b.iov[i]
			b.hdrs[i].Hdr.Iovlen = 1
		}
		b.init = true
	}
	var n int
	var errno syscall.Errno
	err := c.raw.Read(func(fd uintptr) bool {
		r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.hdrs[0])), batchFrames, unix.MSG_DONTWAIT, 0, 0)
		if e == unix.EAGAIN {
			return false // wait until the socket is readable
		}
		n, errno = int(r), e
		return true
	})
	switch {
	case err != nil:
		return nil, err
	case errno != 0:
		return nil, errno
	}
	b.n, b.next = n, 1
	return b.bufs[0][:b.hdrs[0].Len], nil
}
