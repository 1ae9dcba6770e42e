package rdma

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// ucmatoseResolveTimeout is cmatose's 2000 ms for address and route
// resolution.
const ucmatoseResolveTimeout = 2 * time.Second

// ucmaTest is one run of ucmatose: the channel, the connections, and
// the verbs devices they are on.
type ucmaTest struct {
	o     *ucmatoseOptions
	ch    *rdmacm.EventChannel
	nodes []*ucmaNode
	devs  map[string]*ucmaDev
	// ports ends the waits when a connection's port goes down.
	ports *cmPortWatch
	// mu guards nodes' IDs and devs while the connections are made.
	mu sync.Mutex
}

// ucmaNode is one connection (struct cmatest_node): its ID, a PD, a send
// and a receive CQ, and the MR its messages go from and to.
type ucmaNode struct {
	n         int
	id        *rdmacm.ID
	dev       *ucmaDev
	pd        *verbs.PD
	cq        [2]*verbs.CQ
	mr        *verbs.MR
	connected bool
	// established says the connection was made: a DISCONNECTED event
	// for it is due at the end.
	established bool
	// pending are the ID's events seen while the data went, for the
	// disconnect to find.
	pending []*rdmacm.Event
}

// The CQs of a node (cmatose's CQ_INDEX).
const (
	ucmaSendCQ = 0
	ucmaRecvCQ = 1
)

// ucmaDev is a verbs device the connections use, with one completion
// channel for their CQs.
type ucmaDev struct {
	ctx   *verbs.Context
	cch   *verbs.CompChannel
	attr  verbs.Attr
	armed map[*verbs.CQ]bool
}

// ucmaFailure is an error and the status cmatose returns for it: the
// event's status, getaddrinfo's code, or -1.
type ucmaFailure struct {
	status int
	err    error
}

func (f *ucmaFailure) Error() string { return f.err.Error() }
func (f *ucmaFailure) Unwrap() error { return f.err }

// ucmaStatus is the status cmatose returns for err: an error event's
// status, the code of an address lookup that failed, and -1 for the
// rest (a librdmacm or libibverbs call that failed). A port gone down,
// where cmatose waits on, is 3, the exit of a tool that could not do
// its work.
func ucmaStatus(err error) int {
	var f *ucmaFailure
	if errors.As(err, &f) {
		return f.status
	}
	var pd *verbs.PortDownError
	if errors.As(err, &pd) {
		return cmdutil.ExitFailure
	}
	var e *rdmacm.Error
	if errors.As(err, &e) && e.Event != nil && e.Event.Type.IsError() {
		return int(e.Event.Status)
	}
	return -1
}

// ucmaExit is how the tool ends for status and err: nil for 0, else the
// error with status's low byte as the exit code, as cmatose's return
// from main (3 when that byte is 0).
func ucmaExit(status int, err error) error {
	if status == 0 && err == nil {
		return nil
	}
	if err == nil {
		err = fmt.Errorf("status %d", status)
	}
	code := status & 0xff
	if code == 0 {
		code = cmdutil.ExitFailure
	}
	return &cmdutil.StatusError{Code: code, Summary: err.Error()}
}

func ucmatoseRun(o *ucmatoseOptions) error {
	if o.Size == 0 {
		o.Count = 0 // cmatose: no size, no messages
	}
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return ucmaExit(1, err)
	}
	t := &ucmaTest{o: o, ch: ch, devs: map[string]*ucmaDev{}, ports: newCMPortWatch(o.ctx)}
	defer t.ports.stop()
	o.ctx = t.ports.ctx
	for i := range o.Connections {
		t.nodes = append(t.nodes, &ucmaNode{n: i})
	}
	if o.Server != "" {
		for _, n := range t.nodes {
			if n.id, err = ch.CreateID(o.ps); err != nil {
				t.destroy()
				return ucmaExit(1, err)
			}
		}
		err = t.runClient()
	} else {
		err = t.runServer()
	}
	err = t.ports.why(err)
	status := 0
	if err != nil {
		status = ucmaStatus(err)
	}
	t.printf("test complete\n")
	t.destroy()
	t.printf("return status %d\n", status)
	return ucmaExit(status, err)
}

func (t *ucmaTest) printf(format string, a ...any) { fmt.Fprintf(t.o.IO.Out, format, a...) }

// lookup resolves host and port as cmatose's getaddrinfo does (cmLookup).
func (t *ucmaTest) lookup(host, port string) (netip.AddrPort, error) {
	return cmLookup(t.o.ctx, t.o.resolve, t.o.numeric, host, port)
}

// eventFailed prints cmatose's line for an error event that ended a
// connection (when err is one).
func (t *ucmaTest) eventFailed(err error) {
	var e *rdmacm.Error
	if errors.As(err, &e) && e.Event != nil && e.Event.Type.IsError() {
		t.printf("cmatose: event: %s, error: %d\n", e.Event.Type, e.Event.Status)
	}
}

func (t *ucmaTest) runClient() error {
	o := t.o
	t.printf("cmatose: starting client\n")
	var src, dst netip.AddrPort
	var err error
	if !o.gid {
		dst, err = t.lookup(o.Server, o.Port)
		if err == nil && o.Bind != "" {
			src, err = t.lookup(o.Bind, "0")
		}
	}
	if err != nil {
		t.printf("cmatose: getaddrinfo error: %s\n", gaiText(err))
		return err
	}
	resolve := func(ctx context.Context, id *rdmacm.ID) error {
		return id.ResolveAddr(ctx, src, dst, ucmatoseResolveTimeout)
	}
	if o.gid {
		dstIB, err := cmGIDLookup(o.Server, o.Port, o.ps)
		var srcIB rdmacm.IBAddr
		if err == nil && o.Bind != "" {
			srcIB, err = cmGIDLookup(o.Bind, "0", o.ps)
		}
		if err != nil {
			t.printf("cmatose: getaddrinfo error: %s\n", gaiText(err))
			return err
		}
		resolve = func(ctx context.Context, id *rdmacm.ID) error {
			return id.ResolveAddrIB(ctx, srcIB, dstIB, ucmatoseResolveTimeout)
		}
	}
	t.printf("cmatose: connecting\n")
	err = t.connectAll(func(ctx context.Context, n *ucmaNode) error { return t.connect(ctx, n, resolve) })
	if err == nil && o.Count > 0 {
		err = t.clientData()
	}
	if err == nil && o.Migrate {
		err = t.migrate(nil)
	}
	if err != nil {
		t.disconnectAll()
		return err
	}
	return t.awaitDisconnects(true)
}

func (t *ucmaTest) clientData() error {
	return t.withWatch(func(ctx context.Context) error {
		t.printf("receiving data transfers\n")
		if err := t.pollAll(ctx, ucmaRecvCQ); err != nil {
			return err
		}
		t.printf("sending replies\n")
		if err := t.postAll(); err != nil {
			return err
		}
		t.printf("data transfers complete\n")
		return nil
	})
}

// connect makes connection n: the address, the options, the route, the
// node's verbs objects and receives, then the connection.
func (t *ucmaTest) connect(ctx context.Context, n *ucmaNode, resolve func(context.Context, *rdmacm.ID) error) error {
	o := t.o
	if err := resolve(ctx, n.id); err != nil {
		return err
	}
	t.ports.add(n.id)
	if o.SetTOS {
		if err := n.id.SetTOS(o.TOS); err != nil {
			fmt.Fprintf(o.IO.ErrOut, "cmatose: set TOS option failed: %v\n", err)
		}
	}
	if o.SetAck {
		if err := n.id.SetAckTimeout(o.AckTimeout); err != nil {
			fmt.Fprintf(o.IO.ErrOut, "cmatose: set ack timeout option failed: %v\n", err)
		}
	}
	if err := n.id.ResolveRoute(ctx, ucmatoseResolveTimeout); err != nil {
		return err
	}
	if err := t.initNode(n); err != nil {
		return err
	}
	if err := t.postRecvs(n); err != nil {
		return err
	}
	_, err := n.id.Connect(ctx, rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 5})
	return err
}

// connectAll makes every node's connection with connect, each in its
// own goroutine (cmatose's events of all of them come in any order);
// the first failure ends the others and is the error, after cmatose's
// line for it.
func (t *ucmaTest) connectAll(connect func(context.Context, *ucmaNode) error) error {
	ctx, cancel := context.WithCancel(t.o.ctx)
	defer cancel()
	errs := make(chan error, len(t.nodes))
	for _, n := range t.nodes {
		go func() {
			err := connect(ctx, n)
			if err == nil {
				n.connected, n.established = true, true
			} else {
				err = fmt.Errorf("connection %d: %w", n.n, err)
			}
			errs <- err
		}()
	}
	var first error
	for range t.nodes {
		if err := <-errs; err != nil && first == nil {
			first = err
			t.eventFailed(err)
			cancel()
		}
	}
	return first
}

// initNode makes node n's PD, CQs, QP and message MR (init_node).
func (t *ucmaTest) initNode(n *ucmaNode) error {
	o := t.o
	dev, err := t.device(n.id)
	if err != nil {
		return err
	}
	n.dev = dev
	if n.pd, err = dev.ctx.AllocPD(); err != nil {
		return err
	}
	cqe := max(o.Count, 1)
	for i := range n.cq {
		if n.cq[i], err = dev.ctx.CreateCQ(cqe, dev.cch); err != nil {
			return err
		}
	}
	cfg := verbs.QPConfig{SendCQ: n.cq[ucmaSendCQ], RecvCQ: n.cq[ucmaRecvCQ], SignalAll: true,
		Caps: verbs.QPCaps{MaxSendWR: cqe, MaxRecvWR: cqe, MaxSendSGE: 1, MaxRecvSGE: 1}}
	if _, err := n.id.CreateQP(n.pd, cfg); err != nil {
		return fmt.Errorf("unable to create QP: %w", err)
	}
	if o.Count > 0 {
		if n.mr, err = n.pd.AllocMR(o.Size, verbs.AccessLocalWrite); err != nil {
			return err
		}
	}
	return nil
}

// device opens the verbs device of id once for the run.
func (t *ucmaTest) device(id *rdmacm.ID) (*ucmaDev, error) {
	d, err := id.Device()
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if dev := t.devs[d.Name]; dev != nil {
		return dev, nil
	}
	ctx, err := id.OpenDevice()
	if err != nil {
		return nil, err
	}
	cch, err := ctx.CreateCompChannel()
	if err != nil {
		ctx.Close()
		return nil, err
	}
	dev := &ucmaDev{ctx: ctx, cch: cch, attr: d.Attr, armed: map[*verbs.CQ]bool{}}
	t.devs[d.Name] = dev
	return dev, nil
}

func (t *ucmaTest) postRecvs(n *ucmaNode) error {
	for range t.o.Count {
		if err := n.id.QP().PostRecv(verbs.RecvWR{ID: uint64(n.n), MR: n.mr, Length: t.o.Size}); err != nil {
			return fmt.Errorf("failed to post receives: %w", err)
		}
	}
	return nil
}

// postAll posts -C sends on each connection (post_sends).
func (t *ucmaTest) postAll() error {
	for _, n := range t.nodes {
		if !n.connected {
			continue
		}
		for range t.o.Count {
			if err := n.id.QP().PostSend(verbs.SendWR{ID: uint64(n.n), Op: verbs.OpSend, MR: n.mr, Length: t.o.Size}); err != nil {
				return fmt.Errorf("connection %d: failed to post sends: %w", n.n, err)
			}
		}
	}
	return nil
}

// pollAll takes -C completions from CQ index of each connection
// (poll_cqs), waiting on the device's completion channel until ctx ends.
func (t *ucmaTest) pollAll(ctx context.Context, index int) error {
	for _, n := range t.nodes {
		if !n.connected {
			continue
		}
		if err := n.dev.completions(ctx, n.cq[index], t.o.Count); err != nil {
			what := "send"
			if index == ucmaRecvCQ {
				what = "receive"
			}
			return fmt.Errorf("connection %d: waiting for the %s completions: %w", n.n, what, err)
		}
	}
	return nil
}

// completions takes want successful completions from cq.
func (d *ucmaDev) completions(ctx context.Context, cq *verbs.CQ, want int) error {
	var wc [8]verbs.WorkCompletion
	for done := 0; done < want; {
		k, err := cq.Poll(wc[:min(len(wc), want-done)])
		if err != nil {
			return err
		}
		for _, w := range wc[:k] {
			if err := w.Err(cq); err != nil {
				return ucmaFailedCompletion(ctx, done, err)
			}
			done++
		}
		if k > 0 {
			continue
		}
		if !d.armed[cq] {
			if err := cq.ReqNotify(false); err != nil {
				return err
			}
			d.armed[cq] = true
			continue // a completion may have come before the arming
		}
		got, err := d.cch.WaitContext(ctx)
		if err != nil {
			if cause := context.Cause(ctx); cause != nil {
				return cause
			}
			return err
		}
		d.armed[got] = false
	}
	return nil
}

// ucmaFailedCompletion is the error of a failed completion. On
// Soft-iWARP a peer that is gone flushes the posted receives a moment
// before its CM event says it disconnected: a flush waits up to
// cmFlushWait for that event, and then is the disconnect.
func ucmaFailedCompletion(ctx context.Context, done int, err error) error {
	if cause := cmCauseWithin(ctx); errors.Is(cause, errUcmaPeerGone) {
		return cause
	}
	return fmt.Errorf("completion %d: %w", done, err)
}

// errUcmaPeerGone ends the data transfers when a connection's peer
// disconnects or its device goes.
var errUcmaPeerGone = errors.New("the peer disconnected")

// withWatch runs data with a context that ends when a connected ID gets
// a CM event (a disconnect, the device gone): cmatose, polling its CQs,
// would wait forever. The events are kept in the nodes for the
// disconnect.
func (t *ucmaTest) withWatch(data func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(t.o.ctx)
	watch, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, n := range t.nodes {
		if !n.connected {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ev, err := n.id.Await(watch, "connection")
				if ev == nil {
					return
				}
				mu.Lock()
				n.pending = append(n.pending, ev)
				mu.Unlock()
				if err != nil || ev.Type == rdmacm.EventDisconnected {
					cancel(fmt.Errorf("connection %d: %s: %w", n.n, ev, errUcmaPeerGone))
					return
				}
			}
		}()
	}
	err := data(ctx)
	stop()
	wg.Wait()
	cancel(nil)
	return err
}

// migrate moves the listener (when there is one) and the connections to
// a new channel (migrate_channel).
func (t *ucmaTest) migrate(listen *rdmacm.ID) error {
	t.printf("migrating to new event channel\n")
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return err
	}
	ids := []*rdmacm.ID{}
	if listen != nil {
		ids = append(ids, listen)
	}
	for _, n := range t.nodes {
		if n.id != nil {
			ids = append(ids, n.id)
		}
	}
	for _, id := range ids {
		if err := id.Migrate(ch); err != nil {
			ch.Close()
			return fmt.Errorf("failure migrating to channel: %w", err)
		}
	}
	t.ch.Close()
	t.ch = ch
	return nil
}

// disconnectAll disconnects every connected node.
func (t *ucmaTest) disconnectAll() {
	for _, n := range t.nodes {
		if n.connected {
			n.connected = false
			n.id.Disconnect()
		}
	}
}

// awaitDisconnects waits for each established connection's DISCONNECTED
// event (disconnect_events), disconnecting this side then when reply
// says (the client: the server disconnects first).
func (t *ucmaTest) awaitDisconnects(reply bool) error {
	for _, n := range t.nodes {
		if !n.established {
			continue
		}
		for {
			var ev *rdmacm.Event
			var err error
			if len(n.pending) > 0 {
				ev, n.pending = n.pending[0], n.pending[1:]
			} else if ev, err = n.id.Await(t.o.ctx, "wait for the disconnect"); ev == nil {
				return fmt.Errorf("connection %d: %w", n.n, err)
			}
			if ev.Type == rdmacm.EventDisconnected {
				if reply {
					n.connected = false
					n.id.Disconnect()
				}
				break
			}
			if ev.Type == rdmacm.EventDeviceRemoval {
				break // cmatose: cleanup at the end
			}
		}
	}
	return nil
}

func (t *ucmaTest) runServer() error {
	o := t.o
	t.printf("cmatose: starting server\n")
	listen, err := t.ch.CreateID(o.ps)
	if err != nil {
		return fmt.Errorf("listen request failed: %w", err)
	}
	defer listen.Close()
	if o.gid {
		src, err := cmGIDLookup(o.Bind, o.Port, o.ps)
		if err != nil {
			t.printf("cmatose: getrdmaaddr error: %s\n", gaiText(err))
			return err
		}
		if err := listen.BindIB(src); err != nil {
			return err
		}
	} else {
		src, err := t.lookup(o.Bind, o.Port)
		if err != nil {
			t.printf("cmatose: getrdmaaddr error: %s\n", gaiText(err))
			return err
		}
		if err := listen.Bind(src); err != nil {
			return err
		}
	}
	if err := listen.Listen(0); err != nil {
		return err
	}
	t.ports.add(listen)
	if err := t.acceptAll(listen); err != nil {
		return err
	}
	if o.Count > 0 {
		err := t.withWatch(func(ctx context.Context) error {
			t.printf("initiating data transfers\n")
			if err := t.postAll(); err != nil {
				return err
			}
			t.printf("completing sends\n")
			if err := t.pollAll(ctx, ucmaSendCQ); err != nil {
				return err
			}
			t.printf("receiving data transfers\n")
			if err := t.pollAll(ctx, ucmaRecvCQ); err != nil {
				return err
			}
			t.printf("data transfers complete\n")
			return nil
		})
		if err != nil {
			t.disconnectAll()
			return err
		}
	}
	if o.Migrate {
		if err := t.migrate(listen); err != nil {
			t.disconnectAll()
			return err
		}
	}
	t.printf("cmatose: disconnecting\n")
	t.disconnectAll()
	err = t.awaitDisconnects(false)
	t.printf("disconnected\n")
	return err
}

// acceptAll takes -c connect requests on listen and accepts each
// (connect_handler); one more is rejected.
func (t *ucmaTest) acceptAll(listen *rdmacm.ID) error {
	reqs := make(chan *rdmacm.Event)
	ctx, cancel := context.WithCancel(t.o.ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel() // the listener's wait ends, and with it its goroutine
		wg.Wait()
	}()
	wg.Add(1)
	listenErr := make(chan error, 1)
	go func() {
		defer wg.Done()
		for {
			ev, err := listen.Await(ctx, "listen")
			if err != nil {
				listenErr <- err
				return
			}
			if ev.Type != rdmacm.EventConnectRequest {
				continue
			}
			select {
			case reqs <- ev:
			case <-ctx.Done():
				ev.ID.Reject(nil)
				ev.ID.Close()
				return
			}
		}
	}()
	errs := make(chan error, len(t.nodes))
	next, left := 0, len(t.nodes)
	var first error
	for left > 0 && first == nil {
		select {
		case ev := <-reqs:
			if next == len(t.nodes) {
				t.printf("cmatose: failing connection request\n")
				ev.ID.Reject(nil)
				ev.ID.Close()
				continue
			}
			n := t.nodes[next]
			next++
			t.mu.Lock()
			n.id = ev.ID
			t.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := t.accept(ctx, n, ev)
				if err == nil {
					n.connected, n.established = true, true
				} else {
					err = fmt.Errorf("connection %d: %w", n.n, err)
				}
				errs <- err
			}()
		case err := <-errs:
			left--
			if err != nil {
				first = err
			}
		case err := <-listenErr:
			first = err
		}
	}
	if first != nil {
		t.eventFailed(first)
	}
	return first
}

// accept accepts connect request ev on node n: its verbs objects and
// receives first, then the accept with librdmacm's defaults (the
// request's RDMA READ depths within the device's, 7 retries).
func (t *ucmaTest) accept(ctx context.Context, n *ucmaNode, ev *rdmacm.Event) error {
	o := t.o
	t.ports.add(n.id)
	if err := t.initNode(n); err != nil {
		t.printf("cmatose: failing connection request\n")
		n.id.Reject(nil)
		return err
	}
	if o.SetAck {
		if err := n.id.SetAckTimeout(o.AckTimeout); err != nil {
			fmt.Fprintf(o.IO.ErrOut, "cmatose: set ack timeout option failed: %v\n", err)
		}
	}
	if err := t.postRecvs(n); err != nil {
		t.printf("cmatose: failing connection request\n")
		n.id.Reject(nil)
		return err
	}
	p := rdmacm.ConnParam{ResponderResources: ev.Conn.ResponderResources, InitiatorDepth: ev.Conn.InitiatorDepth,
		RetryCount: 7, RNRRetryCount: 7}
	if a := n.dev.attr; a.MaxQPRdAtom > 0 {
		p.ResponderResources = uint8(min(int(p.ResponderResources), a.MaxQPRdAtom))
	}
	if a := n.dev.attr; a.MaxQPInitRdAtom > 0 {
		p.InitiatorDepth = uint8(min(int(p.InitiatorDepth), a.MaxQPInitRdAtom))
	}
	return n.id.Accept(ctx, p)
}

// gaiText is the text of an address lookup's failure.
func gaiText(err error) string {
	var f *ucmaFailure
	if errors.As(err, &f) {
		return f.err.Error()
	}
	return err.Error()
}

// destroy frees the connections and devices and closes the channel
// (destroy_nodes, rdma_destroy_event_channel).
func (t *ucmaTest) destroy() {
	for _, n := range t.nodes {
		if n.id != nil {
			n.id.Close()
		}
		if n.mr != nil {
			n.mr.Close()
		}
		for _, cq := range n.cq {
			if cq != nil {
				cq.Close()
			}
		}
		if n.pd != nil {
			n.pd.Close()
		}
	}
	for _, d := range t.devs {
		d.cch.Close()
		d.ctx.Close()
	}
	t.ch.Close()
}
