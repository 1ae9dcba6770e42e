package verbs

import "fmt"

// XRCD is an XRC domain (struct ibv_xrcd): the XRC SRQs and XRC_RECV
// QPs made in it share their receives.
type XRCD struct {
	ctx    *Context
	h      handle
	id     int
	qps    int // SRQs and QPs in it
	closed bool
}

// OpenXRCD opens the XRC domain tied to the file open as fd (created
// when no process has it open yet), as rdma-core's ibv_xsrq_pingpong
// does with /tmp/xrc_domain; -1 makes a domain of this process only.
func (c *Context) OpenXRCD(fd int) (*XRCD, error) {
	c.use("OpenXRCD")
	h, err := drv.openXRCD(c.h, fd)
	if err != nil {
		return nil, verbError("ibv_open_xrcd", c.name, err)
	}
	return &XRCD{ctx: c, h: h, id: c.adopt()}, nil
}

// String names the domain in messages.
func (x *XRCD) String() string { return fmt.Sprintf("%s XRCD %d", x.ctx.name, x.id) }

func (x *XRCD) use(what string) {
	if x.closed {
		panic(fmt.Sprintf("verbs: %s on closed %s", what, x))
	}
}

// Close closes the domain. Closing it again does nothing and returns
// nil; closing it while an SRQ or QP is in it panics.
func (x *XRCD) Close() error {
	if x.closed {
		return nil
	}
	if x.qps > 0 {
		panic(fmt.Sprintf("verbs: Close of %s with %d SRQs and QPs still in it", x, x.qps))
	}
	if err := drv.closeXRCD(x.h); err != nil {
		return verbError("ibv_close_xrcd", x.String(), err)
	}
	x.closed = true
	x.ctx.release()
	return nil
}
