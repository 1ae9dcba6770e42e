package verbs

import (
	"context"
	"fmt"
	"sync"
)

// CompChannel is a completion event channel (struct ibv_comp_channel):
// CQs made with it report, once asked with ReqNotify, that they have
// completions, so a waiter can sleep instead of polling.
type CompChannel struct {
	ctx    *Context
	h      handle
	id     int
	mu     sync.Mutex
	cqs    map[handle]*CQ
	closed bool
}

// CreateCompChannel makes a completion event channel.
func (c *Context) CreateCompChannel() (*CompChannel, error) {
	c.use("CreateCompChannel")
	h, err := drv.createCompChannel(c.h)
	if err != nil {
		return nil, verbError("ibv_create_comp_channel", c.name, err)
	}
	return &CompChannel{ctx: c, h: h, id: c.adopt(), cqs: map[handle]*CQ{}}, nil
}

// String names the channel in messages.
func (ch *CompChannel) String() string {
	return fmt.Sprintf("%s completion channel %d", ch.ctx.name, ch.id)
}

func (ch *CompChannel) use(what string) {
	ch.mu.Lock()
	closed := ch.closed
	ch.mu.Unlock()
	if closed {
		panic(fmt.Sprintf("verbs: %s on closed %s", what, ch))
	}
}

// Wait blocks until one of the channel's CQs has an event, acknowledges
// it and returns the CQ. Ask for the next event with ReqNotify, then poll
// the CQ empty before waiting again.
func (ch *CompChannel) Wait() (*CQ, error) {
	ch.use("Wait")
	h, err := drv.getCQEvent(ch.h)
	if err != nil {
		return nil, verbError("ibv_get_cq_event", ch.String(), err)
	}
	ch.mu.Lock()
	cq := ch.cqs[h]
	ch.mu.Unlock()
	if cq == nil {
		panic(fmt.Sprintf("verbs: %s reported an event for a CQ it does not know", ch))
	}
	drv.ackCQEvents(h, 1)
	return cq, nil
}

// WaitContext is Wait that gives up when ctx ends, returning its error:
// it sleeps on the channel in slices of 100 ms, so that a peer that died
// (no completion will ever come) does not keep a tool past SIGINT.
func (ch *CompChannel) WaitContext(ctx context.Context) (*CQ, error) {
	ch.use("WaitContext")
	for {
		ok, err := drv.waitChannel(ch.h, 100)
		if err != nil {
			return nil, verbError("poll", ch.String(), err)
		}
		if ok {
			return ch.Wait()
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// Close destroys the channel. Closing it again does nothing and returns
// nil; closing it while a CQ uses it panics.
func (ch *CompChannel) Close() error {
	ch.mu.Lock()
	closed, n := ch.closed, len(ch.cqs)
	ch.mu.Unlock()
	if closed {
		return nil
	}
	if n > 0 {
		panic(fmt.Sprintf("verbs: Close of %s with %d CQs still open", ch, n))
	}
	if err := drv.destroyCompChannel(ch.h); err != nil {
		return verbError("ibv_destroy_comp_channel", ch.String(), err)
	}
	ch.mu.Lock()
	ch.closed = true
	ch.mu.Unlock()
	ch.ctx.release()
	return nil
}

// CQ is a completion queue (struct ibv_cq). One goroutine at a time may
// poll it.
type CQ struct {
	ctx    *Context
	ch     *CompChannel
	h      handle
	id     int
	qps    int // QPs using it and not yet closed
	closed bool
}

// CreateCQ makes a CQ with room for at least cqe completions, reporting
// events on ch when ch is not nil, on completion vector 0.
func (c *Context) CreateCQ(cqe int, ch *CompChannel) (*CQ, error) {
	c.use("CreateCQ")
	return c.createCQ("CreateCQ", cqe, ch, 0)
}

// CreateCQOnVector is CreateCQ on completion vector vector, one of the
// Attr.NumCompVectors the device has (ibv_create_cq's comp_vector): a
// provider with several interrupt vectors signals the CQ's events on
// that one. A vector the device does not have is an error wrapping
// EINVAL, as is a cqe over Attr.MaxCQE.
func (c *Context) CreateCQOnVector(cqe int, ch *CompChannel, vector int) (*CQ, error) {
	c.use("CreateCQOnVector")
	if vector < 0 {
		panic(fmt.Sprintf("verbs: CreateCQOnVector(%d, vector %d) on %s: vectors count from 0", cqe, vector, c.name))
	}
	return c.createCQ("CreateCQOnVector", cqe, ch, vector)
}

func (c *Context) createCQ(what string, cqe int, ch *CompChannel, vector int) (*CQ, error) {
	var chh handle
	if ch != nil {
		ch.use(what)
		chh = ch.h
	}
	if cqe <= 0 {
		panic(fmt.Sprintf("verbs: %s(%d) on %s: want at least one entry", what, cqe, c.name))
	}
	h, err := drv.createCQ(c.h, cqe, chh, vector)
	if err != nil {
		return nil, verbError("ibv_create_cq", fmt.Sprintf("%s (%d entries, vector %d)", c.name, cqe, vector), err)
	}
	return c.adoptCQ(ch, h), nil
}

// adoptCQ makes the CQ of h, counted on c and known to ch.
func (c *Context) adoptCQ(ch *CompChannel, h handle) *CQ {
	cq := &CQ{ctx: c, ch: ch, h: h, id: c.adopt()}
	if ch != nil {
		ch.mu.Lock()
		ch.cqs[h] = cq
		ch.mu.Unlock()
	}
	return cq
}

// WCFlags are what an extended CQ's completions carry beyond the work
// request's ID, status and opcode (enum ibv_create_cq_wc_flags).
type WCFlags uint64

// Extended CQ completion fields.
const (
	WCWithByteLen             WCFlags = 1 << 0
	WCWithImm                 WCFlags = 1 << 1
	WCWithQPNum               WCFlags = 1 << 2
	WCWithSrcQP               WCFlags = 1 << 3
	WCWithSLID                WCFlags = 1 << 4
	WCWithSL                  WCFlags = 1 << 5
	WCWithDLIDPathBits        WCFlags = 1 << 6
	WCWithCompletionTimestamp WCFlags = 1 << 7
	// WCStandardFlags are the fields struct ibv_wc has
	// (IBV_WC_STANDARD_FLAGS).
	WCStandardFlags = WCWithByteLen | WCWithImm | WCWithQPNum | WCWithSrcQP | WCWithSLID | WCWithSL | WCWithDLIDPathBits
)

// CreateCQEx makes an extended CQ (ibv_create_cq_ex) whose completions
// carry what flags ask for: WorkCompletion's fields flags leaves out stay
// zero. Poll, Next, ReqNotify and a QP use it as any CQ. A provider
// without extended CQs, or without a field flags asks for (completion
// timestamps where Attr.CompletionTimestampMask is 0), is an error
// wrapping EOPNOTSUPP.
func (c *Context) CreateCQEx(cqe int, ch *CompChannel, flags WCFlags) (*CQ, error) {
	c.use("CreateCQEx")
	var chh handle
	if ch != nil {
		ch.use("CreateCQEx")
		chh = ch.h
	}
	if cqe <= 0 {
		panic(fmt.Sprintf("verbs: CreateCQEx(%d) on %s: want at least one entry", cqe, c.name))
	}
	h, err := drv.createCQEx(c.h, cqe, chh, flags)
	if err != nil {
		return nil, verbError("ibv_create_cq_ex", fmt.Sprintf("%s (%d entries, flags %#x)", c.name, cqe, uint64(flags)), err)
	}
	return c.adoptCQ(ch, h), nil
}

// String names the CQ in messages.
func (cq *CQ) String() string { return fmt.Sprintf("%s CQ %d", cq.ctx.name, cq.id) }

func (cq *CQ) use(what string) {
	if cq.closed {
		panic(fmt.Sprintf("verbs: %s on closed %s", what, cq))
	}
}

// WCOpcode is what a work completion completed (enum ibv_wc_opcode).
type WCOpcode uint32

// Work completion opcodes.
const (
	WCSend            WCOpcode = 0
	WCRDMAWrite       WCOpcode = 1
	WCRDMARead        WCOpcode = 2
	WCCompSwap        WCOpcode = 3 // an OpAtomicCmpAndSwp
	WCFetchAdd        WCOpcode = 4 // an OpAtomicFetchAndAdd
	WCBindMW          WCOpcode = 5 // an OpBindMW or a BindMW
	WCLocalInv        WCOpcode = 6 // an OpLocalInv
	WCRecv            WCOpcode = 128
	WCRecvRDMAWithImm WCOpcode = 129
)

// String names the opcode as verbs.h does, without the IBV_WC_ prefix.
func (o WCOpcode) String() string {
	switch o {
	case WCSend:
		return "SEND"
	case WCRDMAWrite:
		return "RDMA_WRITE"
	case WCRDMARead:
		return "RDMA_READ"
	case WCCompSwap:
		return "COMP_SWAP"
	case WCFetchAdd:
		return "FETCH_ADD"
	case WCBindMW:
		return "BIND_MW"
	case WCLocalInv:
		return "LOCAL_INV"
	case WCRecv:
		return "RECV"
	case WCRecvRDMAWithImm:
		return "RECV_RDMA_WITH_IMM"
	}
	return fmt.Sprintf("opcode %d", uint32(o))
}

// WorkCompletion is one entry a CQ returns (struct ibv_wc).
type WorkCompletion struct {
	ID        uint64 // the work request's ID
	Status    WCStatus
	Opcode    WCOpcode
	VendorErr uint32
	ByteLen   uint32 // bytes received (receive completions)
	Imm       uint32 // immediate data in host order, when HasImm
	HasImm    bool
	QPNum     uint32
	SrcQP     uint32
	// InvRKey is the key a received OpSendInv invalidated, when HasInv.
	InvRKey uint32
	HasInv  bool
	// Timestamp is when the device completed the request, in its clock's
	// ticks (Attr.HCACoreClock kHz, Attr.CompletionTimestampMask wide):
	// an extended CQ made with WCWithCompletionTimestamp sets it and
	// HasTimestamp.
	Timestamp    uint64
	HasTimestamp bool
	// SLID, SL and DLIDPathBits are where a UD receive came from (its
	// LRH); GRH says the first 40 bytes of the receive buffer hold the
	// datagram's GRH (on RoCE v2 over IPv4, its IPv4 header in the last
	// 20). A reply's address handle comes from them.
	SLID         uint16
	SL           uint8
	DLIDPathBits uint8
	GRH          bool
}

// Poll moves up to len(wc) completions into wc and returns how many. A
// completion with an error status is returned like any other: its Err
// says what failed.
func (cq *CQ) Poll(wc []WorkCompletion) (int, error) {
	cq.use("Poll")
	if len(wc) == 0 {
		return 0, nil
	}
	n, err := drv.pollCQ(cq.h, wc)
	if err != nil {
		return 0, verbError("ibv_poll_cq", cq.String(), err)
	}
	return n, nil
}

// nextCheckEvery is how many empty polls Next makes between looks at its
// context: a poll is a few nanoseconds of the CPU, a look at the context
// takes a lock.
const nextCheckEvery = 1024

// Next polls the CQ until it has a completion and returns it: one work
// request's end, the way a program that posts one request at a time
// waits for it. A completion whose status is not success comes back with
// its CompletionError (wc.Err). Next spins on the CPU (as rdma-core's
// examples do without events); a CQ with a completion channel can sleep
// instead with ReqNotify and its channel's WaitContext. The context
// ending stops the wait with its error.
func (cq *CQ) Next(ctx context.Context) (WorkCompletion, error) {
	var wc [1]WorkCompletion
	for empty := 0; ; empty++ {
		n, err := cq.Poll(wc[:])
		if err != nil {
			return WorkCompletion{}, err
		}
		if n == 1 {
			return wc[0], wc[0].Err(cq)
		}
		if empty%nextCheckEvery == nextCheckEvery-1 && ctx.Err() != nil {
			return WorkCompletion{}, ctx.Err()
		}
	}
}

// Err is a CompletionError for a completion whose status is not success,
// and nil otherwise. cq names the queue in the message.
func (wc *WorkCompletion) Err(cq *CQ) error {
	if wc.Status == WCSuccess {
		return nil
	}
	return &CompletionError{Object: cq.String(), WC: *wc}
}

// ReqNotify asks for an event on the CQ's channel at the next completion
// (only a solicited one when solicitedOnly). A CQ made without a channel
// panics.
func (cq *CQ) ReqNotify(solicitedOnly bool) error {
	cq.use("ReqNotify")
	if cq.ch == nil {
		panic(fmt.Sprintf("verbs: ReqNotify on %s, which has no completion channel", cq))
	}
	if err := drv.reqNotifyCQ(cq.h, solicitedOnly); err != nil {
		return verbError("ibv_req_notify_cq", cq.String(), err)
	}
	return nil
}

// Close destroys the CQ. Closing it again does nothing and returns nil;
// closing it while a QP uses it panics.
func (cq *CQ) Close() error {
	if cq.closed {
		return nil
	}
	if cq.qps > 0 {
		panic(fmt.Sprintf("verbs: Close of %s with %d QPs still using it", cq, cq.qps))
	}
	if err := drv.destroyCQ(cq.h); err != nil {
		return verbError("ibv_destroy_cq", cq.String(), err)
	}
	cq.closed = true
	if cq.ch != nil {
		cq.ch.mu.Lock()
		delete(cq.ch.cqs, cq.h)
		cq.ch.mu.Unlock()
	}
	cq.ctx.release()
	return nil
}
