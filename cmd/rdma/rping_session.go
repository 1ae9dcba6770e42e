package rdma

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// rping's queue sizes and timeouts (rping.c: RPING_SQ_DEPTH, two
// receives, address and route resolution in 2 s).
const (
	rpingSQDepth        = 16
	rpingResolveTimeout = 2 * time.Second
)

func rpingResolve(ctx context.Context, host string) (netip.Addr, error) {
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, err
	}
	if len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("no address")
	}
	return addrs[0].Unmap(), nil
}

// rpingRun is rping: the client or the server.
func rpingRun(o *rpingOptions) error {
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return err
	}
	defer ch.Close()
	id, err := ch.CreateID(rdmacm.PortSpaceTCP)
	if err != nil {
		return err
	}
	defer id.Close()
	o.debugf("created cm_id %d\n", 0)
	if o.Client {
		return rpingRunClient(o, id)
	}
	return rpingRunServer(o, ch, id)
}

func rpingRunClient(o *rpingOptions, id *rdmacm.ID) error {
	if err := id.ResolveAddr(o.ctx, o.src, o.dst, rpingResolveTimeout); err != nil {
		return err
	}
	if err := id.ResolveRoute(o.ctx, rpingResolveTimeout); err != nil {
		return err
	}
	o.debugf("rdma_resolve_addr - rdma_resolve_route successful\n")
	v, err := newRpingVerbs(o, id, true)
	if err != nil {
		return err
	}
	defer v.close()
	p := rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}
	if o.SelfQP {
		p.QPNum = v.qp.Num()
	}
	ev, err := id.Connect(o.ctx, p)
	if err != nil {
		return err
	}
	if o.SelfQP && ev.Type == rdmacm.EventConnectResponse {
		if err := rpingSelfModify(id, v.qp); err != nil {
			return err
		}
		if err := id.Establish(); err != nil {
			return err
		}
	} else if o.SelfQP && v.qp.State() < verbs.QPStateRTS {
		// iWARP: the kernel moved the QP when it connected.
		v.qp.Moved(verbs.QPStateRTS)
	}
	o.debugf("rdma_connect successful\n")
	ctx, stop := rpingWatch(o.ctx, id, rpingPortWatch(v.dev, id.Addr().Port))
	defer stop()
	err = rpingClient(ctx, v, o.Count, o.Verbose, o.Validate, o.IO.Out)
	if errors.Is(context.Cause(ctx), errRpingDisconnected) {
		fmt.Fprintf(o.IO.ErrOut, "client DISCONNECT EVENT...\n")
	}
	if derr := v.disconnect(id); err == nil && derr != nil && !errors.Is(context.Cause(ctx), errRpingDisconnected) {
		err = derr
	}
	return err
}

func rpingRunServer(o *rpingOptions, ch *rdmacm.EventChannel, listen *rdmacm.ID) error {
	if err := listen.Bind(o.dst); err != nil {
		return err
	}
	o.debugf("rdma_bind_addr successful\n")
	o.debugf("rdma_listen\n")
	if err := listen.Listen(3); err != nil {
		return err
	}
	if !o.Persistent {
		ev, err := listen.Await(o.ctx, "listen")
		if err != nil {
			return err
		}
		return rpingServe(o, ev.ID)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		ev, err := listen.Await(o.ctx, "listen")
		if err != nil {
			return err
		}
		if ev.Type != rdmacm.EventConnectRequest {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := rpingServe(o, ev.ID); err != nil {
				fmt.Fprintf(o.IO.ErrOut, "rping: %v\n", err)
			}
		}()
	}
}

// rpingServe serves one connection request.
func rpingServe(o *rpingOptions, id *rdmacm.ID) error {
	defer id.Close()
	o.debugf("child cma %d\n", 0)
	v, err := newRpingVerbs(o, id, false)
	if err != nil {
		id.Reject(nil)
		return err
	}
	defer v.close()
	p := rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}
	if o.SelfQP {
		if err := rpingSelfModify(id, v.qp); err != nil {
			id.Reject(nil)
			return err
		}
		p.QPNum = v.qp.Num()
	}
	o.debugf("accepting client connection request\n")
	if err := id.Accept(o.ctx, p); err != nil {
		return err
	}
	if o.SelfQP && v.qp.State() < verbs.QPStateRTS {
		v.qp.Moved(verbs.QPStateRTS)
	}
	ctx, stop := rpingWatch(o.ctx, id, rpingPortWatch(v.dev, id.Addr().Port))
	defer stop()
	err = rpingServer(ctx, v, o.Verbose, o.IO.Out)
	if errors.Is(context.Cause(ctx), errRpingDisconnected) {
		fmt.Fprintf(o.IO.ErrOut, "server DISCONNECT EVENT...\n")
	}
	if derr := v.disconnect(id); err == nil && derr != nil && !errors.Is(context.Cause(ctx), errRpingDisconnected) {
		err = derr
	}
	return err
}

// rpingSelfModify moves a QP rping made itself (-q) through INIT, RTR
// and RTS with the CM's attributes (rping_self_modify_qp); on iWARP,
// where the kernel moves it to RTS at the connection, only INIT.
func rpingSelfModify(id *rdmacm.ID, qp *verbs.QP) error {
	d, err := id.Device()
	if err != nil {
		return err
	}
	a, err := id.InitQPAttr(verbs.QPStateInit)
	if err != nil {
		return err
	}
	if err := qp.Reinit(a.InitAttr()); err != nil {
		return err
	}
	if d.Transport == verbs.TransportIWARP {
		return nil
	}
	if a, err = id.InitQPAttr(verbs.QPStateRTR); err != nil {
		return err
	}
	if err := qp.ReadyToReceive(a.RTRAttr()); err != nil {
		return err
	}
	if a, err = id.InitQPAttr(verbs.QPStateRTS); err != nil {
		return err
	}
	return qp.ReadyToSend(a.RTSAttr())
}

// rpingWatch watches the connection's CM events and its port: the
// context it returns ends with errRpingDisconnected when the peer
// disconnects, with the error of an error event (the device gone), or
// with what portDown returns (the port gone down: a link that goes down
// under a transfer sends no CM event to the side that waits for a
// message, and no completion fails).
func rpingWatch(parent context.Context, id *rdmacm.ID, portDown func(context.Context) error) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			ev, err := id.Await(ctx, "connection")
			if err != nil {
				cancel(err)
				return
			}
			if ev.Type == rdmacm.EventDisconnected {
				cancel(errRpingDisconnected)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		if err := portDown(ctx); err != nil {
			cancel(err)
		}
	}()
	return ctx, func() {
		cancel(context.Canceled)
		wg.Wait()
	}
}

// rpingPortWatch waits for the device to report the connection's port
// down (IBV_EVENT_PORT_ERR) or itself failed (IBV_EVENT_DEVICE_FATAL) and
// returns that (a *verbs.PortDownError); nil when ctx ends first or the
// events cannot be read (the CM and the completions still end the
// connection then).
func rpingPortWatch(dev *verbs.Context, port int) func(context.Context) error {
	return func(ctx context.Context) error {
		var pd *verbs.PortDownError
		if err := dev.WaitPortDown(ctx, port); errors.As(err, &pd) {
			return pd
		}
		return nil
	}
}

// rpingVerbs is rping's data path on pkg/verbs: one CQ with a completion
// channel, an RC QP of 16 sends and 2 receives, and the MRs of the
// messages and the ping buffers.
type rpingVerbs struct {
	dev                             *verbs.Context
	pd                              *verbs.PD
	cch                             *verbs.CompChannel
	cq                              *verbs.CQ
	qp                              *verbs.QP
	id                              *rdmacm.ID
	recvMR, sendMR, rdmaMR, startMR *verbs.MR
	wc                              [1]verbs.WorkCompletion
	// armed says the CQ will raise an event at its next completion.
	armed bool
}

func newRpingVerbs(o *rpingOptions, id *rdmacm.ID, client bool) (v *rpingVerbs, err error) {
	v = &rpingVerbs{id: id}
	defer func() {
		if err != nil {
			v.close()
			v = nil
		}
	}()
	if v.dev, err = id.OpenDevice(); err != nil {
		return v, err
	}
	if v.pd, err = v.dev.AllocPD(); err != nil {
		return v, err
	}
	if v.cch, err = v.dev.CreateCompChannel(); err != nil {
		return v, err
	}
	if v.cq, err = v.dev.CreateCQ(rpingSQDepth*2, v.cch); err != nil {
		return v, err
	}
	cfg := verbs.QPConfig{SendCQ: v.cq, RecvCQ: v.cq, Caps: verbs.QPCaps{MaxSendWR: rpingSQDepth, MaxRecvWR: 2, MaxSendSGE: 1, MaxRecvSGE: 1}}
	if o.SelfQP {
		if v.qp, err = v.pd.CreateQP(cfg); err != nil {
			return v, err
		}
		if err = v.qp.Init(verbs.InitAttr{Port: id.Addr().Port}); err != nil {
			return v, err
		}
	} else if v.qp, err = id.CreateQP(v.pd, cfg); err != nil {
		return v, err
	}
	o.debugf("created qp %#x\n", v.qp.Num())
	if v.recvMR, err = v.pd.AllocMR(rpingInfoSize, verbs.AccessLocalWrite); err != nil {
		return v, err
	}
	if v.sendMR, err = v.pd.AllocMR(rpingInfoSize, 0); err != nil {
		return v, err
	}
	rw := verbs.AccessLocalWrite | verbs.AccessRemoteRead | verbs.AccessRemoteWrite
	if v.rdmaMR, err = v.pd.AllocMR(o.Size, rw); err != nil {
		return v, err
	}
	if client {
		if v.startMR, err = v.pd.AllocMR(o.Size, rw); err != nil {
			return v, err
		}
	}
	o.debugf("allocated & registered buffers...\n")
	if err = v.qp.PostRecv(verbs.RecvWR{ID: 1, MR: v.recvMR, Length: rpingInfoSize}); err != nil {
		return v, err
	}
	return v, nil
}

func (v *rpingVerbs) start() []byte { return v.startMR.Bytes() }
func (v *rpingVerbs) rdma() []byte  { return v.rdmaMR.Bytes() }

func (v *rpingVerbs) send(buf rpingBuf) error {
	var m rpingInfo
	switch buf {
	case rpingStart:
		m = rpingInfo{Addr: v.startMR.Addr(), RKey: v.startMR.RKey(), Size: uint32(v.startMR.Len())}
	case rpingSink:
		m = rpingInfo{Addr: v.rdmaMR.Addr(), RKey: v.rdmaMR.RKey(), Size: uint32(v.rdmaMR.Len())}
	}
	b, _ := m.MarshalBinary()
	copy(v.sendMR.Bytes(), b)
	return v.qp.PostSend(verbs.SendWR{ID: 2, Op: verbs.OpSend, MR: v.sendMR, Length: rpingInfoSize, Signaled: true})
}

func (v *rpingVerbs) recv(ctx context.Context) (rpingInfo, error) {
	wc, err := v.wait(ctx, verbs.WCRecv)
	if err != nil {
		return rpingInfo{}, err
	}
	m, err := parseRpingInfo(v.recvMR.Bytes()[:min(int(wc.ByteLen), rpingInfoSize)])
	if err == nil && wc.ByteLen != rpingInfoSize {
		err = fmt.Errorf("Received bogus data, size %d", wc.ByteLen)
	}
	if err != nil {
		return m, err
	}
	return m, v.qp.PostRecv(verbs.RecvWR{ID: 1, MR: v.recvMR, Length: rpingInfoSize})
}

func (v *rpingVerbs) read(ctx context.Context, from rpingInfo) error {
	if err := v.qp.PostSend(verbs.SendWR{ID: 3, Op: verbs.OpRDMARead, MR: v.rdmaMR, Length: int(from.Size),
		RemoteAddr: from.Addr, RKey: from.RKey, Signaled: true}); err != nil {
		return err
	}
	_, err := v.wait(ctx, verbs.WCRDMARead)
	return err
}

func (v *rpingVerbs) write(ctx context.Context, to rpingInfo, n int) error {
	if err := v.qp.PostSend(verbs.SendWR{ID: 4, Op: verbs.OpRDMAWrite, MR: v.rdmaMR, Length: n,
		RemoteAddr: to.Addr, RKey: to.RKey, Signaled: true}); err != nil {
		return err
	}
	_, err := v.wait(ctx, verbs.WCRDMAWrite)
	return err
}

// wait returns the next completion of opcode want, passing over send
// completions (rping's sends are signaled and nobody waits for them);
// a failed completion is an error.
func (v *rpingVerbs) wait(ctx context.Context, want verbs.WCOpcode) (verbs.WorkCompletion, error) {
	for {
		n, err := v.cq.Poll(v.wc[:])
		if err != nil {
			return verbs.WorkCompletion{}, err
		}
		if n == 1 {
			wc := v.wc[0]
			if err := wc.Err(v.cq); err != nil {
				return wc, fmt.Errorf("cq completion failed status %d: %w", wc.Status, err)
			}
			if wc.Opcode == want {
				return wc, nil
			}
			if wc.Opcode == verbs.WCSend {
				continue
			}
			return wc, fmt.Errorf("%s completion while waiting for %s", wc.Opcode, want)
		}
		if !v.armed {
			if err := v.cq.ReqNotify(false); err != nil {
				return verbs.WorkCompletion{}, err
			}
			v.armed = true
			continue // a completion may have come before the arming
		}
		if _, err := v.cch.WaitContext(ctx); err != nil {
			return verbs.WorkCompletion{}, err
		}
		v.armed = false
	}
}

// disconnect ends the connection: the QP's work is flushed (or drained
// on iWARP) and the peer told.
func (v *rpingVerbs) disconnect(id *rdmacm.ID) error {
	if v.qp != nil && v.qp != id.QP() && v.qp.State() != verbs.QPStateErr {
		// -q: rping moves its own QP to ERR first.
		if err := v.qp.SetState(verbs.QPStateErr); err != nil {
			return err
		}
	}
	return id.Disconnect()
}

// close frees what newRpingVerbs made; the ID's QP goes with the ID
// (CreateQP's) or here (-q's).
func (v *rpingVerbs) close() {
	if v.qp != nil && v.id.QP() != v.qp {
		v.qp.Close()
	}
	if v.id.QP() != nil {
		v.id.Close()
	}
	for _, mr := range []*verbs.MR{v.recvMR, v.sendMR, v.rdmaMR, v.startMR} {
		if mr != nil {
			mr.Close()
		}
	}
	if v.cq != nil {
		v.cq.Close()
	}
	if v.cch != nil {
		v.cch.Close()
	}
	if v.pd != nil {
		v.pd.Close()
	}
	if v.dev != nil {
		v.dev.Close()
	}
}
