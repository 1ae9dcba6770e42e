package verbs

import "fmt"

// MWType is a memory window's type (enum ibv_mw_type).
type MWType int

// Memory window types: a type 1 window is bound with QP.BindMW and stays
// bound until bound again; a type 2 window is bound by a work request
// (OpBindMW) to one QP and invalidated by OpLocalInv or the peer's
// OpSendInv.
const (
	MWType1 MWType = 1
	MWType2 MWType = 2
)

// String names the type as the IBA does ("type 1").
func (t MWType) String() string { return fmt.Sprintf("type %d", int(t)) }

// MW is a memory window (struct ibv_mw): a remote key for a range of an
// MR (registered with AccessMWBind) that its owner can hand to a peer and
// take back without touching the MR.
type MW struct {
	pd     *PD
	h      handle
	typ    MWType
	rkey   uint32
	closed bool
}

// AccessMWBind lets memory windows be bound to an MR (IBV_ACCESS_MW_BIND).
const AccessMWBind Access = 1 << 4

// AllocMW allocates a memory window of typ on pd. A provider without
// windows, or without windows of typ, is an error wrapping EOPNOTSUPP (or
// the provider's own errno).
func (pd *PD) AllocMW(typ MWType) (*MW, error) {
	pd.use("AllocMW")
	h, rkey, err := drv.allocMW(pd.h, typ)
	if err != nil {
		return nil, verbError("ibv_alloc_mw", fmt.Sprintf("%s (%s)", pd, typ), err)
	}
	pd.children++
	return &MW{pd: pd, h: h, typ: typ, rkey: rkey}, nil
}

// String names the window in messages.
func (mw *MW) String() string { return fmt.Sprintf("%s MW %s rkey %#x", mw.pd, mw.typ, mw.rkey) }

func (mw *MW) use(what string) {
	if mw.closed {
		panic(fmt.Sprintf("verbs: %s on deallocated %s", what, mw))
	}
}

// Type is the window's type.
func (mw *MW) Type() MWType { return mw.typ }

// RKey is the key a peer names the window by: after a type 1 BindMW, the
// key it gave; after a type 2 bind is posted, the key the request
// carries.
func (mw *MW) RKey() uint32 { mw.use("RKey"); return mw.rkey }

// Close deallocates the window: the peer's accesses through it fail from
// then on. Closing it again does nothing and returns nil.
func (mw *MW) Close() error {
	if mw.closed {
		return nil
	}
	if err := drv.deallocMW(mw.h); err != nil {
		return verbError("ibv_dealloc_mw", mw.String(), err)
	}
	mw.closed = true
	mw.pd.children--
	return nil
}

// MWBind is what a window is bound to: bytes [Offset, Offset+Length) of
// MR, which the peer may access as Access says (AccessRemoteWrite, ...).
// Zero bytes (Length 0) unbinds a type 1 window; the MR is still given,
// as providers (rxe) read it.
type MWBind struct {
	MR     *MR
	Offset int
	Length int
	Access Access
}

// mwBindWork is a checked bind: the MR's handle and the range's address.
type mwBindWork struct {
	mr           handle
	addr, length uint64
	access       Access
}

// check resolves b for a window of pd; no MR, memory outside the MR, or
// an MR of another PD panics.
func (b MWBind) check(what string, pd *PD) mwBindWork {
	if b.MR == nil {
		panic(fmt.Sprintf("verbs: %s without an MR (to unbind, bind zero bytes of one)", what))
	}
	if b.MR.pd != pd {
		panic(fmt.Sprintf("verbs: %s to %s of another PD", what, b.MR))
	}
	return mwBindWork{mr: b.MR.h, addr: b.MR.span(what, b.Offset, b.Length), length: uint64(b.Length), access: b.Access}
}

// BindMW binds a type 1 window through the QP's send queue
// (ibv_bind_mw): the bind completes on the send CQ (WCBindMW, as request
// id; always when signaled) and the window then has a new RKey. A window
// of type 2 (bound with OpBindMW), of another PD, or a QP not in RTS
// panics.
func (qp *QP) BindMW(mw *MW, id uint64, b MWBind, signaled bool) error {
	qp.use("BindMW")
	mw.use("BindMW")
	if mw.typ != MWType1 {
		panic(fmt.Sprintf("verbs: BindMW on %s of %s: a type 2 window is bound with an OpBindMW request", qp, mw))
	}
	if mw.pd != qp.pd {
		panic(fmt.Sprintf("verbs: BindMW on %s of %s of another PD", qp, mw))
	}
	if qp.state != QPStateRTS {
		panic(fmt.Sprintf("verbs: BindMW on %s in state %s: connect it first (RTS)", qp, qp.state))
	}
	w := b.check("BindMW", qp.pd)
	var flags sendFlags
	if signaled || qp.cfg.SignalAll {
		flags = sendSignaled
	}
	rkey, err := drv.bindMW(qp.h, mw.h, id, flags, w)
	if err != nil {
		return verbError("ibv_bind_mw", fmt.Sprintf("%s on %s", mw, qp), err)
	}
	mw.rkey = rkey
	return nil
}

// incRKey is ibv_inc_rkey: the next key of a window, its low 8 bits (the
// part its owner chooses) one more.
func incRKey(rkey uint32) uint32 { return rkey&^0xff | (rkey+1)&0xff }
