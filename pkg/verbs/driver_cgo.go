//go:build cgo && !noverbs

package verbs

/*
#cgo LDFLAGS: -ldl
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#define IBT_DEFINE
#include "ibt_dl.h"

// ibt_swr and ibt_rwr are work requests without pointers, which Go code
// fills in C memory; the helpers below build the ibv_*_wr lists from them
// and post them in one call.
struct ibt_swr {
	uint64_t wr_id, addr, raddr;
	uint32_t length, lkey, rkey, imm;
	int opcode, flags;
};

struct ibt_rwr {
	uint64_t wr_id, addr;
	uint32_t length, lkey;
};

// ibt_wc is struct ibv_wc's fields without its unions, immediate data in
// host order.
struct ibt_wc {
	uint64_t wr_id;
	uint32_t status, opcode, vendor_err, byte_len, imm, has_imm, qp_num, src_qp;
};

// ibt_build_swr makes wr (with its one SGE in sge) from in; next is NULL.
static void ibt_build_swr(const struct ibt_swr *in, struct ibv_send_wr *wr, struct ibv_sge *sge) {
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = in->wr_id;
	if (in->length) {
		sge->addr = in->addr;
		sge->length = in->length;
		sge->lkey = in->lkey;
		wr->sg_list = sge;
		wr->num_sge = 1;
	}
	wr->opcode = in->opcode;
	wr->send_flags = in->flags;
	wr->wr.rdma.remote_addr = in->raddr;
	wr->wr.rdma.rkey = in->rkey;
	if (in->opcode == IBV_WR_RDMA_WRITE_WITH_IMM || in->opcode == IBV_WR_SEND_WITH_IMM)
		wr->imm_data = htonl(in->imm);
}

static int ibt_post_send(struct ibv_qp *qp, struct ibt_swr *in, int n, struct ibv_send_wr *wr, struct ibv_sge *sge) {
	struct ibv_send_wr *bad = NULL;
	int i;
	for (i = 0; i < n; i++) {
		ibt_build_swr(&in[i], &wr[i], &sge[i]);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return ibv_post_send(qp, wr, &bad);
}

static int ibt_post_recv(struct ibv_qp *qp, struct ibt_rwr *in, int n, struct ibv_recv_wr *wr, struct ibv_sge *sge) {
	struct ibv_recv_wr *bad = NULL;
	int i;
	for (i = 0; i < n; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = in[i].wr_id;
		sge[i].addr = in[i].addr;
		sge[i].length = in[i].length;
		sge[i].lkey = in[i].lkey;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return ibv_post_recv(qp, wr, &bad);
}

static void ibt_flat_wc(const struct ibv_wc *wc, struct ibt_wc *out) {
	out->wr_id = wc->wr_id;
	out->status = wc->status;
	out->opcode = wc->opcode;
	out->vendor_err = wc->vendor_err;
	out->byte_len = wc->byte_len;
	out->has_imm = (wc->wc_flags & IBV_WC_WITH_IMM) != 0;
	out->imm = out->has_imm ? ntohl(wc->imm_data) : 0;
	out->qp_num = wc->qp_num;
	out->src_qp = wc->src_qp;
}

static int ibt_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc, struct ibt_wc *out) {
	int got = ibv_poll_cq(cq, n, wc), i;
	for (i = 0; i < got; i++)
		ibt_flat_wc(&wc[i], &out[i]);
	return got;
}

// ibt_stream is one QP.Stream run in C (stream.go says why): the request
// and parameters in, the counts and cycle stamps out.
struct ibt_stream {
	struct ibt_swr wr;
	int64_t count, duration_ns, from_ns, to_ns;
	int depth, signal_every, events, record;
	uint64_t *posted, *completed; // record: count cycle stamps each
	int stop;                     // set by Go when the context ends

	int64_t scnt, ccnt, window, window_ns, start_ns, end_ns;
	uint64_t start_cyc, end_cyc, last_cyc;
	int failed, err;
	struct ibt_wc wc;
};

enum { IBT_FAIL_POST = 1, IBT_FAIL_POLL, IBT_FAIL_WC, IBT_FAIL_NOTIFY, IBT_FAIL_EVENT, IBT_STOPPED };

static int64_t ibt_mono_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// ibt_cycles is the CPU's cycle counter where user space may read it, as
// perftest's get_cycles: reading the clock can be a system call (a guest
// whose clock source is the HPET), too slow for a stamp per request.
// Stamps become times against two clock readings, at the start and the
// end of the run.
static inline uint64_t ibt_cycles(void) {
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return (uint64_t)ibt_mono_ns();
#endif
}

static int ibt_stream_post(struct ibv_qp *qp, struct ibt_stream *s, struct ibv_send_wr *wr, int signalled) {
	struct ibv_send_wr *bad = NULL;
	int rc;
	wr->wr_id = (uint64_t)s->scnt;
	wr->send_flags = s->wr.flags | (signalled ? IBV_SEND_SIGNALED : 0);
	if (s->record)
		s->posted[s->scnt] = ibt_cycles();
	rc = ibv_post_send(qp, wr, &bad);
	if (rc != 0) {
		s->failed = IBT_FAIL_POST;
		s->err = rc > 0 ? rc : errno;
		return -1;
	}
	s->scnt++;
	return 0;
}

#define IBT_STREAM_WC 16

// ibt_stream_stopped reports whether Go asked the loop to stop (the
// context ended), marking the run stopped.
static int ibt_stream_stopped(struct ibt_stream *s) {
	if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		s->failed = IBT_STOPPED;
		return 1;
	}
	return 0;
}

// ibt_stream_reap polls the CQ once; with events, when the CQ is empty,
// it asks for an event, polls again and sleeps on the channel. It returns
// the completions taken, or -1 with s->failed set.
static int ibt_stream_reap(struct ibv_cq *cq, struct ibv_comp_channel *ch, struct ibt_stream *s) {
	struct ibv_wc wc[IBT_STREAM_WC];
	int n = ibv_poll_cq(cq, IBT_STREAM_WC, wc), i, rc;
	if (n == 0 && s->events) {
		if ((rc = ibv_req_notify_cq(cq, 0)) != 0) {
			s->failed = IBT_FAIL_NOTIFY;
			s->err = rc > 0 ? rc : errno;
			return -1;
		}
		n = ibv_poll_cq(cq, IBT_STREAM_WC, wc);
		if (n == 0) {
			struct ibv_cq *ecq;
			void *ectx;
			struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};
			// Wait for the event in slices, so that the end of the
			// run's context is seen while no completion comes (a
			// peer that died).
			for (;;) {
				int pr = poll(&pfd, 1, 100);
				if (pr > 0)
					break;
				if (pr < 0 && errno != EINTR) {
					s->failed = IBT_FAIL_EVENT;
					s->err = errno;
					return -1;
				}
				if (ibt_stream_stopped(s))
					return -1;
			}
			if (ibtv_get_cq_event(ch, &ecq, &ectx) != 0) {
				s->failed = IBT_FAIL_EVENT;
				s->err = errno;
				return -1;
			}
			ibtv_ack_cq_events(ecq, 1);
			n = ibv_poll_cq(cq, IBT_STREAM_WC, wc);
		}
	}
	if (n < 0) {
		s->failed = IBT_FAIL_POLL;
		s->err = EIO;
		return -1;
	}
	for (i = 0; i < n; i++) {
		uint64_t now;
		if (wc[i].status != IBV_WC_SUCCESS) {
			ibt_flat_wc(&wc[i], &s->wc);
			s->failed = IBT_FAIL_WC;
			return -1;
		}
		now = ibt_cycles();
		s->ccnt = (int64_t)wc[i].wr_id + 1;
		s->last_cyc = now;
		if (s->record && wc[i].wr_id < (uint64_t)s->count)
			s->completed[wc[i].wr_id] = now;
	}
	return n;
}

// ibt_stream_run is perftest's run_iter_bw: with a count, post until count
// requests went and all completed; otherwise post for duration_ns,
// counting the completions between from_ns and to_ns, then one last
// signalled request, and wait for all.
static void ibt_stream_run(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_comp_channel *ch, struct ibt_stream *s) {
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	int mod = s->signal_every, n;
	ibt_build_swr(&s->wr, &wr, &sge); // the ID and flags are set per post
	s->start_ns = ibt_mono_ns();
	s->start_cyc = s->last_cyc = ibt_cycles();
	if (s->count > 0) {
		while (s->ccnt < s->count) {
			while (s->scnt < s->count && s->scnt - s->ccnt < s->depth)
				if (ibt_stream_post(qp, s, &wr, s->scnt % mod == mod - 1 || s->scnt == s->count - 1) < 0)
					goto out;
			if (ibt_stream_reap(cq, ch, s) < 0 || ibt_stream_stopped(s))
				goto out;
		}
		goto out;
	}
	{
		int sampling = 0, sampled = 0, idle = 0, check = 1;
		int64_t c0 = 0, t0 = 0;
		for (;;) {
			// The clock is read when completions came, and every 64
			// empty polls: it may be a system call.
			if (check) {
				int64_t now = ibt_mono_ns() - s->start_ns;
				if (!sampling && !sampled && now >= s->from_ns) {
					sampling = 1;
					c0 = s->ccnt;
					t0 = now;
				}
				if (sampling && now >= s->to_ns) {
					sampling = 0;
					sampled = 1;
					s->window = s->ccnt - c0;
					s->window_ns = now - t0;
				}
				if (now >= s->duration_ns)
					break;
			}
			while (s->scnt - s->ccnt < s->depth)
				if (ibt_stream_post(qp, s, &wr, s->scnt % mod == mod - 1) < 0)
					goto out;
			if ((n = ibt_stream_reap(cq, ch, s)) < 0 || ibt_stream_stopped(s))
				goto out;
			check = n > 0 || ++idle % 64 == 0;
		}
		while (s->scnt - s->ccnt >= s->depth)
			if (ibt_stream_reap(cq, ch, s) < 0 || ibt_stream_stopped(s))
				goto out;
		if (ibt_stream_post(qp, s, &wr, 1) < 0)
			goto out;
		while (s->ccnt < s->scnt)
			if (ibt_stream_reap(cq, ch, s) < 0 || ibt_stream_stopped(s))
				goto out;
	}
out:
	s->end_ns = ibt_mono_ns();
	s->end_cyc = ibt_cycles();
}

static int ibt_req_notify(struct ibv_cq *cq, int solicited) { return ibv_req_notify_cq(cq, solicited); }

static struct ibv_qp *ibt_create_qp(struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
		int swr, int rwr, int ssge, int rsge, int inl, int sigall, struct ibv_qp_cap *got) {
	struct ibv_qp_init_attr a;
	struct ibv_qp *qp;
	memset(&a, 0, sizeof(a));
	a.send_cq = scq;
	a.recv_cq = rcq;
	a.qp_type = IBV_QPT_RC;
	a.sq_sig_all = sigall;
	a.cap.max_send_wr = swr;
	a.cap.max_recv_wr = rwr;
	a.cap.max_send_sge = ssge;
	a.cap.max_recv_sge = rsge;
	a.cap.max_inline_data = inl;
	qp = ibtv_create_qp(pd, &a);
	if (qp)
		*got = a.cap;
	return qp;
}

static uint32_t ibt_qp_num(struct ibv_qp *qp) { return qp->qp_num; }

static int ibt_to_init(struct ibv_qp *qp, int port, int pkey_index, int access) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = port;
	a.pkey_index = pkey_index;
	a.qp_access_flags = access;
	return ibtv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int ibt_to_rtr(struct ibv_qp *qp, int port, int mtu, uint32_t dqpn, uint32_t rq_psn, int dlid, int sl,
		int global, const uint8_t *dgid, int sgid_index, int hop_limit, int tclass, uint32_t flow_label,
		int max_dest_rd_atomic, int min_rnr_timer) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = max_dest_rd_atomic;
	a.min_rnr_timer = min_rnr_timer;
	a.ah_attr.dlid = dlid;
	a.ah_attr.sl = sl;
	a.ah_attr.port_num = port;
	if (global) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, dgid, 16);
		a.ah_attr.grh.sgid_index = sgid_index;
		a.ah_attr.grh.hop_limit = hop_limit;
		a.ah_attr.grh.traffic_class = tclass;
		a.ah_attr.grh.flow_label = flow_label;
	}
	return ibtv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

static int ibt_to_rts(struct ibv_qp *qp, uint32_t sq_psn, int timeout, int retry, int rnr_retry, int max_rd_atomic) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = timeout;
	a.retry_cnt = retry;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = max_rd_atomic;
	return ibtv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int ibt_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq) {
	void *cq_ctx;
	return ibtv_get_cq_event(ch, cq, &cq_ctx);
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func defaultDriver() driver { return &cDriver{cqs: map[*C.struct_ibv_cq]*cCQ{}} }

// cDriver is libibverbs through cgo. Its handles are the types below,
// which hold C pointers and the C memory each object's calls reuse (so a
// post or a poll allocates nothing).
type cDriver struct {
	mu  sync.Mutex
	cqs map[*C.struct_ibv_cq]*cCQ // for ibv_get_cq_event
}

type cCQ struct {
	cq   *C.struct_ibv_cq
	wc   *C.struct_ibv_wc // maxPostBatch entries
	flat *C.struct_ibt_wc // as many
}

type cQP struct {
	qp    *C.struct_ibv_qp
	swr   *C.struct_ibt_swr
	rwr   *C.struct_ibt_rwr
	sends *C.struct_ibv_send_wr
	recvs *C.struct_ibv_recv_wr
	sges  *C.struct_ibv_sge
}

type cMR struct{ mr *C.struct_ibv_mr }

// rcErr is the errno of a call that returns it (ibv_modify_qp,
// ibv_post_send, ...): its return code, or errno when that is only -1.
func rcErr(rc C.int, err error) error {
	if rc < 0 && err != nil {
		return err
	}
	if rc < 0 {
		rc = -rc
	}
	return syscall.Errno(rc)
}

func (d *cDriver) open(name string) (handle, string, error) {
	var ctx *C.struct_ibv_context
	var dev string
	err := list(func(l **C.struct_ibv_device, n int) error {
		for i := range n {
			dv := C.ibt_at(l, C.int(i))
			dn := C.GoString(C.ibtv_get_device_name(dv))
			if name != "" && dn != name {
				continue
			}
			c, err := C.ibtv_open_device(dv)
			if c == nil {
				return verbError("ibv_open_device", dn, err)
			}
			ctx, dev = c, dn
			return nil
		}
		if name == "" {
			return fmt.Errorf("no RDMA devices found: %w", ErrDeviceNotFound)
		}
		return fmt.Errorf("%s: %w", name, ErrDeviceNotFound)
	})
	if err != nil {
		var ve *VerbError
		if errors.As(err, &ve) || errors.Is(err, ErrDeviceNotFound) || errors.Is(err, ErrNoLibibverbs) {
			return nil, "", err
		}
		// The list itself failed (no uverbs devices, no kernel support).
		return nil, "", &VerbError{Verb: "ibv_get_device_list", Object: "RDMA devices", Err: errors.Unwrap(err)}
	}
	return ctx, dev, nil
}

func (d *cDriver) closeDevice(ctx handle) error {
	if rc, err := C.ibtv_close_device(ctx.(*C.struct_ibv_context)); rc != 0 {
		return rcErr(rc, err)
	}
	return nil
}

func (d *cDriver) queryPort(ctx handle, port int) (Port, error) {
	var pa C.struct_ibv_port_attr
	if rc, err := C.ibt_query_port_attr(ctx.(*C.struct_ibv_context), C.int(port), &pa); rc != 0 {
		return Port{}, rcErr(rc, err)
	}
	return portFromAttr(port, &pa), nil
}

func (d *cDriver) queryGID(ctx handle, port, index int) ([16]byte, error) {
	var gid C.union_ibv_gid
	var g [16]byte
	if rc, err := C.ibtv_query_gid(ctx.(*C.struct_ibv_context), C.uint8_t(port), C.int(index), &gid); rc != 0 {
		return g, rcErr(rc, err)
	}
	copy(g[:], C.GoBytes(unsafe.Pointer(&gid), 16))
	return g, nil
}

func (d *cDriver) allocPD(ctx handle) (handle, error) {
	pd, err := C.ibtv_alloc_pd(ctx.(*C.struct_ibv_context))
	if pd == nil {
		return nil, errnoOr(err, C.int(syscall.ENOMEM))
	}
	return pd, nil
}

func (d *cDriver) deallocPD(pd handle) error {
	if rc, err := C.ibtv_dealloc_pd(pd.(*C.struct_ibv_pd)); rc != 0 {
		return rcErr(rc, err)
	}
	return nil
}

func (d *cDriver) mmap(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
}

func (d *cDriver) munmap(b []byte) error { return unix.Munmap(b) }

func (d *cDriver) regMR(pd handle, b []byte, access Access) (handle, uint32, uint32, error) {
	// b is mmap'd memory, not the Go heap: C may keep its address.
	mr, err := C.ibtv_reg_mr(pd.(*C.struct_ibv_pd), unsafe.Pointer(unsafe.SliceData(b)), C.size_t(len(b)), C.int(access))
	if mr == nil {
		return nil, 0, 0, errnoOr(err, C.int(syscall.EINVAL))
	}
	return &cMR{mr: mr}, uint32(mr.lkey), uint32(mr.rkey), nil
}

func (d *cDriver) deregMR(mr handle) error {
	if rc, err := C.ibtv_dereg_mr(mr.(*cMR).mr); rc != 0 {
		return rcErr(rc, err)
	}
	return nil
}

func (d *cDriver) createCompChannel(ctx handle) (handle, error) {
	ch, err := C.ibtv_create_comp_channel(ctx.(*C.struct_ibv_context))
	if ch == nil {
		return nil, errnoOr(err, C.int(syscall.ENOMEM))
	}
	return ch, nil
}

func (d *cDriver) destroyCompChannel(ch handle) error {
	if rc, err := C.ibtv_destroy_comp_channel(ch.(*C.struct_ibv_comp_channel)); rc != 0 {
		return rcErr(rc, err)
	}
	return nil
}

func (d *cDriver) createCQ(ctx handle, cqe int, ch handle) (handle, error) {
	var cch *C.struct_ibv_comp_channel
	if ch != nil {
		cch = ch.(*C.struct_ibv_comp_channel)
	}
	cq, err := C.ibtv_create_cq(ctx.(*C.struct_ibv_context), C.int(cqe), nil, cch, 0)
	if cq == nil {
		return nil, errnoOr(err, C.int(syscall.ENOMEM))
	}
	h := &cCQ{cq: cq,
		wc:   (*C.struct_ibv_wc)(C.calloc(maxPostBatch, C.sizeof_struct_ibv_wc)),
		flat: (*C.struct_ibt_wc)(C.calloc(maxPostBatch, C.sizeof_struct_ibt_wc))}
	d.mu.Lock()
	d.cqs[cq] = h
	d.mu.Unlock()
	return h, nil
}

func (d *cDriver) destroyCQ(cq handle) error {
	h := cq.(*cCQ)
	if rc, err := C.ibtv_destroy_cq(h.cq); rc != 0 {
		return rcErr(rc, err)
	}
	d.mu.Lock()
	delete(d.cqs, h.cq)
	d.mu.Unlock()
	C.free(unsafe.Pointer(h.wc))
	C.free(unsafe.Pointer(h.flat))
	return nil
}

func (d *cDriver) reqNotifyCQ(cq handle, solicitedOnly bool) error {
	s := C.int(0)
	if solicitedOnly {
		s = 1
	}
	if rc := C.ibt_req_notify(cq.(*cCQ).cq, s); rc != 0 {
		return rcErr(rc, nil)
	}
	return nil
}

func (d *cDriver) getCQEvent(ch handle) (handle, error) {
	var cq *C.struct_ibv_cq
	if rc, err := C.ibt_get_cq_event(ch.(*C.struct_ibv_comp_channel), &cq); rc != 0 {
		return nil, rcErr(rc, err)
	}
	d.mu.Lock()
	h := d.cqs[cq]
	d.mu.Unlock()
	if h == nil {
		return nil, syscall.ENOENT
	}
	return h, nil
}

func (d *cDriver) ackCQEvents(cq handle, n int) { C.ibtv_ack_cq_events(cq.(*cCQ).cq, C.uint(n)) }

func (d *cDriver) pollCQ(cq handle, wc []WorkCompletion) (int, error) {
	h := cq.(*cCQ)
	n := C.ibt_poll(h.cq, C.int(min(len(wc), maxPostBatch)), h.wc, h.flat)
	if n < 0 {
		return 0, syscall.EIO
	}
	for i, f := range unsafe.Slice(h.flat, int(n)) {
		wc[i] = wcFromC(&f)
	}
	return int(n), nil
}

func wcFromC(f *C.struct_ibt_wc) WorkCompletion {
	return WorkCompletion{ID: uint64(f.wr_id), Status: WCStatus(f.status), Opcode: WCOpcode(f.opcode),
		VendorErr: uint32(f.vendor_err), ByteLen: uint32(f.byte_len), Imm: uint32(f.imm), HasImm: f.has_imm != 0,
		QPNum: uint32(f.qp_num), SrcQP: uint32(f.src_qp)}
}

func (d *cDriver) createQP(pd handle, a qpCreate) (handle, uint32, QPCaps, error) {
	var got C.struct_ibv_qp_cap
	sigall := C.int(0)
	if a.signalAll {
		sigall = 1
	}
	c := a.caps
	qp, err := C.ibt_create_qp(pd.(*C.struct_ibv_pd), a.sendCQ.(*cCQ).cq, a.recvCQ.(*cCQ).cq,
		C.int(c.MaxSendWR), C.int(c.MaxRecvWR), C.int(c.MaxSendSGE), C.int(c.MaxRecvSGE), C.int(c.MaxInlineData), sigall, &got)
	if qp == nil {
		return nil, 0, QPCaps{}, errnoOr(err, C.int(syscall.EINVAL))
	}
	h := &cQP{qp: qp,
		swr:   (*C.struct_ibt_swr)(C.calloc(maxPostBatch, C.sizeof_struct_ibt_swr)),
		rwr:   (*C.struct_ibt_rwr)(C.calloc(maxPostBatch, C.sizeof_struct_ibt_rwr)),
		sends: (*C.struct_ibv_send_wr)(C.calloc(maxPostBatch, C.sizeof_struct_ibv_send_wr)),
		recvs: (*C.struct_ibv_recv_wr)(C.calloc(maxPostBatch, C.sizeof_struct_ibv_recv_wr)),
		sges:  (*C.struct_ibv_sge)(C.calloc(maxPostBatch, C.sizeof_struct_ibv_sge))}
	caps := QPCaps{MaxSendWR: int(got.max_send_wr), MaxRecvWR: int(got.max_recv_wr), MaxSendSGE: int(got.max_send_sge),
		MaxRecvSGE: int(got.max_recv_sge), MaxInlineData: int(got.max_inline_data)}
	return h, uint32(C.ibt_qp_num(qp)), caps, nil
}

func (d *cDriver) modifyQP(qp handle, m qpModify) error {
	q := qp.(*cQP).qp
	var rc C.int
	var err error
	switch m.to {
	case QPStateInit:
		rc, err = C.ibt_to_init(q, C.int(m.init.Port), C.int(m.init.PKeyIndex), C.int(m.init.Access))
	case QPStateRTR:
		r := m.rtr
		var dgid [16]byte
		global := C.int(0)
		var sgid, hop, tclass C.int
		var flow C.uint32_t
		if r.GRH != nil {
			global, dgid = 1, r.GRH.DGID
			sgid, hop, tclass, flow = C.int(r.GRH.SGIDIndex), C.int(r.GRH.HopLimit), C.int(r.GRH.TrafficClass), C.uint32_t(r.GRH.FlowLabel)
		}
		rc, err = C.ibt_to_rtr(q, C.int(m.init.Port), C.int(r.PathMTU), C.uint32_t(r.DestQPN), C.uint32_t(r.RQPSN),
			C.int(r.DLID), C.int(r.SL), global, (*C.uint8_t)(unsafe.Pointer(&dgid[0])), sgid, hop, tclass, flow,
			C.int(r.MaxDestRdAtomic), C.int(r.MinRNRTimer))
	case QPStateRTS:
		s := m.rts
		rc, err = C.ibt_to_rts(q, C.uint32_t(s.SQPSN), C.int(s.Timeout), C.int(s.RetryCnt), C.int(s.RNRRetry), C.int(s.MaxRdAtomic))
	default:
		return syscall.EINVAL
	}
	if rc != 0 {
		return rcErr(rc, err)
	}
	return nil
}

func (d *cDriver) destroyQP(qp handle) error {
	h := qp.(*cQP)
	if rc, err := C.ibtv_destroy_qp(h.qp); rc != 0 {
		return rcErr(rc, err)
	}
	for _, p := range []unsafe.Pointer{unsafe.Pointer(h.swr), unsafe.Pointer(h.rwr), unsafe.Pointer(h.sends), unsafe.Pointer(h.recvs), unsafe.Pointer(h.sges)} {
		C.free(p)
	}
	return nil
}

func (d *cDriver) postSend(qp handle, wrs []sendWork) error {
	h := qp.(*cQP)
	in := unsafe.Slice(h.swr, len(wrs))
	for i, w := range wrs {
		in[i] = swrToC(w)
	}
	if rc := C.ibt_post_send(h.qp, h.swr, C.int(len(wrs)), h.sends, h.sges); rc != 0 {
		return rcErr(rc, nil)
	}
	return nil
}

// swrToC is a checked send work request as the C helpers take it.
func swrToC(w sendWork) C.struct_ibt_swr {
	return C.struct_ibt_swr{wr_id: C.uint64_t(w.id), addr: C.uint64_t(w.addr), raddr: C.uint64_t(w.raddr),
		length: C.uint32_t(w.length), lkey: C.uint32_t(w.lkey), rkey: C.uint32_t(w.rkey), imm: C.uint32_t(w.imm),
		opcode: C.int(w.op), flags: C.int(w.flags)}
}

func (d *cDriver) postRecv(qp handle, wrs []recvWork) error {
	h := qp.(*cQP)
	in := unsafe.Slice(h.rwr, len(wrs))
	for i, w := range wrs {
		in[i] = C.struct_ibt_rwr{wr_id: C.uint64_t(w.id), addr: C.uint64_t(w.addr), length: C.uint32_t(w.length), lkey: C.uint32_t(w.lkey)}
	}
	if rc := C.ibt_post_recv(h.qp, h.rwr, C.int(len(wrs)), h.recvs, h.sges); rc != 0 {
		return rcErr(rc, nil)
	}
	return nil
}

func (d *cDriver) stream(ctx context.Context, qp, cq, ch handle, r *streamRun) error {
	s := (*C.struct_ibt_stream)(C.calloc(1, C.sizeof_struct_ibt_stream))
	defer C.free(unsafe.Pointer(s))
	s.wr = swrToC(r.wr)
	s.count, s.duration_ns = C.int64_t(r.count), C.int64_t(r.duration)
	s.from_ns, s.to_ns = C.int64_t(r.from), C.int64_t(r.to)
	s.depth, s.signal_every = C.int(r.depth), C.int(r.signalEvery)
	if r.events {
		s.events = 1
	}
	if r.record {
		s.record = 1
		s.posted = (*C.uint64_t)(C.calloc(C.size_t(r.count), 8))
		s.completed = (*C.uint64_t)(C.calloc(C.size_t(r.count), 8))
		defer C.free(unsafe.Pointer(s.posted))
		defer C.free(unsafe.Pointer(s.completed))
		if s.posted == nil || s.completed == nil {
			r.failed = "calloc"
			return syscall.ENOMEM
		}
	}
	stopped := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		atomic.StoreInt32((*int32)(unsafe.Pointer(&s.stop)), 1)
		close(stopped)
	})
	var cch *C.struct_ibv_comp_channel
	if ch != nil {
		cch = ch.(*C.struct_ibv_comp_channel)
	}
	C.ibt_stream_run(qp.(*cQP).qp, cq.(*cCQ).cq, cch, s)
	if !stop() {
		<-stopped // the AfterFunc ran or runs: let it finish with s
	}

	// Cycle stamps become times since the start against the clock.
	var scale float64
	if s.end_cyc > s.start_cyc {
		scale = float64(s.end_ns-s.start_ns) / float64(s.end_cyc-s.start_cyc)
	}
	at := func(c C.uint64_t) time.Duration {
		if c <= s.start_cyc {
			return 0
		}
		return time.Duration(float64(c-s.start_cyc) * scale)
	}
	r.posted, r.completed = int(s.scnt), int(s.ccnt)
	r.last = at(s.last_cyc)
	r.window, r.windowTime = int(s.window), time.Duration(s.window_ns)
	if r.record {
		posted := unsafe.Slice(s.posted, r.count)
		completed := unsafe.Slice(s.completed, r.count)
		for i := range r.posted {
			r.postedAt[i] = at(posted[i])
			if completed[i] != 0 {
				r.completedAt[i] = at(completed[i])
				r.signaled = append(r.signaled, i)
			}
		}
	}
	switch s.failed {
	case 0:
		return nil
	case C.IBT_FAIL_POST:
		r.failed = "ibv_post_send"
	case C.IBT_FAIL_POLL:
		r.failed = "ibv_poll_cq"
	case C.IBT_FAIL_NOTIFY:
		r.failed = "ibv_req_notify_cq"
	case C.IBT_FAIL_EVENT:
		r.failed = "ibv_get_cq_event"
	case C.IBT_FAIL_WC:
		r.wc = wcFromC(&s.wc)
		return errStreamCompletion
	case C.IBT_STOPPED:
		if err := ctx.Err(); err != nil {
			return err
		}
		return context.Canceled
	}
	return syscall.Errno(s.err)
}
