package rdma

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// mckeySettle is mckey's pause after the joins: time for the SM to set
// the switches up for the group.
var mckeySettle = 3 * time.Second

// mcTest is one run of mckey.
type mcTest struct {
	o     *mckeyOptions
	ch    *rdmacm.EventChannel
	nodes []*mcNode
	cmDevices
	// ports ends the waits when an endpoint's port goes down.
	ports *cmPortWatch
}

// mcNode is one joined endpoint: its ID, group, verbs objects, and the
// group's QP number, Q_Key and address handle.
type mcNode struct {
	n  int
	id *rdmacm.ID
	udVerbs
	mc        *rdmacm.Multicast
	ah        *verbs.AH
	remoteQPN uint32
	remoteQK  uint32
	armed     bool
}

func mckeyRun(o *mckeyOptions) error {
	if o.Size == 0 {
		o.Count = 0
	}
	if o.Unmapped.IsValid() && o.Bind == "" {
		fmt.Fprintf(o.IO.Out, "unmapped multicast address requires binding to source address\n")
		return &cmdutil.StatusError{Code: 1, Summary: "-M needs -b: an unmapped multicast address is joined from a bound address"}
	}
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return ucmaExit(1, err)
	}
	t := &mcTest{o: o, ch: ch, ports: newCMPortWatch(o.ctx)}
	defer t.ports.stop()
	o.ctx = t.ports.ctx
	for i := range o.Connections {
		n := &mcNode{n: i}
		if n.id, err = ch.CreateID(o.ps); err != nil {
			t.destroy()
			return ucmaExit(1, err)
		}
		t.nodes = append(t.nodes, n)
	}
	err = t.ports.why(t.run())
	var pd *verbs.PortDownError
	portDown := errors.As(err, &pd)
	status := 0
	if err != nil {
		status = ucmaStatus(err)
		if mckeyLeaveDecides(err) {
			// mckey returns what leaving the groups returned, and
			// leaving a group never joined fails: -1.
			status = -1
		}
	}
	for _, n := range t.nodes {
		if n.mc == nil {
			continue
		}
		// Leaving a group on a port gone down is not a second error.
		if lerr := n.mc.Leave(); lerr != nil && !portDown {
			fmt.Fprintf(o.IO.ErrOut, "mckey: failure leaving: %v\n", lerr)
			status = -1
			err = errors.Join(err, lerr)
		}
		n.mc = nil
	}
	t.printf("test complete\n")
	t.destroy()
	t.printf("return status %d\n", status)
	return ucmaExit(status, err)
}

// mckeyLeaveDecides says whether mckey's status for err is its leaving
// the groups' (-1): for everything but a failed address lookup, bind or
// address resolution request, which it returns at once, and for a port
// gone down (where mckey waits on), which is 3.
func mckeyLeaveDecides(err error) bool {
	var pd *verbs.PortDownError
	if errors.As(err, &pd) {
		return false
	}
	var f *ucmaFailure
	if errors.As(err, &f) && f.status != -22 {
		return false
	}
	var e *rdmacm.Error
	if errors.As(err, &e) && e.Event == nil && (e.Op == "bind" || e.Op == "resolve address") {
		return false
	}
	return true
}

func (t *mcTest) printf(format string, a ...any) { fmt.Fprintf(t.o.IO.Out, format, a...) }

func (t *mcTest) run() error {
	o := t.o
	role := "server"
	if o.Sender {
		role = "client"
	}
	t.printf("mckey: starting %s\n", role)
	var src netip.AddrPort
	var err error
	if o.Bind != "" {
		a, err := t.addr(o.Bind)
		if err != nil {
			return err
		}
		src = netip.AddrPortFrom(a, 0)
	}
	var group netip.Addr
	if o.Unmapped.IsValid() {
		group = o.Unmapped
	} else if group, err = t.addr(o.Group); err != nil {
		return err
	}
	t.printf("mckey: joining\n")
	ctx, cancel := context.WithCancel(o.ctx)
	defer cancel()
	errs := make(chan error, len(t.nodes))
	for _, n := range t.nodes {
		go func() {
			err := t.join(ctx, n, src, group)
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
			var e *rdmacm.Error
			if errors.As(err, &e) && e.Event != nil && e.Event.Type.IsError() {
				t.printf("mckey: event: %s, error: %d\n", e.Event.Type, e.Event.Status)
			}
			cancel()
		}
	}
	if first != nil {
		return first
	}
	stop := t.watch()
	defer stop()
	time.Sleep(mckeySettle)
	if o.Count == 0 {
		return nil
	}
	if o.Sender {
		t.printf("initiating data transfers\n")
		for _, n := range t.nodes {
			if err := t.send(n); err != nil {
				return err
			}
		}
	} else {
		t.printf("receiving data transfers\n")
		for _, n := range t.nodes {
			if err := t.receive(n); err != nil {
				return err
			}
		}
	}
	t.printf("data transfers complete\n")
	return nil
}

// addr looks up an address as mckey's getaddrinfo does; a failure
// prints mckey's line and carries getaddrinfo's code.
func (t *mcTest) addr(host string) (netip.Addr, error) {
	a, err := cmLookup(t.o.ctx, t.o.resolve, false, host, "0")
	if err != nil {
		t.printf("getaddrinfo failed (%s) - invalid hostname or IP address\n", gaiText(err))
		return netip.Addr{}, err
	}
	return a.Addr(), nil
}

// join binds (with -b) and resolves node n toward the group, makes its
// verbs objects (and a receiver's receives) and joins it to the group
// (addr_handler, join_handler), printing the group's address.
func (t *mcTest) join(ctx context.Context, n *mcNode, src netip.AddrPort, group netip.Addr) error {
	o := t.o
	if src.IsValid() {
		if err := n.id.Bind(src); err != nil {
			return err
		}
	}
	// An unmapped group's GID is not resolved: the bound ID joins it.
	if !o.Unmapped.IsValid() {
		if err := n.id.ResolveAddr(ctx, src, netip.AddrPortFrom(group, 0), ucmatoseResolveTimeout); err != nil {
			return err
		}
	}
	t.ports.add(n.id)
	if err := t.prepare(n); err != nil {
		return err
	}
	var mc *rdmacm.Multicast
	var ev *rdmacm.Event
	var err error
	if o.Unmapped.IsValid() {
		mc, ev, err = n.id.JoinMulticastIB(ctx, rdmacm.IBAddr{GID: group}, o.SendOnly)
	} else {
		mc, ev, err = n.id.JoinMulticast(ctx, group, o.SendOnly)
	}
	if err != nil {
		return err
	}
	n.mc = mc
	ah := ev.UD.AH
	t.printf("mckey: joined dgid: %s mlid 0x%x sl %d\n", netip.AddrFrom16(ah.DGID), ah.DLID, ah.SL)
	n.remoteQPN, n.remoteQK = ev.UD.QPNum, ev.UD.QKey
	if n.ah, err = n.pd.CreateAH(ah.VerbsAHAttr()); err != nil {
		t.printf("mckey: failure creating address handle\n")
		return err
	}
	return nil
}

// prepare checks the size against the MTU and makes the node's PD, CQ,
// UD QP and MR, posting a receiver's receives (verify_test_params,
// init_node, post_recvs).
func (t *mcTest) prepare(n *mcNode) error {
	o := t.o
	dev, err := t.device(n.id)
	if err != nil {
		return err
	}
	n.udVerbs, err = udSetup{tool: "mckey", count: o.Count, size: o.Size, blockLoopback: o.NoLoopback, sendOnly: o.Sender}.makeUD(dev, n.id, uint64(n.n), t.printf)
	return err
}

// device opens the verbs device of id once for the run.
func (t *mcTest) device(id *rdmacm.ID) (*verbs.Context, error) { return t.open(id) }

// send sends -C datagrams to the group, each with the QP's number as
// immediate data; the last is signaled and waited for, so that they are
// on the wire before the group is left.
func (t *mcTest) send(n *mcNode) error {
	qp := n.id.QP()
	for i := range t.o.Count {
		if err := qp.PostSend(verbs.SendWR{ID: uint64(n.n), Op: verbs.OpSendImm, MR: n.mr, Length: t.o.Size, Imm: qp.Num(),
			Signaled: i == t.o.Count-1, AH: n.ah, RemoteQPN: n.remoteQPN, RemoteQKey: n.remoteQK}); err != nil {
			return fmt.Errorf("connection %d: failed to post sends: %w", n.n, err)
		}
	}
	return t.completions(n, 1)
}

// receive waits for -C datagrams of the group on node n.
func (t *mcTest) receive(n *mcNode) error {
	return t.completions(n, t.o.Count)
}

// completions takes want successful completions from node n's CQ.
func (t *mcTest) completions(n *mcNode, want int) error {
	var wc [8]verbs.WorkCompletion
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
			continue
		}
		if !n.armed {
			if err := n.cq.ReqNotify(false); err != nil {
				return err
			}
			n.armed = true
			continue
		}
		if _, err := n.cch.WaitContext(t.o.ctx); err != nil {
			return fmt.Errorf("connection %d: waiting for completions: %w", n.n, err)
		}
		n.armed = false
	}
	return nil
}

// watch prints the CM's multicast errors and address changes while the
// datagrams go (mckey's event thread) until the returned func is called.
func (t *mcTest) watch() func() {
	ctx, cancel := context.WithCancel(t.o.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := t.ch.GetEvent(ctx)
			if err != nil {
				return
			}
			if ev.Type == rdmacm.EventMulticastError || ev.Type == rdmacm.EventAddrChange {
				t.printf("mckey: event: %s, status: %d\n", ev.Type, ev.Status)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// destroy frees the endpoints and devices and closes the channel.
func (t *mcTest) destroy() {
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
