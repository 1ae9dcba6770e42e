package verbs

import "context"

// handle is a driver's opaque reference to one libibverbs object (a
// context, PD, MR, CQ, completion channel or QP). The cgo driver keeps its
// C pointers in it; the tests' fake keeps its own records.
type handle any

// driver is every libibverbs call this package makes. The cgo build talks
// to libibverbs; the noverbs build fails Open with ErrNoVerbs; tests
// install a fake that can fail any call. The exported types above it keep
// the state machine and the checks, so the fake exercises them.
type driver interface {
	// open opens the device called name ("" for the first one) and
	// returns its context and name; a name libibverbs does not list is
	// ErrDeviceNotFound.
	open(name string) (ctx handle, dev string, err error)
	closeDevice(ctx handle) error
	queryPort(ctx handle, port int) (Port, error)
	queryGID(ctx handle, port, index int) ([16]byte, error)
	// queryGIDEx is one GID entry (ibv_query_gid_ex); queryGIDTable the
	// valid entries of every port, in a table of max (ibv_query_gid_table).
	queryGIDEx(ctx handle, port, index int) (GIDEntry, error)
	queryGIDTable(ctx handle, max int) ([]GIDEntry, error)
	// queryPKey is entry index of port's P_Key table, in host order.
	queryPKey(ctx handle, port, index int) (uint16, error)
	// queryDevice is the device's attributes (ibv_query_device_ex);
	// queryDeviceLegacy those of struct ibv_device_attr
	// (ibv_query_device).
	queryDevice(ctx handle) (Attr, error)
	queryDeviceLegacy(ctx handle) (DeviceAttr, error)
	// asyncFD is the context's async event file descriptor; waitAsync
	// waits up to ms milliseconds for an event on it and reports whether
	// one is there; getAsyncEvent reads and acknowledges one.
	asyncFD(ctx handle) int
	waitAsync(ctx handle, ms int) (bool, error)
	getAsyncEvent(ctx handle) (AsyncEvent, error)

	allocPD(ctx handle) (handle, error)
	deallocPD(pd handle) error

	// mmap and munmap hold the memory MRs register: never Go heap memory,
	// which the garbage collector may move and C must not keep.
	mmap(n int) ([]byte, error)
	munmap(b []byte) error
	regMR(pd handle, b []byte, access Access) (mr handle, lkey, rkey uint32, err error)
	deregMR(mr handle) error

	createCompChannel(ctx handle) (handle, error)
	destroyCompChannel(ch handle) error
	// createCQ makes a CQ signalling its events on completion vector
	// vector.
	createCQ(ctx handle, cqe int, ch handle, vector int) (handle, error)
	// createCQEx makes an extended CQ whose completions carry what flags
	// ask for; pollCQ polls it the extended way.
	createCQEx(ctx handle, cqe int, ch handle, flags WCFlags) (handle, error)
	destroyCQ(cq handle) error
	reqNotifyCQ(cq handle, solicitedOnly bool) error
	// getCQEvent blocks until a CQ of ch has an event and returns it.
	getCQEvent(ch handle) (cq handle, err error)
	// waitChannel waits up to ms milliseconds for an event on ch and
	// reports whether one is there.
	waitChannel(ch handle, ms int) (bool, error)
	ackCQEvents(cq handle, n int)
	// cqEntries is the CQ's size as the provider made it (ibv_cq.cqe);
	// resizeCQ asks for cqe entries.
	cqEntries(cq handle) int
	resizeCQ(cq handle, cqe int) error
	pollCQ(cq handle, wc []WorkCompletion) (int, error)

	createSRQ(pd handle, maxWR, maxSGE int) (handle, error)
	openXRCD(ctx handle, fd int) (handle, error)
	closeXRCD(xrcd handle) error
	// createXRCSRQ makes an XRC SRQ whose receives complete on cq, and
	// returns its number.
	createXRCSRQ(pd, xrcd, cq handle, maxWR, maxSGE int) (handle, uint32, error)
	destroySRQ(srq handle) error
	postSRQRecv(srq handle, wrs []recvWork) error

	// allocMW returns the window and its first key; bindMW binds a type
	// 1 window through qp and returns its new key.
	allocMW(pd handle, typ MWType) (handle, uint32, error)
	deallocMW(mw handle) error
	bindMW(qp, mw handle, id uint64, flags sendFlags, b mwBindWork) (uint32, error)

	createAH(pd handle, a AHAttr) (handle, error)
	destroyAH(ah handle) error
	attachMcast(qp handle, gid [16]byte, lid uint16) error
	detachMcast(qp handle, gid [16]byte, lid uint16) error

	createQP(pd handle, a qpCreate) (qp handle, num uint32, caps QPCaps, err error)
	modifyQP(qp handle, m qpModify) error
	queryQP(qp handle) (QPAttr, error)
	queryDataInOrder(qp handle, op Opcode) (DataInOrder, error)
	destroyQP(qp handle) error
	// postSend and postRecv get checked work requests, at most
	// maxPostBatch at a time.
	postSend(qp handle, wrs []sendWork) error
	postRecv(qp handle, wrs []recvWork) error
	// stream runs r's send loop on qp (see QP.Stream), polling cq and,
	// with r.events, sleeping on ch. It fills r's results; a failing
	// verb sets r.failed and returns its errno, a completion with an
	// error status is errStreamCompletion (with r.wc), and a context
	// that ends returns its error.
	stream(ctx context.Context, qp, cq, ch handle, r *streamRun) error
}

// maxPostBatch is the most work requests one postSend or postRecv call
// carries; longer lists go in several calls.
const maxPostBatch = 64

// qpCreate is what ibv_create_qp gets: a QP of typ on two CQs.
type qpCreate struct {
	typ            QPType
	sendCQ, recvCQ handle
	srq            handle // nil: the QP has its own receive queue
	xrcd           handle // XRC_RECV: the domain
	caps           QPCaps
	signalAll      bool
	sendOps        SendOps // non-zero: an extended QP posting through ibv_wr_*
	// blockSelfMcastLB is IBV_QP_CREATE_BLOCK_SELF_MCAST_LB.
	blockSelfMcastLB bool
}

// qpModify is one state transition with the attributes it sets
// (ibv_modify_qp with the mask the transition needs).
type qpModify struct {
	typ  QPType // which attributes the transition sets
	to   QPState
	init InitAttr
	rtr  RTRAttr
	rts  RTSAttr
}

// sendWork is a checked send work request with its local memory resolved
// to addresses and keys: one SGE in addr, length and lkey, or two or more
// in sgl.
type sendWork struct {
	id     uint64
	op     Opcode
	flags  sendFlags
	addr   uint64
	length uint32
	lkey   uint32
	sgl    []sgeWork
	raddr  uint64
	rkey   uint32
	imm    uint32
	// Atomics: the compare (CMP_AND_SWP) or add (FETCH_AND_ADD) operand
	// and the swap value.
	compareAdd, swap uint64
	invRKey          uint32 // LOCAL_INV, SEND_WITH_INV
	// BIND_MW: the window, the key it gets, and what it binds.
	mw       handle
	bound    *MW
	bindRKey uint32
	bind     mwBindWork
	// UD: the address handle, the peer's QP number and Q_Key.
	ah    handle
	rqpn  uint32
	rqkey uint32
	srqn  uint32 // XRC: the peer's SRQ
}

// recvWork is a checked receive work request: one SGE in addr, length
// and lkey, or two or more in sgl.
type recvWork struct {
	id     uint64
	addr   uint64
	length uint32
	lkey   uint32
	sgl    []sgeWork
}

// sgeWork is one resolved scatter/gather entry (struct ibv_sge).
type sgeWork struct {
	addr   uint64
	length uint32
	lkey   uint32
}

// sendFlags are IBV_SEND_*.
type sendFlags uint32

const (
	sendSignaled  sendFlags = 1 << 1
	sendSolicited sendFlags = 1 << 2
	sendInline    sendFlags = 1 << 3
)

// drv is the driver the package uses: the cgo or the noverbs one, chosen
// by build tags; tests swap in a fake.
var drv driver = defaultDriver()
