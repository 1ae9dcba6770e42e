package ibsim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
)

// ErrRefused is returned, wrapped, when ibsim answers a control request with
// SIM_CTL_ERROR. For CONNECT that means an unknown SIM_HOST, all 10 client
// slots taken, or another SM already attached to the node.
var ErrRefused = errors.New("ibsim refused the request")

// Client is one attachment to ibsim: a mad.Transport for the attach port
// plus what ibsim reported about it.
type Client struct {
	cfg  Config
	ctl  net.Conn
	data net.PacketConn
	raw  syscall.RawConn // data's descriptor (recvmmsg, connect, SIOCOUTQ); nil if none
	out  net.Addr        // ibsim's data socket for this client
	// connected is set once the data socket is connected to out; until
	// then every frame names out.
	connected bool
	info      AttachInfo

	ctlMu   sync.Mutex // one control round trip at a time
	recvMu  sync.Mutex // one Recv at a time; guards the frames read and the watch
	writeMu sync.Mutex // one write at a time on an unconnected Unix socket, for its deadline
	batch   batch      // frames read at once
	sq      sendQueue  // frames to send at once
	// recvBuf has room for one byte more than a frame, to spot oversize
	// ones, where frames are read one at a time.
	recvBuf [requestLen + 1]byte
	// watchCtx is the context whose end wakes a read (the last Recv's);
	// watchStop undoes that.
	watchCtx  context.Context
	watchStop func()

	// life is Dial's context: once it has ended (SIGINT), Close does not
	// wait for ibsim beyond quitWait.
	life context.Context
	// stalled is set once ibsim read nothing for a whole timeout, or
	// left a control request unanswered: Close then does not wait for it
	// beyond quitWait either.
	stalled atomic.Bool

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var _ mad.Transport = (*Client)(nil)

// Dial attaches to ibsim as cfg says and reads the attach point's vendor
// info, NodeInfo, PortInfo and P_Keys, as the shim does at start-up. The
// client holds one of ibsim's 10 slots until Close. Once ctx has ended,
// Close waits for ibsim only briefly.
//
// ibsim aborts when the client that sent CONNECT has closed its sockets
// by the time ibsim handles it, so Dial never leaves a CONNECT unanswered
// behind it: when ctx ends during the CONNECT it still waits a moment for
// the answer (and then disconnects), and where no answer comes (ibsim
// stopped or busy) a keeper holds the sockets until one does; see
// ServeKeeper.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	if len(cfg.Host) > MaxNodeIDLen {
		return nil, fmt.Errorf("SIM_HOST %q: longer than ibsim's %d-byte node IDs", cfg.Host, MaxNodeIDLen)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := openSockets(&cfg)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("connecting to %s: %w (is ibsim running with this socket name?)", cfg.where(), err)
		}
		return nil, fmt.Errorf("connecting to %s: %w", cfg.where(), err)
	}
	c := &Client{cfg: cfg, ctl: s.ctl, data: s.data, raw: rawConn(s.data), life: ctx}
	n, err := c.connect(ctx, s.id)
	if err != nil {
		var un *unansweredError
		if errors.As(err, &un) {
			// ibsim has the CONNECT and may act on it yet.
			if kerr := keepAttach(cfg, s); kerr != nil {
				err = fmt.Errorf("%w; %v", err, kerr)
			}
		}
		s.close()
		return nil, fmt.Errorf("attaching to %s as %s: %w", cfg.where(), hostName(cfg.Host), err)
	}
	c.out = s.out(n)
	c.connectData(s.outSA(n))
	err = ctx.Err() // the answer came after ctx ended
	if err == nil {
		err = c.readAttach(ctx)
	}
	if err != nil {
		c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("reading the attach point from %s: %w", cfg.where(), err)
	}
	return c, nil
}

// connectData connects the data socket to ibsim's socket for this client,
// from which all its frames come, so that a send names no address: the
// kernel looks a named address up on every sendto. Where that fails, each
// frame goes to out by name.
func (c *Client) connectData(sa syscall.Sockaddr) {
	if c.raw == nil || sa == nil {
		return
	}
	var cerr error
	err := c.raw.Control(func(fd uintptr) { cerr = syscall.Connect(int(fd), sa) })
	c.connected = err == nil && cerr == nil
}

func hostName(h string) string {
	if h == "" {
		return "the default node"
	}
	return fmt.Sprintf("%q", h)
}

// connectGrace is how long a CONNECT still waits for its answer after
// ctx ended. ibsim answers in microseconds when it runs; one that does not
// answer in this time is stopped or swamped, and a keeper takes over.
const connectGrace = 300 * time.Millisecond

// connect sends CONNECT with the connection id and records the client
// number and node ID ibsim answers with. An *unansweredError says ibsim
// got the CONNECT but did not answer in time.
func (c *Client) connect(ctx context.Context, id uint32) (uint32, error) {
	var d [clientInfoLen]byte
	ci := clientInfo{ID: id, IsSM: c.cfg.IsSM, NodeID: c.cfg.Host}
	ci.marshal(d[:])
	reply, err := c.exchange(ctx, ctlConnect, d[:], c.cfg.timeout(), connectGrace)
	if err != nil {
		return 0, err
	}
	ci.unmarshal(reply)
	c.info.Requested = c.cfg.Host
	c.info.NodeID = ci.NodeID
	c.info.ClientID = int(ci.ID)
	return ci.ID, nil
}

// readAttach asks for the attach point as sim_client_init does, the four
// requests sent at once (exchangeAll).
func (c *Client) readAttach(ctx context.Context) error {
	var zero [ctlDataLen]byte
	// data[0] = 0 in GET_PORTINFO asks for the attach port itself.
	reqs := [...]ctlRequest{
		{typ: ctlGetVendor, data: zero[:vendorLen]},
		{typ: ctlGetNodeInfo, data: zero[:]},
		{typ: ctlGetPortInfo, data: zero[:]},
		{typ: ctlGetPKeys, data: zero[:]},
	}
	if err := c.exchangeAll(ctx, reqs[:], c.cfg.timeout(), 0); err != nil {
		return err
	}
	c.info.Vendor.unmarshal(reqs[0].reply)
	c.info.NodeInfo.UnmarshalBinary(reqs[1].reply)
	c.info.PortInfo.UnmarshalBinary(reqs[2].reply)
	c.info.PKeys = decodePKeys(reqs[3].reply)
	if c.cfg.IsSM {
		// SET_ISSM also sets the port's IsSM capability bit; Close
		// clears both.
		var on [4]byte
		binary.NativeEndian.PutUint32(on[:], 1)
		_, err := c.roundTrip(ctx, ctlSetIsSM, on[:])
		return err
	}
	return nil
}

// Info returns what ibsim reported about the attach point at Dial.
func (c *Client) Info() AttachInfo { return c.info }

// SysFS returns the attach point as the shim's sysfs tree; see
// AttachInfo.SysFS.
func (c *Client) SysFS() fs.FS { return c.info.SysFS() }

// LocalPort names the attach port as the shim does: device ibsim0 and the
// PortInfo's local port number.
func (c *Client) LocalPort() mad.LocalPort {
	return mad.LocalPort{Device: DeviceName, Port: c.info.PortInfo.LocalPort}
}

// Close's wait for ibsim's answer to DISCONNECT: closeWait, or quitWait
// once Dial's context has ended or ibsim stopped reading. Its answer only
// confirms: the DISCONNECT is queued at ibsim's control socket, ahead of
// any later client's CONNECT, and ibsim frees the slot when it gets to it.
const (
	closeWait = time.Second
	quitWait  = 300 * time.Millisecond
)

// Close disconnects from ibsim, freeing the client's slot, and closes the
// sockets. It wakes a blocked Recv or Send at once, returns the first
// call's result on every call, and is safe from any goroutine.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.data.SetReadDeadline(aLongTimeAgo)
		wait := min(c.cfg.timeout(), closeWait)
		if c.stalled.Load() || (c.life != nil && c.life.Err() != nil) {
			wait = quitWait
		}
		start := time.Now()
		var errs []error
		if c.cfg.IsSM {
			var off [4]byte
			_, err := c.exchange(context.Background(), ctlSetIsSM, off[:], wait, 0)
			errs = append(errs, err)
		}
		drain(c.raw, min(drainTimeout, wait/2))
		if _, err := c.exchange(context.Background(), ctlDisconnect, nil, max(wait-time.Since(start), time.Millisecond), 0); err != nil {
			errs = append(errs, fmt.Errorf("disconnecting client %d from %s: %w", c.info.ClientID, c.cfg.where(), err))
		}
		c.data.Close()
		c.ctl.Close()
		c.recvMu.Lock() // a Recv still running returns at the deadline set above
		if c.watchStop != nil {
			c.watchStop()
			c.watchStop = nil
		}
		c.recvMu.Unlock()
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// aLongTimeAgo is a deadline in the past, which makes a blocked read
// return at once.
var aLongTimeAgo = time.Unix(1, 0)

// wakeOnDone makes the end of ctx set a past deadline through set, so a
// blocked read returns. The returned func undoes that, waiting for the
// callback if it already started, so it cannot land on a later read.
func wakeOnDone(ctx context.Context, set func(time.Time) error) (release func()) {
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		set(aLongTimeAgo)
		close(done)
	})
	return func() {
		if !stop() {
			<-done
		}
	}
}
