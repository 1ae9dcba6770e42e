package verbs

import (
	"errors"
	"fmt"
	"strconv"
	"syscall"
)

// QPState is a queue pair's state (enum ibv_qp_state).
type QPState int

// QP states; a new QP is in QPStateReset and goes to INIT, RTR and RTS.
const (
	QPStateReset QPState = iota
	QPStateInit
	QPStateRTR
	QPStateRTS
	QPStateSQD
	QPStateSQE
	QPStateErr
)

// String names the state as the IBA does.
func (s QPState) String() string {
	names := []string{"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"}
	if s >= 0 && int(s) < len(names) {
		return names[s]
	}
	return fmt.Sprintf("state %d", int(s))
}

// MTU is a path MTU as verbs encodes it (enum ibv_mtu): 1 is 256 bytes,
// 5 is 4096.
type MTU int

// Path MTUs.
const (
	MTU256  MTU = 1
	MTU512  MTU = 2
	MTU1024 MTU = 3
	MTU2048 MTU = 4
	MTU4096 MTU = 5
)

// Bytes is the MTU in bytes, or 0 for a value that is not an MTU.
func (m MTU) Bytes() int {
	if m < MTU256 || m > MTU4096 {
		return 0
	}
	return 128 << m
}

// String is the MTU in bytes as ibv_devinfo prints it ("4096"), and
// "invalid MTU" for a value that is not an MTU.
func (m MTU) String() string {
	if b := m.Bytes(); b != 0 {
		return strconv.Itoa(b)
	}
	return "invalid MTU"
}

// QPCaps are a QP's queue sizes: asked for at CreateQP, and what the
// device granted (QP.Caps).
type QPCaps struct {
	MaxSendWR, MaxRecvWR   int
	MaxSendSGE, MaxRecvSGE int
	MaxInlineData          int
}

// QPType is a queue pair's transport (enum ibv_qp_type).
type QPType int

// QP types: reliable connected, unreliable connected, unreliable datagram.
const (
	QPTypeRC QPType = 2
	QPTypeUC QPType = 3
	QPTypeUD QPType = 4
	// XRC initiator (sends to the peer's XRC SRQs) and target (receives
	// into this side's XRC SRQ) QPs.
	QPTypeXRCSend QPType = 9
	QPTypeXRCRecv QPType = 10
)

// String names the type as the IBA does.
func (t QPType) String() string {
	switch t {
	case QPTypeRC:
		return "RC"
	case QPTypeUC:
		return "UC"
	case QPTypeUD:
		return "UD"
	case QPTypeXRCSend:
		return "XRC_SEND"
	case QPTypeXRCRecv:
		return "XRC_RECV"
	}
	return fmt.Sprintf("QP type %d", int(t))
}

// QPConfig is what CreateQP needs: the CQs and the queue sizes.
type QPConfig struct {
	// Type is the transport; zero is RC.
	Type QPType
	// SRQ, when set, is where the QP's receives come from (PostRecv on
	// the QP is then a bug).
	SRQ *SRQ
	// XRCD is the domain of an XRC_RECV QP.
	XRCD           *XRCD
	SendCQ, RecvCQ *CQ
	Caps           QPCaps
	// SignalAll makes every send work request complete with a CQ entry;
	// without it only those with Signaled set do.
	SignalAll bool
	// SendOps, when set, makes an extended QP (ibv_create_qp_ex) whose
	// PostSend goes through the ibv_wr_* ops (ibv_wr_start, ibv_wr_send,
	// ..., ibv_wr_complete) and takes only these opcodes; posting another
	// panics. A provider without them is an error wrapping EOPNOTSUPP.
	SendOps SendOps
	// BlockSelfMulticastLoopback keeps a UD QP from receiving the
	// datagrams it sends to a multicast group it is attached to
	// (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB); a device without the
	// capability refuses the QP.
	BlockSelfMulticastLoopback bool
}

// SendOps are the opcodes an extended QP may post (enum
// ibv_qp_create_send_ops_flags): bit n allows Opcode n.
type SendOps uint64

// SendOpsOf is the set of the opcodes given.
func SendOpsOf(ops ...Opcode) SendOps {
	var s SendOps
	for _, o := range ops {
		s |= 1 << o
	}
	return s
}

// Has reports whether the set allows o.
func (s SendOps) Has(o Opcode) bool { return o < 64 && s&(1<<o) != 0 }

// InitAttr moves a QP from RESET to INIT.
type InitAttr struct {
	Port      int // the local port, from 1
	PKeyIndex int
	Access    Access // what the peer may do to this side's MRs (RC, UC)
	QKey      uint32 // the Q_Key datagrams to this QP must carry (UD)
}

// GRH is the global route of an address vector: on RoCE every packet
// carries one.
type GRH struct {
	DGID         [16]byte
	SGIDIndex    int
	HopLimit     uint8
	TrafficClass uint8
	FlowLabel    uint32
}

// RTRAttr moves a QP from INIT to RTR: where the peer is.
type RTRAttr struct {
	PathMTU         MTU
	DestQPN         uint32 // the peer's QP number (24 bits)
	RQPSN           uint32 // the peer's first PSN (24 bits)
	DLID            uint16
	SL              uint8
	GRH             *GRH // nil: no global route (InfiniBand within a subnet)
	MaxDestRdAtomic uint8
	MinRNRTimer     uint8
}

// RTSAttr moves a QP from RTR to RTS: how this side sends.
type RTSAttr struct {
	SQPSN       uint32 // this side's first PSN (24 bits)
	Timeout     uint8  // local ACK timeout, 4.096 us * 2^Timeout
	RetryCnt    uint8
	RNRRetry    uint8
	MaxRdAtomic uint8
}

// QP is a queue pair (struct ibv_qp) of type RC, UC or UD. One goroutine
// at a time may post on it.
type QP struct {
	pd     *PD
	cfg    QPConfig
	h      handle
	num    uint32
	caps   QPCaps
	state  QPState
	port   int
	closed bool
	sends  []sendWork
	recvs  []recvWork
}

// CreateQP makes a QP (RC unless cfg.Type says) in state RESET. CQs that
// are nil or closed, or a type other than RC, UC and UD, panic. More SGEs
// than the device takes (its max_sge) is an error wrapping
// ErrTooManySGEs.
func (pd *PD) CreateQP(cfg QPConfig) (*QP, error) {
	pd.use("CreateQP")
	if cfg.Type == 0 {
		cfg.Type = QPTypeRC
	}
	// Which CQs a type takes: an XRC target has none (its SRQ has
	// one), an XRC initiator only a send CQ.
	switch cfg.Type {
	case QPTypeRC, QPTypeUC, QPTypeUD:
		if cfg.SendCQ == nil || cfg.RecvCQ == nil {
			panic(fmt.Sprintf("verbs: CreateQP on %s without a send and a receive CQ", pd))
		}
	case QPTypeXRCSend:
		if cfg.SendCQ == nil || cfg.RecvCQ != nil {
			panic(fmt.Sprintf("verbs: CreateQP on %s of XRC_SEND wants a send CQ only", pd))
		}
	case QPTypeXRCRecv:
		if cfg.SendCQ != nil || cfg.RecvCQ != nil || cfg.XRCD == nil {
			panic(fmt.Sprintf("verbs: CreateQP on %s of XRC_RECV wants an XRCD and no CQs", pd))
		}
	default:
		panic(fmt.Sprintf("verbs: CreateQP on %s of %s", pd, cfg.Type))
	}
	a := qpCreate{typ: cfg.Type, caps: cfg.Caps, signalAll: cfg.SignalAll, sendOps: cfg.SendOps, blockSelfMcastLB: cfg.BlockSelfMulticastLoopback}
	for _, cq := range []*CQ{cfg.SendCQ, cfg.RecvCQ} {
		if cq != nil {
			cq.use("CreateQP")
		}
	}
	if cfg.SendCQ != nil {
		a.sendCQ = cfg.SendCQ.h
	}
	if cfg.RecvCQ != nil {
		a.recvCQ = cfg.RecvCQ.h
	}
	if cfg.XRCD != nil {
		cfg.XRCD.use("CreateQP")
		a.xrcd = cfg.XRCD.h
	}
	if cfg.SRQ != nil {
		cfg.SRQ.use("CreateQP")
		if cfg.SRQ.pd != pd {
			panic(fmt.Sprintf("verbs: CreateQP on %s with %s of another PD", pd, cfg.SRQ))
		}
		a.srq = cfg.SRQ.h
	}
	dev, err := pd.ctx.QueryDevice()
	if err != nil {
		return nil, err
	}
	if err := checkSGEs(dev, pd.ctx.name, cfg.Caps); err != nil {
		return nil, verbError("ibv_create_qp", pd.String(), err)
	}
	h, num, caps, err := drv.createQP(pd.h, a)
	if err != nil {
		return nil, verbError("ibv_create_qp", fmt.Sprintf("%s (%s, %d send and %d receive WRs)", pd, cfg.Type, cfg.Caps.MaxSendWR, cfg.Caps.MaxRecvWR), err)
	}
	pd.children++
	cfg.adjust(1)
	return &QP{pd: pd, cfg: cfg, h: h, num: num, caps: caps}, nil
}

// String names the QP in messages.
func (qp *QP) String() string { return fmt.Sprintf("%s QP %#x", qp.pd.ctx.name, qp.num) }

// Num is the QP number the peer addresses.
func (qp *QP) Num() uint32 { return qp.num }

// Caps are the queue sizes the device granted.
func (qp *QP) Caps() QPCaps { return qp.caps }

// State is the state the QP was last moved to.
func (qp *QP) State() QPState { return qp.state }

func (qp *QP) use(what string) {
	if qp.closed {
		panic(fmt.Sprintf("verbs: %s on destroyed %s", what, qp))
	}
}

// move checks that the QP is in state from and makes the transition to
// m.to; a transition out of order is a bug in the caller and panics.
func (qp *QP) move(from QPState, m qpModify) error {
	what := fmt.Sprintf("modify to %s", m.to)
	qp.use(what)
	m.typ = qp.cfg.Type
	if qp.state != from {
		panic(fmt.Sprintf("verbs: %s of %s in state %s: want %s first", what, qp, qp.state, from))
	}
	object := fmt.Sprintf("%s %s->%s", qp, from, m.to)
	if err := checkModify(m); err != nil {
		return verbError("ibv_modify_qp", object, err)
	}
	if err := drv.modifyQP(qp.h, m); err != nil {
		return verbError("ibv_modify_qp", object, err)
	}
	qp.state = m.to
	return nil
}

// checkModify rejects attribute values libibverbs would pass on to the
// device unchecked: fields wider than the wire carries.
func checkModify(m qpModify) error {
	const psnMask = 1<<24 - 1
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{syscall.EINVAL}, a...)...)
	}
	switch m.to {
	case QPStateInit:
		if m.init.Port < 1 || m.init.Port > 255 {
			return bad("port %d", m.init.Port)
		}
	case QPStateRTR:
		if m.typ == QPTypeUD {
			return nil // UD's RTR sets nothing but the state
		}
		r := m.rtr
		switch {
		case r.PathMTU.Bytes() == 0:
			return bad("path MTU %d", int(r.PathMTU))
		case r.DestQPN > psnMask:
			return bad("destination QP number %#x is wider than 24 bits", r.DestQPN)
		case r.RQPSN > psnMask:
			return bad("receive PSN %#x is wider than 24 bits", r.RQPSN)
		case r.SL > 15:
			return bad("SL %d", r.SL)
		case r.GRH != nil && (r.GRH.SGIDIndex < 0 || r.GRH.SGIDIndex > 255):
			return bad("source GID index %d", r.GRH.SGIDIndex)
		}
	case QPStateRTS:
		if m.rts.SQPSN > psnMask {
			return bad("send PSN %#x is wider than 24 bits", m.rts.SQPSN)
		}
		if m.rts.Timeout > 31 || m.rts.RetryCnt > 7 || m.rts.RNRRetry > 7 {
			return bad("timeout %d, retry count %d, RNR retry %d (want at most 31, 7, 7)", m.rts.Timeout, m.rts.RetryCnt, m.rts.RNRRetry)
		}
	}
	return nil
}

// adjust counts a QP made (1) or destroyed (-1) on the objects it uses.
func (cfg *QPConfig) adjust(n int) {
	if cfg.SendCQ != nil {
		cfg.SendCQ.qps += n
	}
	if cfg.RecvCQ != nil {
		cfg.RecvCQ.qps += n
	}
	if cfg.SRQ != nil {
		cfg.SRQ.qps += n
	}
	if cfg.XRCD != nil {
		cfg.XRCD.qps += n
	}
}

// Type is the QP's transport.
func (qp *QP) Type() QPType { return qp.cfg.Type }

// Init moves the QP from RESET to INIT.
func (qp *QP) Init(a InitAttr) error {
	if err := qp.move(QPStateReset, qpModify{to: QPStateInit, init: a}); err != nil {
		return err
	}
	qp.port = a.Port
	return nil
}

// ReadyToReceive moves the QP from INIT to RTR, connecting it to the peer
// (RC, UC; a UD QP takes no attributes: pass a zero RTRAttr).
func (qp *QP) ReadyToReceive(a RTRAttr) error {
	return qp.move(QPStateInit, qpModify{to: QPStateRTR, init: InitAttr{Port: qp.port}, rtr: a})
}

// ReadyToSend moves the QP from RTR to RTS.
func (qp *QP) ReadyToSend(a RTSAttr) error {
	return qp.move(QPStateRTR, qpModify{to: QPStateRTS, rts: a})
}

// Opcode is what a send work request does (enum ibv_wr_opcode).
type Opcode uint32

// Send opcodes.
const (
	OpRDMAWrite    Opcode = 0
	OpRDMAWriteImm Opcode = 1
	OpSend         Opcode = 2
	OpSendImm      Opcode = 3
	OpRDMARead     Opcode = 4
	// The atomics read 8 bytes at RemoteAddr (8-byte aligned) into the
	// request's one 8-byte SGE and write the result back: CMP_AND_SWP
	// writes Swap when they equal CompareAdd, FETCH_AND_ADD adds
	// CompareAdd. RC and XRC_SEND QPs only, to an MR and a QP that allow
	// AccessRemoteAtomic.
	OpAtomicCmpAndSwp   Opcode = 5
	OpAtomicFetchAndAdd Opcode = 6
	// OpLocalInv invalidates the type 2 window (or MR) whose key is
	// InvalidateRKey on this side; OpSendInv is a SEND that invalidates
	// it on the peer's side as it arrives.
	OpLocalInv Opcode = 7
	// OpBindMW binds the type 2 window MW to Bind, giving it the next
	// key (MW.RKey once posted).
	OpBindMW  Opcode = 8
	OpSendInv Opcode = 9
)

// atomic reports whether o is one of the atomics.
func (o Opcode) atomic() bool { return o == OpAtomicCmpAndSwp || o == OpAtomicFetchAndAdd }

// String names the opcode as verbs.h does, without the IBV_WR_ prefix.
func (o Opcode) String() string {
	switch o {
	case OpRDMAWrite:
		return "RDMA_WRITE"
	case OpRDMAWriteImm:
		return "RDMA_WRITE_WITH_IMM"
	case OpSend:
		return "SEND"
	case OpSendImm:
		return "SEND_WITH_IMM"
	case OpRDMARead:
		return "RDMA_READ"
	case OpAtomicCmpAndSwp:
		return "ATOMIC_CMP_AND_SWP"
	case OpAtomicFetchAndAdd:
		return "ATOMIC_FETCH_AND_ADD"
	case OpLocalInv:
		return "LOCAL_INV"
	case OpBindMW:
		return "BIND_MW"
	case OpSendInv:
		return "SEND_WITH_INV"
	}
	return fmt.Sprintf("opcode %d", uint32(o))
}

// SendWR is a send work request: bytes [Offset, Offset+Length) of MR go
// to the peer, into its receive queue (SEND) or at RemoteAddr of the MR
// whose key is RKey (RDMA WRITE); RDMA READ and the atomics bring the
// peer's bytes there.
type SendWR struct {
	ID     uint64
	Op     Opcode
	MR     *MR // nil for a request with no data
	Offset int
	Length int
	// SGL, instead of MR, Offset and Length, is the request's memory in
	// pieces, gathered in order (up to the QP's Caps().MaxSendSGE).
	SGL        []SGE
	RemoteAddr uint64
	RKey       uint32
	Imm        uint32 // immediate data (the _IMM opcodes), host order
	// CompareAdd and Swap are the atomics' operands (see
	// OpAtomicCmpAndSwp), in host order.
	CompareAdd, Swap uint64
	// InvalidateRKey is the key OpLocalInv and OpSendInv invalidate.
	InvalidateRKey uint32
	// MW and Bind are OpBindMW's window and what it binds it to.
	MW        *MW
	Bind      MWBind
	Signaled  bool // complete with a CQ entry (always, with SignalAll)
	Solicited bool
	Inline    bool // copy the data at post time (at most Caps().MaxInlineData bytes)
	// AH, RemoteQPN and RemoteQKey address a datagram (UD QPs only,
	// where AH is required).
	AH         *AH
	RemoteQPN  uint32
	RemoteQKey uint32
	// RemoteSRQN is the peer's XRC SRQ (XRC_SEND QPs only).
	RemoteSRQN uint32
}

// RecvWR is a receive work request: the next SEND from the peer lands in
// bytes [Offset, Offset+Length) of MR, or scattered over SGL's pieces in
// order (up to the queue's receive SGEs).
type RecvWR struct {
	ID     uint64
	MR     *MR
	Offset int
	Length int
	SGL    []SGE
}

// PostSend queues send work requests. The QP must be in RTS; posting on a
// QP that is not connected or was destroyed, naming memory outside the MR,
// inlining more than the QP allows, or an atomic on a QP other than RC and
// XRC_SEND or with local memory other than one SGE of 8 bytes, panics. A
// full send queue is an error wrapping ENOMEM; more SGEs than the QP takes
// wraps ErrTooManySGEs, an atomic's RemoteAddr not 8-byte aligned
// ErrUnalignedAtomic (both with EINVAL). Requests before the one that
// fails are posted.
func (qp *QP) PostSend(wrs ...SendWR) error {
	qp.use("PostSend")
	if qp.state != QPStateRTS {
		panic(fmt.Sprintf("verbs: PostSend on %s in state %s: connect it first (RTS)", qp, qp.state))
	}
	for len(wrs) > 0 {
		n := min(len(wrs), maxPostBatch)
		qp.sends = qp.sends[:0]
		var bad error
		for i := range wrs[:n] {
			w, err := qp.checkSend(&wrs[i])
			if err != nil {
				n, bad = i, err
				break
			}
			qp.sends = append(qp.sends, w)
		}
		if n > 0 {
			if err := drv.postSend(qp.h, qp.sends); err != nil {
				return verbError("ibv_post_send", qp.String(), err)
			}
			for _, w := range qp.sends {
				if w.bound != nil {
					w.bound.rkey = w.bindRKey
				}
			}
		}
		if bad != nil {
			return verbError("ibv_post_send", qp.String(), bad)
		}
		wrs = wrs[n:]
	}
	return nil
}

// ErrUnalignedAtomic is wrapped (with EINVAL) by what PostSend returns
// for an atomic whose RemoteAddr is not 8-byte aligned: the responder
// would refuse it.
var ErrUnalignedAtomic = errors.New("atomic remote address is not 8-byte aligned")

func (qp *QP) checkSend(wr *SendWR) (sendWork, error) {
	if wr.Op > OpSendInv {
		panic(fmt.Sprintf("verbs: PostSend on %s: unknown %s", qp, wr.Op))
	}
	if qp.cfg.SendOps != 0 && !qp.cfg.SendOps.Has(wr.Op) {
		panic(fmt.Sprintf("verbs: PostSend on %s of %s: the QP was made for send ops %#x", qp, wr.Op, uint64(qp.cfg.SendOps)))
	}
	w := sendWork{id: wr.ID, op: wr.Op, raddr: wr.RemoteAddr, rkey: wr.RKey, imm: wr.Imm, compareAdd: wr.CompareAdd, swap: wr.Swap,
		invRKey: wr.InvalidateRKey}
	if (wr.MW != nil) != (wr.Op == OpBindMW) {
		panic(fmt.Sprintf("verbs: PostSend on %s: an MW goes with BIND_MW, and every BIND_MW needs one", qp))
	}
	if wr.MW != nil {
		wr.MW.use("PostSend")
		if wr.MW.typ != MWType2 || wr.MW.pd != qp.pd {
			panic(fmt.Sprintf("verbs: PostSend on %s: BIND_MW of %s: want a type 2 window of the QP's PD (type 1: BindMW)", qp, wr.MW))
		}
		w.mw, w.bound, w.bindRKey = wr.MW.h, wr.MW, incRKey(wr.MW.rkey)
		w.bind = wr.Bind.check("PostSend", qp.pd)
	}
	if (wr.AH != nil) != (qp.cfg.Type == QPTypeUD) {
		panic(fmt.Sprintf("verbs: PostSend on %s (%s): an AH goes with UD QPs, and every UD send needs one", qp, qp.cfg.Type))
	}
	if wr.AH != nil {
		wr.AH.use("PostSend")
		if wr.AH.pd != qp.pd {
			panic(fmt.Sprintf("verbs: PostSend on %s with %s of another PD", qp, wr.AH))
		}
		w.ah, w.rqpn, w.rqkey = wr.AH.h, wr.RemoteQPN, wr.RemoteQKey
	}
	w.srqn = wr.RemoteSRQN
	if len(wr.SGL) > qp.caps.MaxSendSGE {
		return w, tooManySGEs(len(wr.SGL), qp.String()+"'s send queue", qp.caps.MaxSendSGE)
	}
	first, rest := local("PostSend", qp, qp.pd, wr.MR, wr.Offset, wr.Length, wr.SGL)
	w.addr, w.length, w.lkey, w.sgl = first.addr, first.length, first.lkey, rest
	if wr.Op.atomic() {
		if qp.cfg.Type != QPTypeRC && qp.cfg.Type != QPTypeXRCSend {
			panic(fmt.Sprintf("verbs: PostSend on %s (%s): %s needs an RC or XRC_SEND QP", qp, qp.cfg.Type, wr.Op))
		}
		if rest != nil || first.length != 8 {
			panic(fmt.Sprintf("verbs: PostSend on %s: %s into %d bytes in %d SGEs, want one SGE of 8 bytes", qp, wr.Op, total(first, rest), max(len(rest), len(wr.SGL), 1)))
		}
		if wr.RemoteAddr%8 != 0 {
			return w, fmt.Errorf("%w (%w): %#x", ErrUnalignedAtomic, syscall.EINVAL, wr.RemoteAddr)
		}
	}
	if wr.Signaled || qp.cfg.SignalAll {
		w.flags |= sendSignaled
	}
	if wr.Solicited {
		w.flags |= sendSolicited
	}
	if wr.Inline {
		if n := total(first, rest); n > qp.caps.MaxInlineData {
			panic(fmt.Sprintf("verbs: PostSend on %s: %d bytes inline, the QP takes %d", qp, n, qp.caps.MaxInlineData))
		}
		w.flags |= sendInline
	}
	return w, nil
}

// PostRecv queues receive work requests. The QP must be in INIT or
// later; posting on a QP in RESET or destroyed, or naming memory outside
// the MR, panics. A full receive queue is an error wrapping ENOMEM, more
// SGEs than the QP takes one wrapping ErrTooManySGEs.
func (qp *QP) PostRecv(wrs ...RecvWR) error {
	qp.use("PostRecv")
	if qp.state == QPStateReset {
		panic(fmt.Sprintf("verbs: PostRecv on %s in state RESET: Init it first", qp))
	}
	if qp.cfg.SRQ != nil {
		panic(fmt.Sprintf("verbs: PostRecv on %s, whose receives come from %s", qp, qp.cfg.SRQ))
	}
	for len(wrs) > 0 {
		n := min(len(wrs), maxPostBatch)
		recvs, err := checkRecvs(qp.recvs[:0], "PostRecv", qp, qp.String()+"'s receive queue", qp.pd, qp.caps.MaxRecvSGE, wrs[:n])
		qp.recvs = recvs
		if len(recvs) > 0 {
			if err := drv.postRecv(qp.h, recvs); err != nil {
				return verbError("ibv_post_recv", qp.String(), err)
			}
		}
		if err != nil {
			return verbError("ibv_post_recv", qp.String(), err)
		}
		wrs = wrs[n:]
	}
	return nil
}

// checkRecvs resolves receive requests into out, stopping at the first
// with more SGEs than maxSGE, which is the error (queue names the queue). Requests without an MR,
// naming memory outside it or of a PD other than pd panic.
func checkRecvs(out []recvWork, verb string, on fmt.Stringer, queue string, pd *PD, maxSGE int, wrs []RecvWR) ([]recvWork, error) {
	for i := range wrs {
		wr := &wrs[i]
		if wr.MR == nil && wr.SGL == nil {
			panic(fmt.Sprintf("verbs: %s on %s without an MR", verb, on))
		}
		if len(wr.SGL) > maxSGE {
			return out, tooManySGEs(len(wr.SGL), queue, maxSGE)
		}
		first, rest := local(verb, on, pd, wr.MR, wr.Offset, wr.Length, wr.SGL)
		out = append(out, recvWork{id: wr.ID, addr: first.addr, length: first.length, lkey: first.lkey, sgl: rest})
	}
	return out, nil
}

// AttachMulticast makes the UD QP receive the datagrams sent to the
// multicast group of GID gid and LID lid (ibv_attach_mcast; on RoCE the
// LID is 0).
func (qp *QP) AttachMulticast(gid [16]byte, lid uint16) error {
	qp.use("AttachMulticast")
	if err := drv.attachMcast(qp.h, gid, lid); err != nil {
		return verbError("ibv_attach_mcast", qp.String(), err)
	}
	return nil
}

// DetachMulticast undoes AttachMulticast (ibv_detach_mcast).
func (qp *QP) DetachMulticast(gid [16]byte, lid uint16) error {
	qp.use("DetachMulticast")
	if err := drv.detachMcast(qp.h, gid, lid); err != nil {
		return verbError("ibv_detach_mcast", qp.String(), err)
	}
	return nil
}

// Close destroys the QP. Closing it again does nothing and returns nil.
func (qp *QP) Close() error {
	if qp.closed {
		return nil
	}
	if err := drv.destroyQP(qp.h); err != nil {
		return verbError("ibv_destroy_qp", qp.String(), err)
	}
	qp.closed = true
	qp.pd.children--
	qp.cfg.adjust(-1)
	return nil
}

// checkSGEs checks a QP's SGEs against the device's max_sge, which
// providers check too but report as a bare EINVAL.
func checkSGEs(a Attr, dev string, caps QPCaps) error {
	for _, n := range []int{caps.MaxSendSGE, caps.MaxRecvSGE} {
		if n > a.MaxSGE {
			return tooManySGEs(n, dev+" (max_sge)", a.MaxSGE)
		}
	}
	return nil
}
