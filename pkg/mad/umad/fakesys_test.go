package umad

import (
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Descriptors the fake hands out.
const (
	fakeUmadFD  = 7
	fakeEventFD = 8
)

// ioctlCall records one ioctl: the request and its argument's bytes as
// passed in (nil for none).
type ioctlCall struct {
	Req uint
	Arg []byte
}

// fakeRead is one result for a read of the device: a frame, or an error.
type fakeRead struct {
	frame []byte
	err   error
}

// fakeSys is a Sys for tests. It records opens, ioctls, frames written and
// descriptors closed; reads of the device return queued frames (ENOSPC,
// keeping the frame queued, when the buffer is too small, as the kernel
// does) and EAGAIN when none is queued. The eventfd counts as a real one.
type fakeSys struct {
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every change
	opened   []string
	flags    int
	ioctls   []ioctlCall
	writes   [][]byte
	closed   []int
	reads    []fakeRead
	counter  uint64 // the eventfd
	nextID   uint32 // next agent id to hand out
	polls    int
	openErr  error
	pkeyErr  error
	regErr   error // after regOK successful registrations
	regOK    int
	unregErr error
	writeErr error
	pollErr  error
	pollIntr int   // polls that fail with EINTR first
	revents  int16 // when set, the device's revents instead of POLLIN
	short    bool  // writes of the device write one byte less
	efdErr   error
	closeErr error
}

func newFakeSys() *fakeSys { return &fakeSys{changed: make(chan struct{})} }

// notify wakes pollers; the caller holds mu.
func (f *fakeSys) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// queue adds frames for the device to return.
func (f *fakeSys) queue(r ...fakeRead) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, r...)
	f.notify()
}

func (f *fakeSys) Open(path string, flags int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opened = append(f.opened, path)
	f.flags = flags
	if f.openErr != nil {
		return -1, f.openErr
	}
	return fakeUmadFD, nil
}

func (f *fakeSys) Close(fd int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = append(f.closed, fd)
	return f.closeErr
}

func (f *fakeSys) Read(fd int, p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fd == fakeEventFD {
		if f.counter == 0 {
			return 0, unix.EAGAIN
		}
		hostOrder.PutUint64(p, f.counter)
		f.counter = 0
		return 8, nil
	}
	if len(f.reads) == 0 {
		return 0, unix.EAGAIN
	}
	r := f.reads[0]
	if r.err != nil {
		f.reads = f.reads[1:]
		return 0, r.err
	}
	if len(p) < len(r.frame) {
		copy(p, r.frame[:HeaderLen])
		return 0, unix.ENOSPC
	}
	f.reads = f.reads[1:]
	return copy(p, r.frame), nil
}

func (f *fakeSys) Write(fd int, p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fd == fakeEventFD {
		f.counter += hostOrder.Uint64(p)
		f.notify()
		return 8, nil
	}
	if f.writeErr != nil {
		return 0, f.writeErr
	}
	f.writes = append(f.writes, append([]byte(nil), p...))
	if f.short {
		return len(p) - 1, nil
	}
	return len(p), nil
}

// ioctlArgLen is the size of the argument of the requests the transport
// makes.
func ioctlArgLen(req uint) int {
	switch req {
	case ioctlRegisterAgent:
		return regReqLen
	case ioctlUnregisterAgent:
		return 4
	}
	return 0
}

func (f *fakeSys) Ioctl(fd int, req uint, arg unsafe.Pointer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b []byte
	if arg != nil {
		b = unsafe.Slice((*byte)(arg), ioctlArgLen(req))
	}
	f.ioctls = append(f.ioctls, ioctlCall{Req: req, Arg: append([]byte(nil), b...)})
	switch req {
	case ioctlEnablePKey:
		return f.pkeyErr
	case ioctlUnregisterAgent:
		return f.unregErr
	case ioctlRegisterAgent:
		if f.regErr != nil && f.regOK == 0 {
			return f.regErr
		}
		f.regOK--
		hostOrder.PutUint32(b, f.nextID)
		f.nextID++
		return nil
	}
	return syscall.ENOTTY
}

func (f *fakeSys) Poll(fds []unix.PollFd, timeout int) (int, error) {
	var deadline <-chan time.Time
	if timeout >= 0 {
		deadline = time.After(time.Duration(timeout) * time.Millisecond)
	}
	for {
		f.mu.Lock()
		f.polls++
		if f.pollIntr > 0 {
			f.pollIntr--
			f.mu.Unlock()
			return 0, unix.EINTR
		}
		if f.pollErr != nil {
			f.mu.Unlock()
			return 0, f.pollErr
		}
		n := 0
		for i := range fds {
			fds[i].Revents = 0
			switch {
			case fds[i].Fd == fakeUmadFD && f.revents != 0:
				fds[i].Revents = f.revents
			case fds[i].Fd == fakeUmadFD && len(f.reads) > 0, fds[i].Fd == fakeEventFD && f.counter > 0:
				fds[i].Revents = unix.POLLIN
			default:
				continue
			}
			n++
		}
		ch := f.changed
		f.mu.Unlock()
		if n > 0 {
			return n, nil
		}
		select {
		case <-ch:
		case <-deadline:
			return 0, nil
		}
	}
}

func (f *fakeSys) Eventfd(initval uint, flags int) (int, error) {
	if f.efdErr != nil {
		return -1, f.efdErr
	}
	return fakeEventFD, nil
}
