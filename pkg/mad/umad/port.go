package umad

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// maxFrameLen bounds the buffer Recv grows for one reassembled RMPP
// message; a larger length from the kernel is taken as an error.
const maxFrameLen = 64 << 20

// Options configures Open.
type Options struct {
	// Agents are registered when the port opens, in order, at most one per
	// class and class version. Send registers a client agent for any
	// other class and version it meets.
	Agents []Agent
	// Sys makes the system calls; nil means UnixSys.
	Sys Sys
}

// Port is an open umad device, a mad.Transport on one local end port.
type Port struct {
	sys  Sys
	dev  rdma.UmadDevice
	path string

	// fdMu guards the descriptors' lifetime: Send and wake hold it shared,
	// Close exclusively while it releases them. Recv needs no share of it:
	// Close waits for Recv through recvMu first.
	fdMu     sync.RWMutex
	fd       int
	wakeFD   int
	released bool

	agentMu sync.Mutex
	agents  map[agentKey]uint32
	ids     []uint32 // in registration order

	recvMu  sync.Mutex
	buf     []byte
	pollFDs [2]unix.PollFd

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var _ mad.Transport = (*Port)(nil)

// framePool holds send buffers for MADs of up to mad.Size bytes.
var framePool = sync.Pool{New: func() any { return new([HeaderLen + mad.Size]byte) }}

// Open opens the umad device of port on RDMA device dev, as fsys (a sysfs
// tree) lists them, and registers opts.Agents. An empty dev picks the umad
// device with the lowest N, among those of the given port when port is not
// 0. Open returns ctx.Err() when ctx has ended; otherwise ctx does not
// matter, as none of the calls Open makes blocks.
//
// Failures to open the device are *rdma.SysError values: errors.Is matches
// os.ErrPermission for EACCES and EPERM and os.ErrNotExist for ENOENT and
// ENODEV.
func Open(ctx context.Context, fsys *rdma.FS, dev string, port int, opts Options) (*Port, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkAgents(opts.Agents); err != nil {
		return nil, err
	}
	if err := checkABI(fsys); err != nil {
		return nil, err
	}
	u, err := findDevice(fsys, dev, port)
	if err != nil {
		return nil, err
	}
	p := &Port{
		sys:    opts.Sys,
		dev:    u,
		path:   u.DevPath(),
		fd:     -1,
		wakeFD: -1,
		agents: make(map[agentKey]uint32),
	}
	if p.sys == nil {
		p.sys = UnixSys{}
	}
	if err := p.open(opts.Agents); err != nil {
		p.release()
		return nil, err
	}
	return p, nil
}

// checkAgents validates each agent and refuses two for one class version.
func checkAgents(agents []Agent) error {
	seen := make(map[agentKey]bool)
	for i := range agents {
		a := &agents[i]
		if err := a.validate(); err != nil {
			return err
		}
		if seen[a.key()] {
			return fmt.Errorf("two agents for %v", a)
		}
		seen[a.key()] = true
	}
	return nil
}

// checkABI makes sure the kernel speaks ABIVersion.
func checkABI(fsys *rdma.FS) error {
	v, err := fsys.UmadABIVersion()
	if err != nil {
		return fmt.Errorf("can't read the user MAD ABI version (is the ib_umad module loaded?): %w", err)
	}
	if v != ABIVersion {
		return fmt.Errorf("%s: the kernel speaks user MAD ABI version %d; ibtool speaks only version %d",
			fsys.Path("class/infiniband_mad/abi_version"), v, ABIVersion)
	}
	return nil
}

// findDevice picks the umad device for dev and port; see Open.
func findDevice(fsys *rdma.FS, dev string, port int) (rdma.UmadDevice, error) {
	if dev != "" {
		return fsys.UmadDeviceFor(dev, port)
	}
	all, err := fsys.UmadDevices()
	if err != nil {
		return rdma.UmadDevice{}, err
	}
	for _, u := range all {
		if port == 0 || u.Port == port {
			return u, nil
		}
	}
	what := "no umad devices"
	if port != 0 {
		what = fmt.Sprintf("no umad device for port %d", port)
	}
	return rdma.UmadDevice{}, fmt.Errorf("%s under %s: %w", what, fsys.Path("class/infiniband_mad"), fs.ErrNotExist)
}

// open opens the device, switches it to the P_Key index layout, makes the
// wake-up eventfd and registers agents. The caller releases what it got
// when it fails.
func (p *Port) open(agents []Agent) error {
	fd, err := p.sys.Open(p.path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC)
	if err != nil {
		return p.sysErr("open", err)
	}
	p.fd = fd
	if err := p.sys.Ioctl(fd, ioctlEnablePKey, nil); err != nil {
		return p.sysErr("ioctl IB_USER_MAD_ENABLE_PKEY", err)
	}
	wfd, err := p.sys.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return &rdma.SysError{Op: "eventfd", Path: "for " + p.path, Err: err}
	}
	p.wakeFD = wfd
	p.agentMu.Lock()
	defer p.agentMu.Unlock()
	for i := range agents {
		if _, err := p.register(&agents[i]); err != nil {
			return err
		}
	}
	return nil
}

// sysErr wraps a failed system call on the device.
func (p *Port) sysErr(op string, err error) error {
	return &rdma.SysError{Op: op, Path: p.path, Err: err}
}

// errClosed is what Send and Recv return after Close.
func (p *Port) errClosed() error {
	return fmt.Errorf("%s: %w", p.path, mad.ErrClosed)
}

// register registers a with the kernel and records its id. The caller
// holds agentMu.
func (p *Port) register(a *Agent) (uint32, error) {
	req := a.regReq()
	if err := p.sys.Ioctl(p.fd, ioctlRegisterAgent, unsafe.Pointer(req)); err != nil {
		return 0, fmt.Errorf("registering a MAD agent for %v: %w", a, p.sysErr("ioctl IB_USER_MAD_REGISTER_AGENT", err))
	}
	id := hostOrder.Uint32(req[regOffID:])
	p.agents[a.key()] = id
	p.ids = append(p.ids, id)
	return id, nil
}

// agentFor returns the agent for k, registering a client agent on first
// use.
func (p *Port) agentFor(k agentKey) (uint32, error) {
	p.agentMu.Lock()
	defer p.agentMu.Unlock()
	if id, ok := p.agents[k]; ok {
		return id, nil
	}
	a := &Agent{Class: k.class, ClassVersion: k.version}
	if k.class.HasRMPP() {
		a.RMPPVersion = 1 // the kernel reassembles SA responses, as for libibumad's SA clients
	}
	return p.register(a)
}

// ReassemblesRMPP reports true: the kernel runs RMPP for the client agents
// of RMPP classes Send registers, and Recv returns whole messages.
func (p *Port) ReassemblesRMPP() bool { return true }

// LocalPort names the device and port the umad device belongs to.
func (p *Port) LocalPort() mad.LocalPort {
	return mad.LocalPort{Device: p.dev.Device, Port: uint8(p.dev.Port)}
}

// Device returns the umad device the port opened.
func (p *Port) Device() rdma.UmadDevice { return p.dev }

// Send writes p to the device through the agent of its class and class
// version (MAD bytes 1 and 2), registering a client agent if there is none.
// p.Addr is the destination: the permissive LID for a directed-route SMP,
// QP1 and its Q_Key for a GMP. p.Timeout, rounded up to milliseconds, is
// how long the kernel waits for the response before it returns the request
// from Recv with ETIMEDOUT; the kernel does not retry. The kernel refuses
// a request (EINVAL) while one of the same class and TID is still waiting
// for its response or timeout. The kernel never makes a write wait for
// room (it queues the MAD), so only a ctx that has ended stops a Send.
func (p *Port) Send(ctx context.Context, pkt *mad.Packet) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(pkt.MAD) < minSendLen {
		return fmt.Errorf("%s: a MAD to send needs at least %d bytes, not %d", p.path, minSendLen, len(pkt.MAD))
	}
	p.fdMu.RLock()
	defer p.fdMu.RUnlock()
	if p.released || p.closed.Load() {
		return p.errClosed()
	}
	id, err := p.agentFor(agentKey{mad.Class(pkt.MAD[1]), pkt.MAD[2]})
	if err != nil {
		return err
	}
	n := frameLen(len(pkt.MAD))
	var frame []byte
	if n <= HeaderLen+mad.Size {
		buf := framePool.Get().(*[HeaderLen + mad.Size]byte)
		defer framePool.Put(buf)
		frame = buf[:n]
	} else {
		frame = make([]byte, n)
	}
	encodeFrame(frame, id, pkt)
	return p.write(frame)
}

// write writes one whole frame to the device.
func (p *Port) write(frame []byte) error {
	for {
		n, err := p.sys.Write(p.fd, frame)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return p.sysErr("write", err)
		case n != len(frame):
			return p.sysErr("write", io.ErrShortWrite)
		}
		return nil
	}
}

// errWouldBlock says the device has no frame to read yet.
var errWouldBlock = errors.New("no frame ready")

// Recv reads the next frame into pkt: a response, an unsolicited MAD for a
// server agent, or a request that timed out (Status ETIMEDOUT, MAD the
// request's common header). pkt.Addr is the source, pkt.Timeout is zeroed.
// Frames too short to hold a header are skipped. Recv returns ctx.Err()
// when ctx ends first and an error wrapping mad.ErrClosed after Close.
func (p *Port) Recv(ctx context.Context, pkt *mad.Packet) error {
	p.recvMu.Lock()
	defer p.recvMu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.closed.Load() {
		return p.errClosed()
	}
	stop := context.AfterFunc(ctx, p.wake)
	defer stop()
	for {
		frame, err := p.readFrame()
		switch {
		case err == nil:
			if decodeFrame(frame, pkt) == nil {
				return nil
			}
		case err != errWouldBlock:
			return err
		default:
			if err := p.wait(ctx); err != nil {
				return err
			}
		}
	}
}

// readFrame reads one frame without blocking. When the kernel says the
// buffer is too small (ENOSPC, a reassembled RMPP message), it has filled
// in the header with the length needed: the buffer grows to that and the
// read is tried once more.
func (p *Port) readFrame() ([]byte, error) {
	if p.buf == nil {
		p.buf = make([]byte, frameLen(mad.Size))
	}
	n, err := p.read(p.buf)
	if errors.Is(err, unix.ENOSPC) {
		need, lerr := p.neededLen()
		if lerr != nil {
			return nil, lerr
		}
		p.buf = make([]byte, need)
		n, err = p.read(p.buf)
	}
	switch {
	case errors.Is(err, unix.EAGAIN):
		return nil, errWouldBlock
	case err != nil:
		return nil, p.sysErr("read", err)
	}
	return p.buf[:n], nil
}

// read reads once into b, again when interrupted.
func (p *Port) read(b []byte) (int, error) {
	for {
		n, err := p.sys.Read(p.fd, b)
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}

// neededLen returns the frame length the kernel put in the header after an
// ENOSPC read.
func (p *Port) neededLen() (int, error) {
	need := int(hostOrder.Uint32(p.buf[offLength:]))
	if need <= len(p.buf) || need > maxFrameLen {
		return 0, fmt.Errorf("%w: the kernel asks for a %d-byte buffer", p.sysErr("read", unix.ENOSPC), need)
	}
	return need, nil
}

// wait blocks until the device has a frame, Close or the end of ctx.
func (p *Port) wait(ctx context.Context) error {
	fds := p.pollFDs[:]
	fds[0] = unix.PollFd{Fd: int32(p.fd), Events: unix.POLLIN}
	fds[1] = unix.PollFd{Fd: int32(p.wakeFD), Events: unix.POLLIN}
	for {
		_, err := p.sys.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return p.sysErr("poll", err)
		}
		break
	}
	if fds[1].Revents != 0 {
		p.drainWake()
	}
	if p.closed.Load() {
		return p.errClosed()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Once the device is gone (its agents dead) the kernel reports POLLERR
	// alone. Say so here rather than poll again at once.
	if ev := fds[0].Revents; ev&unix.POLLIN == 0 && ev&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
		return fmt.Errorf("%w (the device reports an error: was it removed?)", p.sysErr("poll", unix.EIO))
	}
	return nil
}

// wake makes a Recv blocked in wait return, unless the descriptors are
// gone already. An eventfd counter that is full means a wake-up is pending
// anyway, so the write's error does not matter.
func (p *Port) wake() {
	p.fdMu.RLock()
	defer p.fdMu.RUnlock()
	if p.released {
		return
	}
	var one [8]byte
	hostOrder.PutUint64(one[:], 1)
	p.sys.Write(p.wakeFD, one[:])
}

// drainWake resets the eventfd so the next wait blocks again.
func (p *Port) drainWake() {
	var b [8]byte
	p.sys.Read(p.wakeFD, b[:])
}

// Close unregisters the agents and closes the device. It makes a blocked
// Recv return an error wrapping mad.ErrClosed and waits for it and for
// Sends under way. It may be called any number of times, from any
// goroutine; every call returns the first one's result.
func (p *Port) Close() error {
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		p.wake()
		p.recvMu.Lock()
		defer p.recvMu.Unlock()
		p.fdMu.Lock()
		defer p.fdMu.Unlock()
		p.closeErr = p.release()
	})
	return p.closeErr
}

// release unregisters the agents and closes the descriptors that are open.
func (p *Port) release() error {
	var errs []error
	if p.fd >= 0 {
		for _, id := range p.ids {
			if err := p.sys.Ioctl(p.fd, ioctlUnregisterAgent, unsafe.Pointer(&id)); err != nil {
				errs = append(errs, fmt.Errorf("unregistering MAD agent %d: %w", id, p.sysErr("ioctl IB_USER_MAD_UNREGISTER_AGENT", err)))
			}
		}
		if err := p.sys.Close(p.fd); err != nil {
			errs = append(errs, p.sysErr("close", err))
		}
	}
	if p.wakeFD >= 0 {
		if err := p.sys.Close(p.wakeFD); err != nil {
			errs = append(errs, &rdma.SysError{Op: "close", Path: "eventfd for " + p.path, Err: err})
		}
	}
	p.fd, p.wakeFD, p.released = -1, -1, true
	p.agents, p.ids = nil, nil
	return errors.Join(errs...)
}
