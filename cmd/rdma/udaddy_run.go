package rdma

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// udTest is one run of udaddy: the channel and the endpoints.
type udTest struct {
	o     *udaddyOptions
	ch    *rdmacm.EventChannel
	nodes []*udNode
	cmDevices
	// ports ends the waits when an endpoint's port goes down.
	ports *cmPortWatch
}

// udNode is one endpoint (udaddy's cmatest_node): its ID, a PD, one CQ,
// the MR its datagrams go from and to (a GRH's room first), and where
// the peer is.
type udNode struct {
	n  int
	id *rdmacm.ID
	udVerbs
	ah        *verbs.AH
	remoteQPN uint32
	remoteQK  uint32
	connected bool
	armedCQ   bool
}

func udaddyRun(o *udaddyOptions) error {
	if o.Size == 0 {
		o.Count = 0 // udaddy: no size, no messages
	}
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return ucmaExit(1, err)
	}
	t := &udTest{o: o, ch: ch, ports: newCMPortWatch(o.ctx)}
	defer t.ports.stop()
	o.ctx = t.ports.ctx
	for i := range o.Connections {
		t.nodes = append(t.nodes, &udNode{n: i})
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

func (t *udTest) printf(format string, a ...any) { fmt.Fprintf(t.o.IO.Out, format, a...) }

// eventFailed prints udaddy's line for an error event (when err is one).
func (t *udTest) eventFailed(err error) {
	var e *rdmacm.Error
	if errors.As(err, &e) && e.Event != nil && e.Event.Type.IsError() {
		t.printf("udaddy: event: %s, error: %d\n", e.Event.Type, e.Event.Status)
	}
}

func (t *udTest) runClient() error {
	o := t.o
	t.printf("udaddy: starting client\n")
	var resolve func(context.Context, *rdmacm.ID) error
	if o.gid {
		dst, err := cmGIDLookup(o.Server, udaddyPort, o.ps)
		var src rdmacm.IBAddr
		if err == nil && o.Bind != "" {
			src, err = cmGIDLookup(o.Bind, "0", o.ps)
		}
		if err != nil {
			t.printf("udaddy: getaddrinfo error: %s\n", gaiText(err))
			return err
		}
		resolve = func(ctx context.Context, id *rdmacm.ID) error {
			return id.ResolveAddrIB(ctx, src, dst, ucmatoseResolveTimeout)
		}
	} else {
		dst, err := cmLookup(o.ctx, o.resolve, o.numeric, o.Server, udaddyPort)
		var src netip.AddrPort
		if err == nil && o.Bind != "" {
			src, err = cmLookup(o.ctx, o.resolve, o.numeric, o.Bind, "0")
		}
		if err != nil {
			t.printf("udaddy: getaddrinfo error: %s\n", gaiText(err))
			return err
		}
		resolve = func(ctx context.Context, id *rdmacm.ID) error {
			return id.ResolveAddr(ctx, src, dst, ucmatoseResolveTimeout)
		}
	}
	t.printf("udaddy: connecting\n")
	ctx, cancel := context.WithCancel(o.ctx)
	defer cancel()
	errs := make(chan error, len(t.nodes))
	for _, n := range t.nodes {
		go func() {
			err := t.resolve(ctx, n, resolve)
			if err != nil {
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
	if first != nil || o.Count == 0 {
		return first
	}
	t.printf("initiating data transfers\n")
	for _, n := range t.nodes {
		if err := t.postSends(n, false); err != nil {
			return err
		}
	}
	t.printf("receiving data transfers\n")
	if err := t.pollAll(o.Count); err != nil {
		return err
	}
	t.printf("data transfers complete\n")
	return nil
}

// resolve makes client endpoint n: the address, the type of service, the
// route, the node's verbs objects and receives, then the SIDR exchange,
// whose answer says where the server's QP is.
func (t *udTest) resolve(ctx context.Context, n *udNode, resolveAddr func(context.Context, *rdmacm.ID) error) error {
	o := t.o
	if err := resolveAddr(ctx, n.id); err != nil {
		return err
	}
	t.ports.add(n.id)
	if o.SetTOS {
		if err := n.id.SetTOS(o.TOS); err != nil {
			fmt.Fprintf(o.IO.ErrOut, "udaddy: set TOS option failed: %v\n", err)
		}
	}
	if err := n.id.ResolveRoute(ctx, ucmatoseResolveTimeout); err != nil {
		return err
	}
	if err := t.prepare(n); err != nil {
		return err
	}
	ev, err := n.id.Connect(ctx, rdmacm.ConnParam{})
	if err != nil {
		return err
	}
	n.remoteQPN, n.remoteQK = ev.UD.QPNum, ev.UD.QKey
	if n.ah, err = n.pd.CreateAH(ev.UD.AH.VerbsAHAttr()); err != nil {
		return fmt.Errorf("failure creating address handle: %w", err)
	}
	n.connected = true
	return nil
}

// prepare checks the message size against the path MTU, then makes the
// node's verbs objects and posts its receives (verify_test_params,
// init_node, post_recvs).
func (t *udTest) prepare(n *udNode) error {
	o := t.o
	dev, err := t.device(n.id)
	if err != nil {
		return err
	}
	n.udVerbs, err = udSetup{tool: "udaddy", count: o.Count, size: o.Size}.makeUD(dev, n.id, uint64(n.n), t.printf)
	return err
}

// device opens the verbs device of id once for the run.
func (t *udTest) device(id *rdmacm.ID) (*verbs.Context, error) { return t.open(id) }

// postSends sends -C datagrams of the node's to the peer, each with this
// QP's number as its immediate data (the server replies to it).
func (t *udTest) postSends(n *udNode, signaled bool) error {
	if !n.connected {
		return nil
	}
	qp := n.id.QP()
	for range t.o.Count {
		if err := qp.PostSend(verbs.SendWR{ID: uint64(n.n), Op: verbs.OpSendImm, MR: n.mr, Length: t.o.Size,
			Imm: qp.Num(), Signaled: signaled, AH: n.ah, RemoteQPN: n.remoteQPN, RemoteQKey: n.remoteQK}); err != nil {
			return fmt.Errorf("connection %d: failed to post sends: %w", n.n, err)
		}
	}
	return nil
}

// pollAll takes want completions from each connected node's CQ
// (poll_cqs); on the server a node without a reply address gets one
// from its first receive.
func (t *udTest) pollAll(want int) error {
	var wc [8]verbs.WorkCompletion
	for _, n := range t.nodes {
		if !n.connected {
			continue
		}
		for done := 0; done < want; {
			k, err := n.cq.Poll(wc[:min(len(wc), want-done)])
			if err != nil {
				return err
			}
			for _, w := range wc[:k] {
				if err := w.Err(n.cq); err != nil {
					return fmt.Errorf("connection %d: completion %d: %w", n.n, done, err)
				}
				done++
			}
			if k > 0 {
				if n.ah == nil {
					if err := t.replyAH(n, wc[0]); err != nil {
						t.printf("udaddy: failed to create reply AH\n")
						return fmt.Errorf("connection %d: the reply's address: %w", n.n, err)
					}
				}
				continue
			}
			if err := n.wait(t.o.ctx); err != nil {
				return fmt.Errorf("connection %d: waiting for completions: %w", n.n, err)
			}
		}
	}
	return nil
}

// wait waits for the node's CQ's next completion event (arming it
// first; the caller polls again after either).
func (n *udNode) wait(ctx context.Context) error {
	if !n.armedCQ {
		n.armedCQ = true
		return n.cq.ReqNotify(false)
	}
	if _, err := n.cch.WaitContext(ctx); err != nil {
		return err
	}
	n.armedCQ = false
	return nil
}

// replyAH makes the server's address handle back to the sender of the
// datagram of wc (create_reply_ah): the GRH at the start of the receive
// buffer, the sender's QP number in the immediate data, and this QP's
// own Q_Key.
func (t *udTest) replyAH(n *udNode, wc verbs.WorkCompletion) error {
	d, err := n.id.Device()
	if err != nil {
		return err
	}
	pn := n.id.Addr().Port
	if pn < 1 || pn > len(d.Ports) {
		return fmt.Errorf("the ID's port %d is not among the %d of %s", pn, len(d.Ports), d.Name)
	}
	a, err := verbs.ReplyAHAttr(d.Ports[pn-1], pn, wc, n.mr.Bytes()[:verbs.GRHSize])
	if err != nil {
		return err
	}
	if n.ah, err = n.pd.CreateAH(a); err != nil {
		return err
	}
	qa, err := n.id.InitQPAttr(verbs.QPStateInit)
	if err != nil {
		return err
	}
	n.remoteQPN, n.remoteQK = wc.Imm, qa.QKey
	return nil
}

func (t *udTest) runServer() error {
	o := t.o
	t.printf("udaddy: starting server\n")
	listen, err := t.ch.CreateID(o.ps)
	if err != nil {
		return fmt.Errorf("listen request failed: %w", err)
	}
	defer listen.Close()
	if o.gid {
		src, err := cmGIDLookup(o.Bind, udaddyPort, o.ps)
		if err != nil {
			t.printf("udaddy: getrdmaaddr error: %s\n", gaiText(err))
			return err
		}
		if err := listen.BindIB(src); err != nil {
			return err
		}
	} else {
		src, err := cmLookup(o.ctx, o.resolve, o.numeric, o.Bind, udaddyPort)
		if err != nil {
			t.printf("udaddy: getrdmaaddr error: %s\n", gaiText(err))
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
	// udaddy goes on to the data whatever its connect events ended
	// with; a failed request was answered with a rejection.
	for next, left := 0, len(t.nodes); left > 0; {
		ev, err := listen.Await(o.ctx, "listen")
		if err != nil && o.ctx.Err() != nil {
			return err // the port went down, or the run was stopped
		}
		if err != nil {
			t.eventFailed(err)
			break
		}
		if ev.Type != rdmacm.EventConnectRequest {
			continue
		}
		if next == len(t.nodes) {
			t.printf("udaddy: failing connection request\n")
			ev.ID.Reject(nil)
			ev.ID.Close()
			continue
		}
		n := t.nodes[next]
		next++
		left--
		n.id = ev.ID
		if err := t.accept(n); err != nil {
			t.printf("udaddy: failing connection request\n")
			fmt.Fprintf(o.IO.ErrOut, "udaddy: connection %d: %v\n", n.n, err)
			n.id.Reject(nil)
		}
	}
	if o.Count == 0 {
		return nil
	}
	t.printf("receiving data transfers\n")
	if err := t.pollAll(o.Count); err != nil {
		return err
	}
	t.printf("sending replies\n")
	for _, n := range t.nodes {
		if err := t.postSends(n, true); err != nil {
			return err
		}
	}
	if err := t.pollAll(o.Count); err != nil {
		return err
	}
	t.printf("data transfers complete\n")
	return nil
}

// accept answers connect request n with its QP (connect_handler).
func (t *udTest) accept(n *udNode) error {
	t.ports.add(n.id)
	if err := t.prepare(n); err != nil {
		return err
	}
	if err := n.id.Accept(t.o.ctx, rdmacm.ConnParam{}); err != nil {
		return err
	}
	n.connected = true
	return nil
}

// destroy frees the endpoints and devices and closes the channel.
func (t *udTest) destroy() {
	for _, n := range t.nodes {
		if n.ah != nil {
			n.ah.Close()
		}
		if n.id != nil {
			n.id.Close()
		}
		if n.mr != nil {
			n.mr.Close()
		}
		if n.cq != nil {
			n.cq.Close()
		}
		if n.cch != nil {
			n.cch.Close()
		}
		if n.pd != nil {
			n.pd.Close()
		}
	}
	t.closeAll()
	t.ch.Close()
}
