package rdma

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// cmXEndpoint is rdmaXEndpoint on the kernel's CM (pkg/rdmacm) and
// pkg/verbs: the ID, its device's objects, the message's MR and, with
// XRC, the domain and SRQ.
type cmXEndpoint struct {
	xrc      bool
	ch       *rdmacm.EventChannel
	listener *rdmacm.ID
	id       *rdmacm.ID
	dev      *verbs.Context
	pd       *verbs.PD
	cch      *verbs.CompChannel
	cq       *verbs.CQ
	xrcd     *verbs.XRCD
	srq      *verbs.SRQ
	mr       *verbs.MR
	inline   bool
	armed    bool
	ports    *cmPortWatch
}

func newCMXEndpoint(o *rdmaXOptions) rdmaXEndpoint { return &cmXEndpoint{xrc: o.XRC, ports: o.ports} }

// idType is the port space and QP type of the side's IDs: RC in the
// TCP port space, XRC in the IB one.
func (e *cmXEndpoint) idType(server bool) (rdmacm.PortSpace, verbs.QPType) {
	switch {
	case !e.xrc:
		return rdmacm.PortSpaceTCP, verbs.QPTypeRC
	case server:
		return rdmacm.PortSpaceIB, verbs.QPTypeXRCRecv
	}
	return rdmacm.PortSpaceIB, verbs.QPTypeXRCSend
}

func (e *cmXEndpoint) newID(server bool) (*rdmacm.ID, error) {
	var err error
	if e.ch == nil {
		if e.ch, err = rdmacm.NewEventChannel(); err != nil {
			return nil, err
		}
	}
	return e.ch.CreateIDType(e.idType(server))
}

func (e *cmXEndpoint) resolve(ctx context.Context, dst netip.AddrPort) error {
	var err error
	if e.id, err = e.newID(false); err != nil {
		return err
	}
	if err := e.id.ResolveAddr(ctx, netip.AddrPort{}, dst, 2*time.Second); err != nil {
		return err
	}
	e.ports.add(e.id)
	if err := e.id.ResolveRoute(ctx, 2*time.Second); err != nil {
		return err
	}
	if err := e.objects(); err != nil {
		return err
	}
	// One send, signalled, 16 bytes inline where the device takes them
	// (rdmacm-utils' rdma_xclient always sends inline); RC has a receive
	// queue of one too, XRC_SEND none.
	cfg := verbs.QPConfig{SendCQ: e.cq, SignalAll: true, Caps: verbs.QPCaps{MaxSendWR: 1, MaxSendSGE: 1, MaxInlineData: rdmaPairMsgSize}}
	if !e.xrc {
		cfg.RecvCQ, cfg.Caps.MaxRecvWR, cfg.Caps.MaxRecvSGE = e.cq, 1, 1
	}
	qp, err := e.id.CreateQP(e.pd, cfg)
	if err != nil {
		cfg.Caps.MaxInlineData = 0
		if qp, err = e.id.CreateQP(e.pd, cfg); err != nil {
			return err
		}
	}
	e.inline = qp.Caps().MaxInlineData >= rdmaPairMsgSize
	return nil
}

// objects opens the ID's device and makes the PD, the completion channel
// and the CQ (librdmacm's default PD and the ID's CQs).
func (e *cmXEndpoint) objects() error {
	var err error
	if e.dev, err = e.id.OpenDevice(); err != nil {
		return err
	}
	if e.pd, err = e.dev.AllocPD(); err != nil {
		return err
	}
	if e.cch, err = e.dev.CreateCompChannel(); err != nil {
		return err
	}
	e.cq, err = e.dev.CreateCQ(2, e.cch)
	return err
}

func (e *cmXEndpoint) bind(src netip.AddrPort) error {
	var err error
	if e.listener, err = e.newID(true); err != nil {
		return err
	}
	if err := e.listener.Bind(src); err != nil {
		return err
	}
	e.ports.add(e.listener)
	return nil
}

func (e *cmXEndpoint) listen() error { return e.listener.Listen(0) }

func (e *cmXEndpoint) getRequest(ctx context.Context) error {
	var req *rdmacm.Event
	for req == nil || req.Type != rdmacm.EventConnectRequest {
		var err error
		if req, err = e.listener.Await(ctx, "rdma_get_request"); err != nil {
			return err
		}
	}
	e.id = req.ID
	e.ports.add(e.id)
	if err := e.requestQP(); err != nil {
		e.id.Reject(nil)
		return err
	}
	return nil
}

// requestQP makes the request's QP: RC with a queue of one each way,
// or XRC_RECV in an XRC domain of the process's own (librdmacm's
// ucma_get_xrcd).
func (e *cmXEndpoint) requestQP() error {
	if err := e.objects(); err != nil {
		return err
	}
	if !e.xrc {
		_, err := e.id.CreateQP(e.pd, verbs.QPConfig{SendCQ: e.cq, RecvCQ: e.cq, SignalAll: true,
			Caps: verbs.QPCaps{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
		return err
	}
	var err error
	if e.xrcd, err = e.dev.OpenXRCD(-1); err != nil {
		if d, derr := e.id.Device(); derr == nil && !d.Attr.XRC() {
			err = fmt.Errorf("%w: %w", rdmacm.ErrNoXRC, err)
		}
		return err
	}
	_, err = e.id.CreateQP(e.pd, verbs.QPConfig{XRCD: e.xrcd})
	return err
}

func (e *cmXEndpoint) createSRQ() (uint32, error) {
	var err error
	if e.srq, err = e.pd.CreateXRCSRQ(e.xrcd, e.cq, 1, 1); err != nil {
		return 0, err
	}
	return e.srq.Num(), nil
}

func (e *cmXEndpoint) regMsgs() error {
	var err error
	e.mr, err = e.pd.AllocMR(rdmaPairMsgSize, verbs.AccessLocalWrite)
	return err
}

func (e *cmXEndpoint) postRecv() error {
	wr := verbs.RecvWR{MR: e.mr, Length: rdmaPairMsgSize}
	if e.srq != nil {
		return e.srq.PostRecv(wr)
	}
	return e.id.QP().PostRecv(wr)
}

// accept accepts with privateData and nothing else, as rdma_xserver's
// zeroed parameters do.
func (e *cmXEndpoint) accept(ctx context.Context, privateData []byte) error {
	return e.id.Accept(ctx, rdmacm.ConnParam{PrivateData: privateData})
}

// connect connects as librdmacm's rdma_connect without parameters: the
// device's RDMA READ depths, 7 retries.
func (e *cmXEndpoint) connect(ctx context.Context) ([]byte, error) {
	cp := rdmacm.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}
	if d, err := e.id.Device(); err == nil {
		cp.ResponderResources = uint8(min(max(d.Attr.MaxQPRdAtom, 1), 255))
		cp.InitiatorDepth = uint8(min(max(d.Attr.MaxQPInitRdAtom, 1), 255))
	}
	ev, err := e.id.Connect(ctx, cp)
	if err != nil {
		return nil, err
	}
	return ev.Conn.PrivateData, nil
}

func (e *cmXEndpoint) postSend(srqn uint32) error {
	wr := verbs.SendWR{Op: verbs.OpSend, MR: e.mr, Length: rdmaPairMsgSize, Inline: e.inline}
	if e.xrc {
		wr.RemoteSRQN = srqn
	}
	return e.id.QP().PostSend(wr)
}

func (e *cmXEndpoint) completion(ctx context.Context, want verbs.WCOpcode) error {
	return cmCompletion(ctx, e.cq, e.cch, &e.armed, want)
}

func (e *cmXEndpoint) disconnect() {
	if e.id != nil {
		e.id.Disconnect()
	}
}

// close frees what the run made: the ID with its QP first, the SRQ
// before its domain and CQ, the channel (and any ID left on it) last.
func (e *cmXEndpoint) close() {
	closeMade(e.id)
	closeMade(e.srq)
	closeMade(e.xrcd)
	closeMade(e.mr)
	closeMade(e.cq)
	closeMade(e.cch)
	closeMade(e.pd)
	if e.dev != nil {
		e.dev.Close()
	}
	closeMade(e.listener)
	closeMade(e.ch)
}
