package rdma

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// cmStep is one step cmtime times.
type cmStep int

// cmtime's steps, in its order.
const (
	cmStepCreateID cmStep = iota
	cmStepBind
	cmStepResolveAddr
	cmStepResolveRoute
	cmStepCreateQP
	cmStepConnect
	cmStepDisconnect
	cmStepDestroy
	cmStepCount
)

var cmStepNames = [cmStepCount]string{"create id", "bind addr", "resolve addr", "resolve route", "create qp", "connect", "disconnect", "destroy"}

// String is the step's name in cmtime's table.
func (s cmStep) String() string { return cmStepNames[s] }

// cmSpan is when something began and ended; a zero end: it did not.
type cmSpan struct{ start, end time.Time }

func (s cmSpan) done() bool { return !s.start.IsZero() && !s.end.IsZero() }

// cmTimes are the spans of a run: each step's for all connections and
// for each one.
type cmTimes struct {
	steps [cmStepCount]cmSpan
	nodes [][cmStepCount]cmSpan
}

// writeTable prints cmtime's table: each step's total, the longest and
// shortest of one connection, and the total per connection (the bind
// step only with a bind address).
func (ts *cmTimes) writeTable(w io.Writer, bind bool) {
	fmt.Fprintf(w, "step              total ms     max ms     min us  us / conn\n")
	us := func(s cmSpan) float32 { return float32(s.end.Sub(s.start).Nanoseconds() / 1000) }
	for s := range cmStepCount {
		if s == cmStepBind && !bind {
			continue
		}
		var hi, lo float32 = 0, 999999999.
		for _, n := range ts.nodes {
			if n[s].done() {
				d := us(n[s])
				hi, lo = max(hi, d), min(lo, d)
			}
		}
		total := float32(0)
		if ts.steps[s].done() {
			total = us(ts.steps[s])
		}
		fmt.Fprintf(w, "%-13s: %11.2f%11.2f%11.2f%11.2f\n", s, total/1000, hi/1000, lo, total/float32(len(ts.nodes)))
	}
}

// cmtimeRun is cmtime: the client or the server.
func cmtimeRun(o *cmtimeOptions) error {
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return ucmaExit(1, err)
	}
	defer ch.Close()
	ports := newCMPortWatch(o.ctx)
	defer ports.stop()
	o.ctx = ports.ctx
	if o.Server == "" {
		return ports.why(cmtimeServe(o, ch, ports))
	}
	c := &cmClient{o: o, ch: ch, ids: make([]*rdmacm.ID, o.Connections), failed: make([]bool, o.Connections),
		times: cmTimes{nodes: make([][cmStepCount]cmSpan, o.Connections)}, pds: map[string]*cmDev{}, ports: ports}
	err = c.run()
	if err == nil {
		if n := c.failures(); n > 0 {
			err = fmt.Errorf("%d of %d connections failed: %w", n, o.Connections, c.firstErr)
		}
	}
	err = ports.why(err)
	c.destroy()
	c.times.writeTable(o.IO.Out, o.Bind != "")
	if err != nil {
		return ucmaExit(syncStatus(err), err)
	}
	return nil
}

// syncStatus is the status of a program of librdmacm's synchronous
// calls (rdma_client's, cmtime's) for err: a failed call returns -1
// whatever event failed it; an address lookup, getaddrinfo's code. A
// port gone down, where the program waits on, is 3, the exit of a tool
// that could not do its work.
func syncStatus(err error) int {
	var f *ucmaFailure
	if errors.As(err, &f) {
		return f.status
	}
	var pd *verbs.PortDownError
	if errors.As(err, &pd) {
		return cmdutil.ExitFailure
	}
	return -1
}

// cmClient is cmtime's client: a connection per node.
type cmClient struct {
	o        *cmtimeOptions
	ch       *rdmacm.EventChannel
	ids      []*rdmacm.ID
	cqs      []*verbs.CQ
	failed   []bool
	times    cmTimes
	pds      map[string]*cmDev
	mu       sync.Mutex
	firstErr error
	// ports ends the waits when a connection's port goes down.
	ports *cmPortWatch
}

// cmDev is a device the connections' QPs are on, with the one PD they
// share (librdmacm's default PD of a device).
type cmDev struct {
	ctx *verbs.Context
	pd  *verbs.PD
}

func (c *cmClient) printf(format string, a ...any) { fmt.Fprintf(c.o.IO.Out, format, a...) }

// fail records node i's failure.
func (c *cmClient) fail(i int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed[i] = true
	if c.firstErr == nil {
		c.firstErr = fmt.Errorf("connection %d: %w", i, err)
	}
}

func (c *cmClient) failures() int {
	n := 0
	for _, f := range c.failed {
		if f {
			n++
		}
	}
	return n
}

// each runs do for each node that has not failed, one after another,
// timing the step for each and for all.
func (c *cmClient) each(s cmStep, do func(i int) error) {
	c.times.steps[s].start = time.Now()
	for i := range c.ids {
		if c.failed[i] {
			continue
		}
		c.times.nodes[i][s].start = time.Now()
		if err := do(i); err != nil {
			c.fail(i, err)
			continue
		}
		c.times.nodes[i][s].end = time.Now()
	}
	c.times.steps[s].end = time.Now()
}

// all runs do for each node that has not failed at once, each in its
// own goroutine (cmtime starts every request, then its event thread
// completes them), timing the step for each and for all.
func (c *cmClient) all(s cmStep, do func(i int) error) {
	c.times.steps[s].start = time.Now()
	var wg sync.WaitGroup
	for i := range c.ids {
		if c.failed[i] {
			continue
		}
		wg.Add(1)
		c.times.nodes[i][s].start = time.Now()
		go func() {
			defer wg.Done()
			err := do(i)
			c.times.nodes[i][s].end = time.Now()
			if err != nil {
				c.fail(i, err)
			}
		}()
	}
	wg.Wait()
	c.times.steps[s].end = time.Now()
}

func (c *cmClient) run() error {
	o := c.o
	c.printf("creating id\n")
	var createErr error
	c.each(cmStepCreateID, func(i int) error {
		id, err := c.ch.CreateID(rdmacm.PortSpaceTCP)
		if err != nil && createErr == nil {
			createErr = err
		}
		c.ids[i] = id
		return err
	})
	if createErr != nil {
		return createErr
	}
	dst, err := cmLookup(o.ctx, o.resolve, false, o.Server, o.Port)
	var src netip.AddrPort
	if err == nil && o.Bind != "" {
		src, err = cmLookup(o.ctx, o.resolve, false, o.Bind, "0")
	}
	if err != nil {
		c.printf("getaddrinfo error: %s\n", gaiText(err))
		return err
	}
	if o.Bind != "" {
		c.printf("binding source address\n")
		c.each(cmStepBind, func(i int) error { return c.ids[i].Bind(src) })
	}
	c.printf("resolving address\n")
	c.all(cmStepResolveAddr, func(i int) error {
		err := c.retry(rdmacm.EventAddrError, func() error { return c.ids[i].ResolveAddr(o.ctx, src, dst, o.Timeout) })
		if err == nil {
			c.ports.add(c.ids[i])
		}
		return err
	})
	c.printf("resolving route\n")
	c.all(cmStepResolveRoute, func(i int) error {
		return c.retry(rdmacm.EventRouteError, func() error { return c.ids[i].ResolveRoute(o.ctx, o.Timeout) })
	})
	c.printf("creating qp\n")
	c.cqs = make([]*verbs.CQ, len(c.ids))
	c.each(cmStepCreateQP, c.createQP)
	c.printf("connecting\n")
	p := rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: uint8(o.Retries)}
	c.all(cmStepConnect, func(i int) error {
		_, err := c.ids[i].Connect(o.ctx, p)
		c.eventFailed(err, "event: %s, error: %d\n")
		return err
	})
	c.printf("disconnecting\n")
	c.all(cmStepDisconnect, func(i int) error {
		id := c.ids[i]
		if err := id.Disconnect(); err != nil {
			return err
		}
		if err := id.DestroyQP(); err != nil {
			return err
		}
		for {
			ev, err := id.Await(o.ctx, "wait for the disconnect")
			if err != nil || ev.Type == rdmacm.EventDisconnected {
				return err
			}
		}
	})
	return nil
}

// retry does a resolution, again up to -r times after an error event of
// type t; the last one's error event is printed.
func (c *cmClient) retry(t rdmacm.EventType, do func() error) error {
	for left := c.o.Retries; ; left-- {
		err := do()
		var e *rdmacm.Error
		if err == nil || !errors.As(err, &e) || e.Event == nil || e.Event.Type != t || left == 0 {
			c.eventFailed(err, "%s, error: %d\n")
			return err
		}
	}
}

// eventFailed prints cmtime's line for an error event (when err is one)
// with format.
func (c *cmClient) eventFailed(err error, format string) {
	var e *rdmacm.Error
	if errors.As(err, &e) && e.Event != nil && e.Event.Type.IsError() {
		c.printf(format, e.Event.Type, e.Event.Status)
	}
}

// createQP makes node i's QP: on its device's shared PD, with a CQ of
// its own and room for one send and one receive.
func (c *cmClient) createQP(i int) error {
	id := c.ids[i]
	dev, err := cmDevice(c.pds, id)
	if err != nil {
		return err
	}
	if c.cqs[i], err = dev.ctx.CreateCQ(2, nil); err != nil {
		return err
	}
	_, err = id.CreateQP(dev.pd, verbs.QPConfig{SendCQ: c.cqs[i], RecvCQ: c.cqs[i],
		Caps: verbs.QPCaps{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
	return err
}

// cmDevice opens the device of id once, with its PD.
func cmDevice(devs map[string]*cmDev, id *rdmacm.ID) (*cmDev, error) {
	d, err := id.Device()
	if err != nil {
		return nil, err
	}
	if dev := devs[d.Name]; dev != nil {
		return dev, nil
	}
	ctx, err := id.OpenDevice()
	if err != nil {
		return nil, err
	}
	pd, err := ctx.AllocPD()
	if err != nil {
		ctx.Close()
		return nil, err
	}
	dev := &cmDev{ctx: ctx, pd: pd}
	devs[d.Name] = dev
	return dev, nil
}

// destroy destroys the IDs, timing it (cleanup_nodes), then the verbs
// objects.
func (c *cmClient) destroy() {
	c.printf("destroying id\n")
	c.times.steps[cmStepDestroy].start = time.Now()
	for i, id := range c.ids {
		c.times.nodes[i][cmStepDestroy].start = time.Now()
		if id != nil {
			id.Close()
		}
		c.times.nodes[i][cmStepDestroy].end = time.Now()
	}
	c.times.steps[cmStepDestroy].end = time.Now()
	for _, cq := range c.cqs {
		if cq != nil {
			cq.Close()
		}
	}
	for _, d := range c.pds {
		d.pd.Close()
		d.ctx.Close()
	}
}

// cmtimeServe is cmtime's server: it accepts connections, and
// disconnects and destroys each when its peer disconnects, until it is
// stopped.
func cmtimeServe(o *cmtimeOptions, ch *rdmacm.EventChannel, ports *cmPortWatch) error {
	listen, err := ch.CreateID(rdmacm.PortSpaceTCP)
	if err != nil {
		return fmt.Errorf("listen request failed: %w", err)
	}
	defer listen.Close()
	src, err := cmLookup(o.ctx, o.resolve, false, o.Bind, o.Port)
	if err != nil {
		fmt.Fprintf(o.IO.Out, "getrdmaaddr error: %s\n", gaiText(err))
		return ucmaExit(ucmaStatus(err), err)
	}
	if err := listen.Bind(src); err != nil {
		return ucmaExit(-1, err)
	}
	if err := listen.Listen(0); err != nil {
		return ucmaExit(-1, err)
	}
	ports.add(listen)
	s := &cmServer{o: o, devs: map[string]*cmDev{}, ports: ports}
	defer s.close()
	// A listener bound to a device's address opens it now, as librdmacm
	// opens the devices before the server listens: the first connection
	// does not wait for it (about a second under emulation).
	if _, err := listen.Device(); err == nil {
		if _, err := cmDevice(s.devs, listen); err != nil {
			return ucmaExit(-1, err)
		}
	}
	for {
		ev, err := listen.Await(o.ctx, "listen")
		if err != nil {
			s.wg.Wait()
			return err
		}
		if ev.Type != rdmacm.EventConnectRequest {
			continue
		}
		s.wg.Add(1)
		go s.serve(ev)
	}
}

// cmServer is cmtime's server's state: the devices its connections'
// QPs are on.
type cmServer struct {
	o    *cmtimeOptions
	mu   sync.Mutex
	devs map[string]*cmDev
	wg   sync.WaitGroup
	// ports ends the waits when a connection's port goes down.
	ports *cmPortWatch
}

// serve accepts connect request ev and, once its peer disconnects,
// disconnects and destroys it.
func (s *cmServer) serve(ev *rdmacm.Event) {
	defer s.wg.Done()
	id := ev.ID
	defer id.Close()
	s.ports.add(id)
	s.mu.Lock()
	dev, err := cmDevice(s.devs, id)
	s.mu.Unlock()
	var cq *verbs.CQ
	if err == nil {
		cq, err = dev.ctx.CreateCQ(2, nil)
	}
	if err == nil {
		defer cq.Close()
		_, err = id.CreateQP(dev.pd, verbs.QPConfig{SendCQ: cq, RecvCQ: cq,
			Caps: verbs.QPCaps{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
		if err == nil {
			defer id.DestroyQP()
		}
	}
	if err == nil {
		p := rdmacm.ConnParam{ResponderResources: ev.Conn.ResponderResources, InitiatorDepth: ev.Conn.InitiatorDepth, RetryCount: 7, RNRRetryCount: 7}
		err = id.Accept(s.o.ctx, p)
	}
	if err != nil {
		fmt.Fprintf(s.o.IO.Out, "failing connection request\n")
		fmt.Fprintf(s.o.IO.ErrOut, "cmtime: connection from %s: %v\n", id.Peer(), err)
		id.Reject(nil)
		return
	}
	for {
		ev, err := id.Await(s.o.ctx, "connection")
		if err != nil || ev.Type == rdmacm.EventDisconnected {
			break
		}
	}
	id.Disconnect()
}

// close frees the devices once every connection is done.
func (s *cmServer) close() {
	s.wg.Wait()
	for _, d := range s.devs {
		d.pd.Close()
		d.ctx.Close()
	}
}
