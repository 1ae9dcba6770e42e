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

	ctlMu  sync.Mutex // one control round trip at a time
	recvMu sync.Mutex // one Recv at a time; guards the frames read and the watch
	batch  batch      // frames read at once
	sq     sendQueue  // frames to send at once
	// recvBuf has room for one byte more than a frame, to spot oversize
	// ones, where frames are read one at a time.
	recvBuf [requestLen + 1]byte
	// watchCtx is the context whose end wakes a read (the last Recv's);
	// watchStop undoes that.
	watchCtx  context.Context
	watchStop func()

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var _ mad.Transport = (*Client)(nil)

// Dial attaches to ibsim as cfg says and reads the attach point's vendor
// info, NodeInfo, PortInfo and P_Keys, as the shim does at start-up. The
// client holds one of ibsim's 10 slots until Close.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	if len(cfg.Host) > MaxNodeIDLen {
		return nil, fmt.Errorf("SIM_HOST %q: longer than ibsim's %d-byte node IDs", cfg.Host, MaxNodeIDLen)
	}
	s, err := openSockets(&cfg)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("connecting to %s: %w (is ibsim running with this socket name?)", cfg.where(), err)
		}
		return nil, fmt.Errorf("connecting to %s: %w", cfg.where(), err)
	}
	c := &Client{cfg: cfg, ctl: s.ctl, data: s.data, raw: rawConn(s.data)}
	n, err := c.connect(ctx, s.id)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("attaching to %s as %s: %w", cfg.where(), hostName(cfg.Host), err)
	}
	c.out = s.out(n)
	c.connectData(s.outSA(n))
	if err := c.readAttach(ctx); err != nil {
		c.Close()
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

// connect sends CONNECT with the connection id and records the client
// number and node ID ibsim answers with.
func (c *Client) connect(ctx context.Context, id uint32) (uint32, error) {
	var d [clientInfoLen]byte
	ci := clientInfo{ID: id, IsSM: c.cfg.IsSM, NodeID: c.cfg.Host}
	ci.marshal(d[:])
	reply, err := c.roundTrip(ctx, ctlConnect, d[:])
	if err != nil {
		return 0, err
	}
	ci.unmarshal(reply)
	c.info.Requested = c.cfg.Host
	c.info.NodeID = ci.NodeID
	c.info.ClientID = int(ci.ID)
	return ci.ID, nil
}

// readAttach asks for the attach point the way sim_client_init does.
func (c *Client) readAttach(ctx context.Context) error {
	var zero [ctlDataLen]byte
	b, err := c.roundTrip(ctx, ctlGetVendor, zero[:vendorLen])
	if err != nil {
		return err
	}
	c.info.Vendor.unmarshal(b)
	if b, err = c.roundTrip(ctx, ctlGetNodeInfo, zero[:]); err != nil {
		return err
	}
	c.info.NodeInfo.UnmarshalBinary(b)
	// data[0] = 0 asks for the attach port itself.
	if b, err = c.roundTrip(ctx, ctlGetPortInfo, zero[:]); err != nil {
		return err
	}
	c.info.PortInfo.UnmarshalBinary(b)
	if b, err = c.roundTrip(ctx, ctlGetPKeys, zero[:]); err != nil {
		return err
	}
	c.info.PKeys = decodePKeys(b)
	if c.cfg.IsSM {
		return c.setIsSM(ctx, true)
	}
	return nil
}

// setIsSM sends SET_ISSM, which also sets or clears the port's IsSM
// capability bit.
func (c *Client) setIsSM(ctx context.Context, on bool) error {
	var d [4]byte
	if on {
		binary.NativeEndian.PutUint32(d[:], 1)
	}
	_, err := c.roundTrip(ctx, ctlSetIsSM, d[:])
	return err
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

// Close disconnects from ibsim, freeing the client's slot, and closes the
// sockets. It wakes a blocked Recv at once, returns the first call's
// result on every call, and is safe from any goroutine.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.data.SetReadDeadline(aLongTimeAgo)
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.timeout())
		defer cancel()
		var errs []error
		if c.cfg.IsSM {
			errs = append(errs, c.setIsSM(ctx, false))
		}
		drain(c.raw)
		if _, err := c.roundTrip(ctx, ctlDisconnect, nil); err != nil {
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
