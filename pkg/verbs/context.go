package verbs

import (
	"errors"
	"fmt"
	"sync"
)

// Context is an open RDMA device (struct ibv_context). Close it after
// every object made from it is closed.
type Context struct {
	h    handle
	name string

	mu       sync.Mutex
	closed   bool
	children int // PDs, CQs and completion channels not yet closed
	nextID   int
	attr     *Attr // the device's attributes, once QueryDevice read them
}

// Open opens the RDMA device called name, or the first device libibverbs
// lists when name is empty. A name that is not listed wraps
// ErrDeviceNotFound; a build without libibverbs returns ErrNoVerbs, and
// one that cannot load it an error wrapping ErrNoLibibverbs.
func Open(name string) (*Context, error) {
	h, dev, err := drv.open(name)
	if err != nil {
		var ve *VerbError
		if errors.Is(err, ErrNoVerbs) || errors.Is(err, ErrNoLibibverbs) || errors.Is(err, ErrDeviceNotFound) || errors.As(err, &ve) {
			return nil, err
		}
		if name == "" {
			name = "first device"
		}
		return nil, verbError("ibv_open_device", name, err)
	}
	return &Context{h: h, name: dev}, nil
}

// Name is the device's name, e.g. "mlx5_0" or "rxe0".
func (c *Context) Name() string { return c.name }

// String names the context in messages.
func (c *Context) String() string { return c.name }

// use panics when c is closed: using a closed context is a bug in the
// caller, not a run-time condition.
func (c *Context) use(what string) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		panic(fmt.Sprintf("verbs: %s on closed context %s", what, c.name))
	}
}

// adopt counts a new child object and returns its number for messages.
func (c *Context) adopt() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.children++
	c.nextID++
	return c.nextID
}

// release uncounts a closed child.
func (c *Context) release() {
	c.mu.Lock()
	c.children--
	c.mu.Unlock()
}

// Close closes the device. Closing it again does nothing and returns
// nil; closing it while a PD, CQ or completion channel made from it is
// open panics.
func (c *Context) Close() error {
	c.mu.Lock()
	closed, children := c.closed, c.children
	if !closed && children == 0 {
		c.closed = true
	}
	c.mu.Unlock()
	if closed {
		return nil
	}
	if children > 0 {
		panic(fmt.Sprintf("verbs: Close of context %s with %d objects still open", c.name, children))
	}
	if err := drv.closeDevice(c.h); err != nil {
		return verbError("ibv_close_device", c.name, err)
	}
	return nil
}

// QueryPort reads the attributes of port (1-based); Port.GIDs stays empty.
func (c *Context) QueryPort(port int) (Port, error) {
	c.use("QueryPort")
	p, err := drv.queryPort(c.h, port)
	if err != nil {
		return Port{}, verbError("ibv_query_port", fmt.Sprintf("%s port %d", c.name, port), err)
	}
	p.Num = port
	return p, nil
}

// QueryGID reads entry index of port's GID table.
func (c *Context) QueryGID(port, index int) ([16]byte, error) {
	c.use("QueryGID")
	g, err := drv.queryGID(c.h, port, index)
	if err != nil {
		return g, verbError("ibv_query_gid", fmt.Sprintf("%s port %d GID index %d", c.name, port, index), err)
	}
	return g, nil
}

// QueryDevice reads the device's attributes (ibv_query_device_ex): its
// limits (MaxSGE, MaxQPWR, ...) and capabilities (AtomicCap, MaxMW, ...),
// as ibv_devinfo -v prints them. They do not change while the device is
// open: the first call's answer is kept.
func (c *Context) QueryDevice() (Attr, error) {
	c.use("QueryDevice")
	c.mu.Lock()
	a := c.attr
	c.mu.Unlock()
	if a != nil {
		return *a, nil
	}
	got, err := drv.queryDevice(c.h)
	if err != nil {
		return Attr{}, verbError("ibv_query_device_ex", c.name, err)
	}
	c.mu.Lock()
	c.attr = &got
	c.mu.Unlock()
	return got, nil
}

// QueryDeviceLegacy reads the device's attributes with the legacy
// ibv_query_device: the fields of struct ibv_device_attr only, the
// device's identity (firmware version, GUIDs, vendor) among them, which
// QueryDevice's Attr leaves to Device. QueryDevice reads the same limits
// with ibv_query_device_ex, and the extended ones beside them. Each call
// asks the device.
func (c *Context) QueryDeviceLegacy() (DeviceAttr, error) {
	c.use("QueryDeviceLegacy")
	a, err := drv.queryDeviceLegacy(c.h)
	if err != nil {
		return DeviceAttr{}, verbError("ibv_query_device", c.name, err)
	}
	return a, nil
}

// QueryPKey reads entry index of port's P_Key table (ibv_query_pkey), in
// host order: 0xffff is the default full-membership P_Key.
func (c *Context) QueryPKey(port, index int) (uint16, error) {
	c.use("QueryPKey")
	pk, err := drv.queryPKey(c.h, port, index)
	if err != nil {
		return 0, verbError("ibv_query_pkey", fmt.Sprintf("%s port %d P_Key index %d", c.name, port, index), err)
	}
	return pk, nil
}
