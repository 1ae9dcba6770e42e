package ibsim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ibtool/ibtool/pkg/mad"
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
	n, err := mmsg(c.raw.Read, unix.SYS_RECVMMSG, b.hdrs[:], true)
	if err != nil {
		return nil, err
	}
	b.n, b.next = n, 1
	return b.bufs[0][:b.hdrs[0].Len], nil
}

// sendQueue gathers the frames that goroutines send at about the same
// time and sends them with one sendmmsg. A directed-route walk wakes
// many goroutines at once (each answer in a read frees one to ask its
// next question); one system call for all of their frames instead of one
// each is what keeps a walk's CPU per MAD near ibsim's own (docs/bench.md).
type sendQueue struct {
	mu       sync.Mutex
	q, spare [][requestLen]byte // frames queued; the last batch's storage
	flushing bool               // a Send is sending what is queued
	err      error              // why the socket failed; every later Send fails so
	hdrs     []unix.Mmsghdr
	iovs     []unix.Iovec
}

// send queues frame. The first Send to find nobody sending becomes the
// sender: it yields once, so that the goroutines woken with it queue their
// frames too, then sends until the queue is empty. A frame is copied, so
// the caller may reuse it at once. An error of the socket fails the Send
// that met it and every later one; frames queued with it are lost, and
// their requests time out. A sender that gives up waiting for room (its
// timeout, or ctx) drops what is queued too: ibsim is not reading, and
// those requests are resent after their own timeouts.
func (c *Client) send(ctx context.Context, frame *[requestLen]byte, timeout time.Duration) error {
	s := &c.sq
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	s.q = append(s.q, *frame)
	if s.flushing {
		s.mu.Unlock()
		return nil
	}
	s.flushing = true
	s.mu.Unlock()
	runtime.Gosched()
	for {
		s.mu.Lock()
		q := s.q
		if len(q) == 0 {
			s.flushing = false
			s.mu.Unlock()
			return nil
		}
		s.q, s.spare = s.spare[:0], q
		s.mu.Unlock()
		if err := c.sendmmsg(ctx, q, timeout); err != nil {
			s.mu.Lock()
			if !errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil {
				s.err = err
			}
			s.flushing = false
			s.q = s.q[:0]
			s.mu.Unlock()
			return err
		}
	}
}

// sendmmsg sends the frames in q, in order, with as few system calls as
// the socket takes them in. While ibsim's socket has no room (ibsim is not
// reading: stopped, or busy) it waits, at most timeout when that is not
// zero, and until ctx ends.
func (c *Client) sendmmsg(ctx context.Context, q [][requestLen]byte, timeout time.Duration) error {
	s := &c.sq
	if cap(s.hdrs) < len(q) {
		s.hdrs = make([]unix.Mmsghdr, len(q))
		s.iovs = make([]unix.Iovec, len(q))
	}
	hdrs, iovs := s.hdrs[:len(q)], s.iovs[:len(q)]
	for i := range q {
		iovs[i].Base = &q[i][0]
		iovs[i].SetLen(requestLen)
		hdrs[i] = unix.Mmsghdr{}
		hdrs[i].Hdr.Iov = &iovs[i]
		hdrs[i].Hdr.Iovlen = 1
	}
	var disarm func()
	defer func() {
		if disarm != nil {
			disarm()
		}
	}()
	for len(hdrs) > 0 {
		n, err := mmsg(c.raw.Write, unix.SYS_SENDMMSG, hdrs, disarm != nil)
		if err == errWouldBlock {
			// The slow path only: a deadline and a watch on ctx cost
			// more than the send.
			disarm = c.armWrite(ctx, timeout)
			continue
		}
		if err != nil {
			return c.writeError(ctx, err, timeout)
		}
		hdrs = hdrs[n:]
	}
	return nil
}

// armWrite bounds the waits of writes on the data socket by timeout (when
// not zero) and by the end of ctx. The returned func undoes that.
func (c *Client) armWrite(ctx context.Context, timeout time.Duration) (disarm func()) {
	if timeout > 0 {
		c.data.SetWriteDeadline(time.Now().Add(timeout))
	}
	release := wakeOnDone(ctx, c.data.SetWriteDeadline)
	return func() {
		release()
		c.data.SetWriteDeadline(time.Time{})
	}
}

// errWouldBlock is what mmsg returns when asked not to wait and the
// socket has no room.
var errWouldBlock = errors.New("the socket would block")

// writeError explains a failed write to ibsim's data socket: ctx's end,
// the timeout (ibsim read nothing for that long), ibsim gone, or another
// socket error.
func (c *Client) writeError(ctx context.Context, err error, timeout time.Duration) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.stalled.Store(true)
		return fmt.Errorf("ibsim read no frame for %v (is it stopped?): %w", timeout, err)
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOTCONN):
		return &goneError{where: c.cfg.where(), err: err}
	}
	return err
}

// goneError reports that ibsim has gone: its socket refuses frames. It
// matches mad.ErrGone.
type goneError struct {
	where string // c.cfg.where()
	err   error
}

func (e *goneError) Error() string { return e.where + " has gone: " + e.err.Error() }

// Unwrap returns the socket's error.
func (e *goneError) Unwrap() error { return e.err }

// Is matches mad.ErrGone.
func (e *goneError) Is(target error) bool { return target == mad.ErrGone }

// mmsg makes the system call trap, recvmmsg or sendmmsg, on hdrs through
// wait (the socket's RawConn Read or Write), which waits while the socket
// would block, or, when !block, returns errWouldBlock. It returns how many
// messages went.
func mmsg(wait func(func(fd uintptr) bool) error, trap uintptr, hdrs []unix.Mmsghdr, block bool) (int, error) {
	var n int
	var errno syscall.Errno
	err := wait(func(fd uintptr) bool {
		r, _, e := unix.Syscall6(trap, fd, uintptr(unsafe.Pointer(&hdrs[0])), uintptr(len(hdrs)), unix.MSG_DONTWAIT, 0, 0)
		if e == unix.EAGAIN && block {
			return false
		}
		n, errno = int(r), e
		return true
	})
	switch {
	case err != nil:
		return 0, err
	case errno == unix.EAGAIN:
		return 0, errWouldBlock
	case errno != 0:
		return 0, errno
	}
	return n, nil
}
