package verbs

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Stream is a send loop that runs inside the driver, in one call: one work
// request posted again and again, at most Depth outstanding, every
// SignalEvery-th signalled, the send CQ polled between posts. It is
// perftest's run_iter_bw.
//
// The same loop written with PostSend and Poll crosses into C twice per
// request. Every post that rings a software device's doorbell does that
// device's work in the call (Soft-RoCE sends the whole message there), so
// the Go scheduler sees a long call, hands the goroutine's processor to
// another thread, and moves the goroutine between threads, its monitor
// thread waking meanwhile: the test would measure the scheduler as much
// as the device (docs/rdma_bw.md has the figures). In one call the loop
// stays on one thread and the scheduler sleeps.
type Stream struct {
	// WR is posted again and again. The loop sets its ID to the
	// request's sequence number, from 0, and its Signaled flag.
	WR SendWR
	// Count is the number of requests to post; every one has completed
	// when Stream returns. 0 posts for Duration instead.
	Count int
	// Duration, with Count 0: post for this long, then one last
	// signalled request, and wait for everything to complete.
	Duration time.Duration
	// From and To, with Duration: the completions in this part of the
	// run are counted in StreamResult.Window (perftest's duration mode
	// leaves out a warm-up and a cool-down).
	From, To time.Duration
	// Depth is the most requests outstanding; at most the QP's send
	// queue.
	Depth int
	// SignalEvery signals every SignalEvery-th request (the last one
	// always, with Count): perftest's CQ moderation.
	SignalEvery int
	// Events sleeps on the CQ's completion channel when nothing can be
	// posted and the CQ is empty, instead of polling it; the end of the
	// context is seen within 100 ms while it sleeps.
	Events bool
	// Record keeps when each request was posted and each signalled one
	// completed (StreamResult.PostedAt and CompletedAt), for peak
	// bandwidth. Only with Count.
	Record bool
	// SGEs, when more than 1, splits WR's data into that many
	// scatter/gather entries (fewer for a message shorter than that),
	// python-rdma's rdma_bw --num-sge: each Length/SGEs+1 bytes, the
	// last one the rest. At most the QP's MaxSendSGE.
	SGEs int
}

// StreamResult is what a Stream measured. Times are from the start of the
// loop.
type StreamResult struct {
	Posted    int // requests posted
	Completed int // requests known complete: up to the last signalled one
	// Last is when the last completion came.
	Last time.Duration
	// PostedAt has when each request was posted and CompletedAt when
	// each signalled one completed (0 for the others); with Record.
	PostedAt, CompletedAt []time.Duration
	// Signaled lists the signalled requests in the order they
	// completed; with Record.
	Signaled []int
	// Window is the number of completions between From and To, and
	// WindowTime how long that part really took; with Duration.
	Window     int
	WindowTime time.Duration
}

// streamRun is one Stream as the driver sees it: the checked request and
// parameters in, the counts and times out.
type streamRun struct {
	wr                 sendWork // the request; id and the signalled flag set per post
	count              int      // 0: duration mode
	duration, from, to time.Duration
	depth, signalEvery int
	events, record     bool

	// sges is WR's data split as Stream.SGEs asks; nil: WR's one entry.
	sges []streamSGE

	posted, completed int
	last              time.Duration
	postedAt          []time.Duration // record: count entries
	completedAt       []time.Duration // record: count entries, 0 for unsignalled
	signaled          []int
	window            int
	windowTime        time.Duration
	// failed names the verb that failed when the driver returns an
	// error, or is "" for a completion with an error status (in wc) or
	// a run the context ended.
	failed string
	wc     WorkCompletion
}

// errStreamCompletion is what the driver returns for a completion with an
// error status; the completion is in streamRun.wc.
var errStreamCompletion = errors.New("a completion with an error status")

// Stream runs s on the QP, polling its send CQ. The QP must be in RTS and
// s well formed (Depth from 1 to the send queue's size, SignalEvery from
// 1 to Depth, a Count or a Duration, Record only with a Count, Events
// only with a CQ that has a channel), or Stream panics: these are bugs in
// the caller. A failing verb is a VerbError, a completion with an error
// status a CompletionError, and a context that ends stops the loop with
// its error. The result says how far the loop got, also with an error.
func (qp *QP) Stream(ctx context.Context, s Stream) (StreamResult, error) {
	qp.use("Stream")
	if qp.state != QPStateRTS {
		panic(fmt.Sprintf("verbs: Stream on %s in state %s: connect it first (RTS)", qp, qp.state))
	}
	cq := qp.cfg.SendCQ
	cq.use("Stream")
	switch {
	case s.Depth < 1 || s.Depth > qp.caps.MaxSendWR:
		panic(fmt.Sprintf("verbs: Stream on %s with depth %d: the send queue takes 1 to %d", qp, s.Depth, qp.caps.MaxSendWR))
	case s.SignalEvery < 1 || s.SignalEvery > s.Depth:
		// More than Depth would fill the queue with no completion to
		// wait for: the loop would never end.
		panic(fmt.Sprintf("verbs: Stream on %s signalling every %d requests with depth %d: want 1 to the depth", qp, s.SignalEvery, s.Depth))
	case s.Count < 0 || s.Count == 0 && s.Duration <= 0:
		panic(fmt.Sprintf("verbs: Stream on %s with count %d and duration %v: want one of them", qp, s.Count, s.Duration))
	case s.Record && s.Count == 0:
		panic(fmt.Sprintf("verbs: Stream on %s records times only with a count", qp))
	case s.Events && cq.ch == nil:
		panic(fmt.Sprintf("verbs: Stream on %s with events: %s has no completion channel", qp, cq))
	case s.SGEs < 0 || s.SGEs > max(qp.caps.MaxSendSGE, 1):
		panic(fmt.Sprintf("verbs: Stream on %s with %d SGEs: the QP takes up to %d", qp, s.SGEs, qp.caps.MaxSendSGE))
	case s.WR.SGL != nil:
		panic(fmt.Sprintf("verbs: Stream on %s with an SGL: Stream takes an MR, Offset and Length and splits them (SGEs)", qp))
	case s.WR.Op.atomic():
		panic(fmt.Sprintf("verbs: Stream on %s of %s: Stream sends, writes and reads", qp, s.WR.Op))
	}
	w, err := qp.checkSend(&s.WR)
	if err != nil {
		return StreamResult{}, verbError("ibv_post_send", qp.String(), err)
	}
	r := &streamRun{wr: w, count: s.Count, duration: s.Duration, from: s.From, to: s.To,
		depth: s.Depth, signalEvery: s.SignalEvery, events: s.Events, record: s.Record}
	r.wr.flags &^= sendSignaled // the loop signals every SignalEvery-th
	r.sges = splitSGEs(r.wr, s.SGEs)
	if s.Record {
		r.postedAt = make([]time.Duration, s.Count)
		r.completedAt = make([]time.Duration, s.Count)
	}
	var ch handle
	if s.Events {
		ch = cq.ch.h
	}
	err = drv.stream(ctx, qp.h, cq.h, ch, r)
	res := StreamResult{Posted: r.posted, Completed: r.completed, Last: r.last, PostedAt: r.postedAt,
		CompletedAt: r.completedAt, Signaled: r.signaled, Window: r.window, WindowTime: r.windowTime}
	switch {
	case err == nil:
		return res, nil
	case errors.Is(err, errStreamCompletion):
		return res, &CompletionError{Object: cq.String(), WC: r.wc}
	case r.failed == "ibv_get_cq_event":
		return res, verbError(r.failed, cq.ch.String(), err)
	case r.failed == "ibv_poll_cq" || r.failed == "ibv_req_notify_cq":
		return res, verbError(r.failed, cq.String(), err)
	case r.failed != "":
		return res, verbError(r.failed, qp.String(), err)
	}
	return res, err
}

// streamSGE is one scatter/gather entry of a split Stream request, in the
// request's MR (its lkey).
type streamSGE struct {
	addr   uint64
	length uint32
}

// splitSGEs splits w's data into n entries as python-rdma's rdma_bw does:
// blocks of length/n+1 bytes from the start, the last one what is left.
// It returns nil for n up to 1 and for a request with no data.
func splitSGEs(w sendWork, n int) []streamSGE {
	if n <= 1 || w.length == 0 {
		return nil
	}
	block := w.length/uint32(n) + 1
	var out []streamSGE
	for off := uint32(0); off < w.length; off += block {
		out = append(out, streamSGE{addr: w.addr + uint64(off), length: min(block, w.length-off)})
	}
	return out
}
