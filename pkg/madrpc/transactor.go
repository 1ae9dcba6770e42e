package madrpc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
)

// Defaults of a Transactor, those of libibmad (rpc.c: 1000 ms, 3 tries
// in all) except the window, which libibmad does not have.
const (
	DefaultTimeout = time.Second
	DefaultRetries = 2
	DefaultWindow  = 16
)

// TransactorOptions tune a Transactor; zero values take the defaults.
type TransactorOptions struct {
	// Timeout is how long one try waits for its response.
	Timeout time.Duration
	// Retries is how many times a request is sent again after a try
	// timed out; negative means none.
	Retries int
	// Window bounds the requests in flight at once.
	Window int
	// Trace, when set, sees every MAD sent (out) and received. It must
	// not keep p, whose storage is reused.
	Trace func(out bool, p *mad.Packet)
	// Errors, when set, hears of every request that failed (the error Do
	// returns) and of every try that timed out with tries left (a
	// *RetryError): libibmad's -e, which shows them as they happen even
	// where a tool carries on past the failure.
	Errors func(err error)
	// SA, when set, is where Resolve asks for the path to a port GUID.
	SA *SAAddress
	// ViaSA answers SMP Gets from the SA's records instead of asking the
	// nodes (python-rdma's --sa): NodeInfo from the NodeRecord, PortInfo
	// from the PortInfoRecord, and so on, a directed route found as a LID
	// through the SA's LinkRecords. Sets, and Gets no record carries, go
	// as SMPs, as python-rdma's SATransactor sends them.
	ViaSA bool
	// Grace is added to Timeout for the wait in user space, while the
	// transport is asked to time a request out after Timeout. The kernel
	// refuses a resend whose TID it still waits on, so on umad the
	// kernel's own timeout report must come first; ibsim needs none.
	Grace time.Duration
	// Gone, when set, is called once when the transport fails for good
	// (its reader stopped on an error other than Close, or a Send error
	// wraps ErrGone). Every Do from then on fails at once with err; a
	// tool uses Gone to stop its fabric-wide work with one error rather
	// than one per query.
	Gone func(err error)
	// DryRun, when set, is handed the plan of every request whose method
	// changes state (Method.ChangesState) instead of the transport: Do
	// returns a reply marked Response.DryRun, Send nothing.
	DryRun func(ctx context.Context, p *Plan) error
	// MKey is the M_Key of every SMP whose request carries none
	// (Request.MKey 0), LID-routed and directed-route alike: the key
	// libibmad's smp_mkey_set gives every SMP of a port (-y). A port
	// whose M_Key check fails drops the SMP unanswered (IBA 14.2.4).
	MKey uint64
	// RMPPTotal is the longest an answer in RMPP segments may take from
	// its first segment to its last; past it this end aborts the
	// transfer (RMPP status 118, total time too long) and the request
	// fails. Zero is DefaultRMPPTotal.
	RMPPTotal time.Duration
}

// DefaultRMPPTotal is the Linux kernel MAD layer's total time for an RMPP
// transfer it receives (ib_mad_rmpp.c: 40 s from the first segment, then
// an ABORT with status 118), and so infiniband-diags' on real hardware:
// however often a slow sender moves the transfer on, it ends.
const DefaultRMPPTotal = 40 * time.Second

// How a try resends what it lost, as fractions of its timeout. A request
// the transport returned undelivered, an RMPP window of the request not
// acknowledged, the receiver's RMPP ACK when no segment came: each goes
// again after resendDiv of the timeout, within the try (IBA 13.6.4 and
// 13.6.5 for RMPP). An ACK the transport returned undelivered goes again
// after bounceDiv, sooner, since the sender sits idle until it comes. A
// try ends only when nothing moved it on for the whole timeout, so a
// stalled try has sent what it lost three more times by then; only a try
// that ends counts against the retries.
const (
	resendDiv = 4
	bounceDiv = 40
)

// Transactor sends requests over a Transport and matches responses to them
// by transaction ID. One goroutine reads the transport; any number of
// goroutines may call Do at once, up to Window of them in flight.
type Transactor struct {
	tr      mad.Transport
	opts    TransactorOptions
	window  chan struct{}
	nextTID atomic.Uint32

	mu      sync.Mutex
	waiters map[uint32]chan *mad.Packet
	rmpp    map[uint32]*rmppTransfer // by TID, requests whose answer may come in RMPP segments
	readErr error                    // set once the reader stops
	// userRMPP is set when the transport hands over RMPP segments as they
	// come, and the transactor reassembles them (ibsim); the kernel does
	// it itself for agents registered with RMPP.
	userRMPP bool

	stop   context.CancelFunc
	done   chan struct{}
	closed atomic.Bool

	res resolver
	// viaSADR keeps where directed routes end, for ViaSA.
	viaSADR drLIDs
}

// NewTransactor starts a Transactor on tr. Close stops it and closes tr.
func NewTransactor(tr mad.Transport, opts TransactorOptions) *Transactor {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Retries == 0 {
		opts.Retries = DefaultRetries
	} else if opts.Retries < 0 {
		opts.Retries = 0
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	ctx, stop := context.WithCancel(context.Background())
	t := &Transactor{
		tr:      tr,
		opts:    opts,
		window:  make(chan struct{}, opts.Window),
		waiters: make(map[uint32]chan *mad.Packet),
		rmpp:    make(map[uint32]*rmppTransfer),
		stop:    stop,
		done:    make(chan struct{}),
	}
	if r, ok := tr.(RMPPReassembler); !ok || !r.ReassemblesRMPP() {
		t.userRMPP = true
	}
	t.nextTID.Store(uint32(time.Now().UnixNano()))
	go t.read(ctx)
	return t
}

// LocalPort names the end port the transactor sends from.
func (t *Transactor) LocalPort() mad.LocalPort { return t.tr.LocalPort() }

// Window is how many requests may be in flight at once.
func (t *Transactor) Window() int { return t.opts.Window }

// Close stops the reader and closes the transport.
func (t *Transactor) Close() error {
	if !t.closed.CompareAndSwap(false, true) {
		return nil
	}
	t.stop()
	err := t.tr.Close()
	<-t.done
	return err
}

// read routes every packet the transport returns to the waiter of its TID;
// packets nobody waits for (late or duplicate responses) are dropped.
func (t *Transactor) read(ctx context.Context) {
	defer close(t.done)
	// p is reused until it is handed to a waiter: most packets of a big
	// RMPP answer are copied into their message and dropped.
	var p *mad.Packet
	for {
		if p == nil {
			p = &mad.Packet{MAD: make([]byte, mad.Size)}
		}
		err := t.tr.Recv(ctx, p)
		if err != nil {
			t.fail(err)
			return
		}
		if t.opts.Trace != nil {
			t.opts.Trace(false, p)
		}
		if len(p.MAD) < mad.HeaderLen {
			continue
		}
		var h mad.Header
		h.UnmarshalBinary(p.MAD)
		t.mu.Lock()
		w := t.waiters[uint32(h.TID)]
		x := t.rmpp[uint32(h.TID)]
		t.mu.Unlock()
		if p.Status != 0 && x != nil && mad.IsRMPPActive(h.MgmtClass, p.MAD) {
			// An ACK or a request segment of ours that the transport
			// returned undelivered: the transfer's timers send it
			// again; the try goes on.
			x.takeBounced(p)
			continue
		}
		if p.Status == 0 && mad.IsRMPPActive(h.MgmtClass, p.MAD) && !h.Method.IsResponse() {
			// The receiver's ACK (STOP, ABORT) of a request's own
			// segments: it moves the sender on; only a failure wakes the
			// waiter.
			if x == nil || mad.RMPPType(p.MAD[mad.RMPPHeaderOffset+1]) == mad.RMPPTypeData || !t.takeAck(ctx, x, p) {
				continue
			}
		}
		out := p
		if x != nil && p.Status == 0 && mad.IsRMPPActive(h.MgmtClass, p.MAD) && h.Method.IsResponse() {
			if out = t.takeSegment(ctx, x, p); out == nil {
				continue // a segment of a message not yet whole
			}
		}
		if w != nil {
			select {
			case w <- out:
				if out == p {
					p = nil // the waiter has it
				}
			default: // a reply for this try is already waiting
			}
		}
	}
}

// fail marks the transactor unusable: every waiter wakes and every later
// Do fails with err. The first call reports err to Options.Gone, unless
// Close caused it.
func (t *Transactor) fail(err error) {
	t.mu.Lock()
	first := t.readErr == nil
	if first {
		t.readErr = err
		for tid, w := range t.waiters {
			close(w)
			delete(t.waiters, tid)
		}
	}
	t.mu.Unlock()
	if first && t.opts.Gone != nil && !t.closed.Load() {
		t.opts.Gone(err)
	}
}

// Do sends r and waits for its response, sending again after each timeout
// up to the retries allowed. It returns a *TimeoutError when no response
// came, a *StatusError when the response's status is not zero (with the
// response), and a *ReplyError for a malformed response.
func (t *Transactor) Do(ctx context.Context, r *Request) (*Response, error) {
	resp, err := t.do(ctx, r)
	if err != nil && t.opts.Errors != nil && ctx.Err() == nil {
		t.opts.Errors(err)
	}
	return resp, err
}

func (t *Transactor) do(ctx context.Context, r *Request) (*Response, error) {
	if t.opts.DryRun != nil && r.Method.ChangesState() {
		return t.plan(ctx, r)
	}
	if t.opts.ViaSA && r.Class.IsSMP() {
		return t.doViaSA(ctx, r)
	}
	return t.transact(ctx, r)
}

// transact puts r on the transport and waits for its response: do past the
// dry run and --sa.
func (t *Transactor) transact(ctx context.Context, r *Request) (*Response, error) {
	r = t.withMKey(r)
	select {
	case t.window <- struct{}{}:
		defer func() { <-t.window }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	tid := t.nextTID.Add(1)
	timeout := t.opts.Timeout
	if r.Timeout > 0 {
		timeout = r.Timeout
	}
	class, err := r.class()
	if err != nil {
		return nil, err
	}
	// A GetMulti goes in RMPP segments itself, its data as long as it is.
	rmppReq := r.Method == mad.MethodGetMulti && class.HasRMPP()
	size := mad.Size
	hdr, _ := dataOffset(class)
	if rmppReq {
		size = max(mad.Size, hdr+len(r.Data))
	}
	var out *mad.Packet
	if rmppReq {
		out = &mad.Packet{MAD: make([]byte, size)}
	} else {
		// A MAD of one packet: its buffer goes back to the pool when
		// Do returns (a transport does not keep what it sends; an RMPP
		// request's segments may be resent after that).
		out = packetPool.Get().(*mad.Packet)
		defer packetPool.Put(out)
		buf := out.MAD[:mad.Size]
		clear(buf)
		*out = mad.Packet{MAD: buf}
	}
	out.Timeout = timeout
	if _, err = r.encode(out.MAD, uint64(tid)); err != nil {
		return nil, err
	}
	if rmppReq {
		(&mad.RMPPHeader{Version: mad.RMPPVersion, Type: mad.RMPPTypeData, Flags: mad.RMPPActive, RespTime: rmppRespTimeDefault}).MarshalTo(out.MAD)
	}
	out.Addr = r.Path.Address(class)

	w := make(chan *mad.Packet, 1)
	var x *rmppTransfer
	if t.userRMPP && class.HasRMPP() {
		x = newRMPPTransfer(hdr, out.Addr, timeout)
		if x.total = t.opts.RMPPTotal; x.total <= 0 {
			x.total = DefaultRMPPTotal
		}
	}
	t.mu.Lock()
	if t.readErr != nil {
		err := t.readErr
		t.mu.Unlock()
		return nil, fmt.Errorf("%v to %v: %w", r, r.Path, err)
	}
	t.waiters[tid] = w
	if x != nil {
		t.rmpp[tid] = x
	}
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.waiters, tid)
		delete(t.rmpp, tid)
		t.mu.Unlock()
	}()

	start := time.Now()
	sent, unsent := 0, 0
	timer := getTimer(timeout)
	defer putTimer(timer)
	for try := 1; ; try++ {
		n, err := t.sendRequest(ctx, out, x, rmppReq)
		var p *mad.Packet
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The transport took nothing for the whole timeout: a try
			// that timed out.
			unsent++
			err = nil
		case err != nil:
			return nil, t.failIfGone(fmt.Errorf("sending %v to %v: %w", r, r.Path, err))
		default:
			sent += n
			req := out
			if rmppReq && x != nil {
				req = nil
			}
			var again int
			p, again, err = t.wait(ctx, w, timer, x, req, timeout)
			sent += again
		}
		switch {
		case err != nil:
			return nil, fmt.Errorf("%v to %v: %w", r, r.Path, err)
		case x != nil && x.failed() != nil:
			e := *x.failed()
			e.Request, e.To = r.String(), r.Path.String()
			return nil, &e
		case p != nil:
			resp, err := t.response(r, class, p, try)
			if resp != nil {
				resp.Sent = sent
				if x != nil {
					resp.Sent += x.sentCount()
				}
			}
			return resp, err
		}
		// Timed out. A resend starts the responder's transfer over,
		// under a TID of its own: the responder may still be sending the
		// old transfer, and segments or ACKs of two transfers with one
		// TID would be taken for each other.
		if x != nil {
			if tid, err = t.renewTID(r, out, rmppReq, tid, w, x); err != nil {
				return nil, err
			}
			x.reset()
		}
		if try > t.opts.Retries {
			err := &TimeoutError{Request: r.String(), To: r.Path.String(), Tries: try, Elapsed: time.Since(start), Unsent: unsent, Class: class, MKey: r.MKey}
			if unsent > 0 {
				// The transport's peer read nothing for a whole
				// timeout (a stopped simulator): every other request
				// waits on it too.
				t.fail(err)
			}
			return nil, err
		}
		if t.opts.Errors != nil {
			t.opts.Errors(&RetryError{Request: r.String(), To: r.Path.String(), Retry: try, Timeout: timeout})
		}
	}
}

// renewTID moves the wait for r's answer from old to a fresh TID and
// encodes the request out again with it, returning the new TID. What
// still comes under old is dropped by read, as for any TID nobody waits
// on.
func (t *Transactor) renewTID(r *Request, out *mad.Packet, rmppReq bool, old uint32, w chan *mad.Packet, x *rmppTransfer) (uint32, error) {
	tid := t.nextTID.Add(1)
	if _, err := r.encode(out.MAD, uint64(tid)); err != nil {
		return old, err
	}
	if rmppReq {
		(&mad.RMPPHeader{Version: mad.RMPPVersion, Type: mad.RMPPTypeData, Flags: mad.RMPPActive, RespTime: rmppRespTimeDefault}).MarshalTo(out.MAD)
	}
	t.mu.Lock()
	delete(t.waiters, old)
	delete(t.rmpp, old)
	t.waiters[tid] = w
	t.rmpp[tid] = x
	t.mu.Unlock()
	select {
	case <-w: // an answer to the old TID that came as the try ended
	default:
	}
	return tid, nil
}

// withMKey returns r with the transactor's M_Key when r is an SMP that
// carries none; r itself is left alone, as callers may reuse it.
func (t *Transactor) withMKey(r *Request) *Request {
	if t.opts.MKey == 0 || r.MKey != 0 || !r.Class.IsSMP() {
		return r
	}
	keyed := *r
	keyed.MKey = t.opts.MKey
	return &keyed
}

// packetPool holds the request packets of Do, each with a MAD's buffer.
var packetPool = sync.Pool{New: func() any { return &mad.Packet{MAD: make([]byte, mad.Size)} }}

// timerPool holds the timers of Do. A stopped timer delivers nothing
// stale after Reset (Go 1.23's timers), so one can serve request after
// request.
var timerPool sync.Pool

// getTimer returns a timer that fires after d.
func getTimer(d time.Duration) *time.Timer {
	if tm, ok := timerPool.Get().(*time.Timer); ok {
		tm.Reset(d)
		return tm
	}
	return time.NewTimer(d)
}

// putTimer stops tm and keeps it for another request.
func putTimer(tm *time.Timer) {
	tm.Stop()
	timerPool.Put(tm)
}

// sendRequest sends a try of a request: one MAD, or a GetMulti's first
// RMPP window when this end runs RMPP (the kernel segments it otherwise).
// It returns how many MADs went.
func (t *Transactor) sendRequest(ctx context.Context, out *mad.Packet, x *rmppTransfer, rmppReq bool) (int, error) {
	if !rmppReq || x == nil {
		if err := t.send(ctx, out); err != nil {
			return 0, err
		}
		return 1, nil
	}
	s, err := NewRMPPSender(out.MAD, x.hdrLen)
	if err != nil {
		return 0, err
	}
	x.mu.Lock()
	x.out = s
	segs := s.Start()
	x.winDue = time.Now().Add(x.retry)
	x.mu.Unlock()
	for _, m := range segs {
		if err := t.send(ctx, &mad.Packet{MAD: m, Addr: out.Addr, Timeout: out.Timeout}); err != nil {
			return 0, err
		}
	}
	return len(segs), nil
}

// send hands p to the transport, traced at -vv.
func (t *Transactor) send(ctx context.Context, p *mad.Packet) error {
	if t.opts.Trace != nil {
		t.opts.Trace(true, p)
	}
	return t.tr.Send(ctx, p)
}

// sendRecovered sends an RMPP MAD whose loss the protocol recovers (an
// ACK, a window), so its error is dropped, unless the transport is gone.
func (t *Transactor) sendRecovered(ctx context.Context, p *mad.Packet) {
	if err := t.send(ctx, p); err != nil {
		t.failIfGone(fmt.Errorf("sending %s: %w", mad.RMPPType(p.MAD[mad.RMPPHeaderOffset+1]), err))
	}
}

// failIfGone fails the transactor when err says the transport is gone,
// and returns err.
func (t *Transactor) failIfGone(err error) error {
	if errors.Is(err, mad.ErrGone) {
		t.fail(err)
	}
	return err
}

// wait waits for the answer to a try just sent: the response, or the
// whole RMPP message (or the packet that ended its transfer, found with
// x.failed). It returns nil when the try timed out: no answer for the
// timeout and Grace, or with an RMPP answer, nothing moved the transfer
// on for that long, while its timers (rmppTick) resend what was lost. It
// also returns how many times it sent req again.
//
// A request the transport returns undelivered (Status ETIMEDOUT: the
// kernel reports one after the timeout, ibsim the moment it drops one)
// does not end the try at once, which would spend every try within
// milliseconds on a fault that outlasts them (a burst of drops, a route
// being reprogrammed). It goes again after a quarter of the timeout, as
// an RMPP window does, while the try's timeout, counted from the first
// send, has not run out; the retries count tries, not resends. A request
// the transport did not deliver cannot have been acted on, so sending it
// again is safe even for a Set. req is nil for a GetMulti sent in RMPP
// segments, whose window x resends.
func (t *Transactor) wait(ctx context.Context, w chan *mad.Packet, timer *time.Timer, x *rmppTransfer, req *mad.Packet, timeout time.Duration) (*mad.Packet, int, error) {
	sent := time.Now()
	grace := t.opts.Grace
	var resendAt time.Time // when the request, returned undelivered, goes again
	resends := 0
	var kick chan struct{}
	if x != nil {
		kick = x.kick
	}
	for {
		now := time.Now()
		base, due := sent, resendAt
		if x != nil {
			t.rmppTick(ctx, x, now)
			if x.failed() != nil {
				return nil, resends, nil
			}
			moved, xdue := x.timers()
			if moved.After(base) {
				base = moved
			}
			due = earliest(due, xdue)
		}
		end := base.Add(timeout + grace)
		switch {
		case !now.Before(end):
			return nil, resends, nil
		case !resendAt.IsZero() && !now.Before(resendAt):
			resendAt = time.Time{}
			ok, err := t.sendAgain(ctx, req)
			if err != nil {
				return nil, resends, err
			}
			if ok {
				resends++
			}
			continue
		}
		timer.Reset(earliest(due, end).Sub(now))
		select {
		case p, ok := <-w:
			p, err := t.answer(p, ok)
			switch {
			case err != nil:
				return nil, resends, err
			case p == nil:
				continue
			case p.Status == syscall.ETIMEDOUT:
				// The transport's own report came: there is no
				// kernel report left to wait for.
				grace = 0
				if req != nil && resendAt.IsZero() {
					resendAt = time.Now().Add(timeout / resendDiv)
				}
				continue
			}
			return p, resends, nil
		case <-timer.C:
		case <-kick:
		case <-ctx.Done():
			return nil, resends, ctx.Err()
		}
	}
}

// answer checks a packet the reader handed a waiter (ok false when the
// reader stopped): the answer, the request returned undelivered (Status
// ETIMEDOUT), or nil for our own request looped back.
func (t *Transactor) answer(p *mad.Packet, ok bool) (*mad.Packet, error) {
	if !ok {
		t.mu.Lock()
		err := t.readErr
		t.mu.Unlock()
		if errors.Is(err, context.Canceled) {
			err = mad.ErrClosed
		}
		return nil, err
	}
	switch p.Status {
	case 0:
	case syscall.ETIMEDOUT:
		return p, nil
	default:
		return nil, fmt.Errorf("transport status %v", p.Status)
	}
	var h mad.Header
	h.UnmarshalBinary(p.MAD)
	if !h.Method.IsResponse() && !mad.IsRMPPActive(h.MgmtClass, p.MAD) {
		return nil, nil // our own request looped back; not an answer
	}
	return p, nil
}

// sendAgain sends a request the transport returned undelivered once more,
// within its try. It reports whether the MAD went: a transport that took
// nothing for the timeout leaves the try to time out.
func (t *Transactor) sendAgain(ctx context.Context, req *mad.Packet) (bool, error) {
	err := t.send(ctx, req)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return false, nil
	}
	return false, t.failIfGone(fmt.Errorf("sending again: %w", err))
}

// response checks p answers r and wraps it.
func (t *Transactor) response(r *Request, class mad.Class, p *mad.Packet, tries int) (*Response, error) {
	bad := func(format string, a ...any) error {
		return &ReplyError{Request: r.String(), To: r.Path.String(), Reason: fmt.Sprintf(format, a...)}
	}
	off, _ := r.dataStart(class)
	// A reassembled RMPP message is as long as its data, which may be
	// less than a MAD.
	if len(p.MAD) < mad.Size && !(mad.IsRMPPActive(class, p.MAD) && len(p.MAD) >= off) {
		return nil, bad("%d bytes, want %d", len(p.MAD), mad.Size)
	}
	var h mad.Header
	h.UnmarshalBinary(p.MAD)
	switch {
	case h.MgmtClass != class:
		return nil, bad("class %v, want %v", h.MgmtClass, class)
	case h.AttrID != r.respAttr():
		return nil, bad("attribute %#04x, want %#04x", uint16(h.AttrID), uint16(r.respAttr()))
	}
	end := len(p.MAD)
	if class.IsSMP() {
		end = off + mad.SMPDataLen
	}
	resp := &Response{Header: h, MAD: p.MAD, Tries: tries, data: off, end: end}
	if st := h.Status &^ mad.DirectionBit; st != mad.StatusOK {
		return resp, &StatusError{Request: r.String(), To: r.Path.String(), Status: st, Class: h.MgmtClass}
	}
	return resp, nil
}

// Send sends r once without waiting for a response: a trap, whose
// TrapRepress nobody needs. A response that comes anyway is dropped.
func (t *Transactor) Send(ctx context.Context, r *Request) error {
	if t.opts.DryRun != nil && r.Method.ChangesState() {
		_, err := t.plan(ctx, r)
		return err
	}
	r = t.withMKey(r)
	out := &mad.Packet{MAD: make([]byte, mad.Size), Timeout: t.opts.Timeout}
	class, err := r.encode(out.MAD, uint64(t.nextTID.Add(1)))
	if err != nil {
		return err
	}
	out.Addr = r.Path.Address(class)
	if err := t.send(ctx, out); err != nil {
		return t.failIfGone(fmt.Errorf("sending %v to %v: %w", r, r.Path, err))
	}
	return nil
}
