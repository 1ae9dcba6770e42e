//go:build cgo && !noverbs

// ibt_verbs.c is the C side of package verbs' cgo driver (ibt_verbs.h
// declares what Go calls). It also defines libibverbs' function table and
// its loader (IBT_DEFINE, ibt_dl.h), once for the package.

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#define IBT_DEFINE
#include "ibt_verbs.h"

// ibt_build_swr makes wr from in (its SGL, or its one SGE in sge); next
// is NULL.
static void ibt_build_swr(const struct ibt_swr *in, struct ibv_send_wr *wr, struct ibv_sge *sge) {
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = in->wr_id;
	if (in->nsge) {
		wr->sg_list = in->sgl;
		wr->num_sge = in->nsge;
	} else if (in->length) {
		sge->addr = in->addr;
		sge->length = in->length;
		sge->lkey = in->lkey;
		wr->sg_list = sge;
		wr->num_sge = 1;
	}
	wr->opcode = in->opcode;
	wr->send_flags = in->flags;
	wr->qp_type.xrc.remote_srqn = in->srqn;
	if (in->ah) { // wr.ud, wr.atomic and wr.rdma share a union
		wr->wr.ud.ah = in->ah;
		wr->wr.ud.remote_qpn = in->rqpn;
		wr->wr.ud.remote_qkey = in->rqkey;
	} else if (in->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || in->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr->wr.atomic.remote_addr = in->raddr;
		wr->wr.atomic.compare_add = in->compare_add;
		wr->wr.atomic.swap = in->swap;
		wr->wr.atomic.rkey = in->rkey;
	} else {
		wr->wr.rdma.remote_addr = in->raddr;
		wr->wr.rdma.rkey = in->rkey;
	}
	if (in->opcode == IBV_WR_RDMA_WRITE_WITH_IMM || in->opcode == IBV_WR_SEND_WITH_IMM)
		wr->imm_data = htonl(in->imm);
	if (in->opcode == IBV_WR_LOCAL_INV || in->opcode == IBV_WR_SEND_WITH_INV)
		wr->invalidate_rkey = in->inv_rkey;
	if (in->opcode == IBV_WR_BIND_MW) {
		wr->bind_mw.mw = in->mw;
		wr->bind_mw.rkey = in->bind_rkey;
		wr->bind_mw.bind_info.mr = in->bind_mr;
		wr->bind_mw.bind_info.addr = in->bind_addr;
		wr->bind_mw.bind_info.length = in->bind_length;
		wr->bind_mw.bind_info.mw_access_flags = in->bind_access;
	}
}

struct ibv_mw *ibt_alloc_mw(struct ibv_pd *pd, int type) {
	if (!pd->context->ops.alloc_mw) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return pd->context->ops.alloc_mw(pd, type);
}

int ibt_dealloc_mw(struct ibv_mw *mw) { return mw->context->ops.dealloc_mw(mw); }

int ibt_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, uint64_t wr_id, int flags, struct ibv_mr *mr, uint64_t addr, uint64_t length, int access) {
	struct ibv_mw_bind b;
	memset(&b, 0, sizeof(b));
	b.wr_id = wr_id;
	b.send_flags = flags;
	b.bind_info.mr = mr;
	b.bind_info.addr = addr;
	b.bind_info.length = length;
	b.bind_info.mw_access_flags = access;
	if (mw->type != IBV_MW_TYPE_1 || (!mr && (addr || length)))
		return EINVAL;
	if (mr && mw->pd != mr->pd)
		return EPERM;
	return mw->context->ops.bind_mw(qp, mw, &b);
}

int ibt_post_send(struct ibv_qp *qp, struct ibt_swr *in, int n, struct ibv_send_wr *wr, struct ibv_sge *sge) {
	struct ibv_send_wr *bad = NULL;
	int i;
	for (i = 0; i < n; i++) {
		ibt_build_swr(&in[i], &wr[i], &sge[i]);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return ibtv_post_send(qp, wr, &bad);
}

// ibt_post_send_ex posts in through qp's ibv_wr_* ops, one batch between
// wr_start and wr_complete: each request's op, then its address
// (UD, XRC) and its memory (inline or the SGL).
int ibt_post_send_ex(struct ibv_qp_ex *qp, struct ibt_swr *in, int n) {
	int i;
	qp->wr_start(qp);
	for (i = 0; i < n; i++) {
		struct ibt_swr *w = &in[i];
		int data = 1;
		qp->wr_id = w->wr_id;
		qp->wr_flags = w->flags;
		switch (w->opcode) {
		case IBV_WR_RDMA_WRITE:
			qp->wr_rdma_write(qp, w->rkey, w->raddr);
			break;
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			qp->wr_rdma_write_imm(qp, w->rkey, w->raddr, htonl(w->imm));
			break;
		case IBV_WR_SEND:
			qp->wr_send(qp);
			break;
		case IBV_WR_SEND_WITH_IMM:
			qp->wr_send_imm(qp, htonl(w->imm));
			break;
		case IBV_WR_RDMA_READ:
			qp->wr_rdma_read(qp, w->rkey, w->raddr);
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
			qp->wr_atomic_cmp_swp(qp, w->rkey, w->raddr, w->compare_add, w->swap);
			break;
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			qp->wr_atomic_fetch_add(qp, w->rkey, w->raddr, w->compare_add);
			break;
		case IBV_WR_SEND_WITH_INV:
			qp->wr_send_inv(qp, w->inv_rkey);
			break;
		case IBV_WR_LOCAL_INV:
			qp->wr_local_inv(qp, w->inv_rkey);
			data = 0;
			break;
		case IBV_WR_BIND_MW: {
			struct ibv_mw_bind_info b = {.mr = w->bind_mr, .addr = w->bind_addr, .length = w->bind_length,
				.mw_access_flags = (unsigned int)w->bind_access};
			qp->wr_bind_mw(qp, w->mw, w->bind_rkey, &b);
			data = 0;
			break;
		}
		default:
			qp->wr_abort(qp);
			return EINVAL;
		}
		if (w->ah)
			qp->wr_set_ud_addr(qp, w->ah, w->rqpn, w->rqkey);
		if (qp->qp_base.qp_type == IBV_QPT_XRC_SEND)
			qp->wr_set_xrc_srqn(qp, w->srqn);
		if (!data)
			continue;
		if (w->flags & IBV_SEND_INLINE) {
			if (w->nsge) {
				struct ibv_data_buf bufs[w->nsge];
				int j;
				for (j = 0; j < w->nsge; j++) {
					bufs[j].addr = (void *)(uintptr_t)w->sgl[j].addr;
					bufs[j].length = w->sgl[j].length;
				}
				qp->wr_set_inline_data_list(qp, w->nsge, bufs);
			} else {
				qp->wr_set_inline_data(qp, (void *)(uintptr_t)w->addr, w->length);
			}
		} else if (w->nsge) {
			qp->wr_set_sge_list(qp, w->nsge, w->sgl);
		} else if (w->length) {
			qp->wr_set_sge(qp, w->lkey, w->addr, w->length);
		} else {
			qp->wr_set_sge_list(qp, 0, NULL);
		}
	}
	return qp->wr_complete(qp);
}

static void ibt_build_rwrs(struct ibt_rwr *in, int n, struct ibv_recv_wr *wr, struct ibv_sge *sge);

int ibt_post_recv(struct ibv_qp *qp, struct ibt_rwr *in, int n, struct ibv_recv_wr *wr, struct ibv_sge *sge) {
	struct ibv_recv_wr *bad = NULL;
	ibt_build_rwrs(in, n, wr, sge);
	return ibtv_post_recv(qp, wr, &bad);
}

int ibt_post_srq_recv(struct ibv_srq *srq, struct ibt_rwr *in, int n, struct ibv_recv_wr *wr, struct ibv_sge *sge) {
	struct ibv_recv_wr *bad = NULL;
	ibt_build_rwrs(in, n, wr, sge);
	return ibtv_post_srq_recv(srq, wr, &bad);
}

struct ibv_xrcd *ibt_open_xrcd(struct ibv_context *ctx, int fd) {
	struct ibv_xrcd_init_attr a;
	memset(&a, 0, sizeof(a));
	a.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	a.fd = fd;
	a.oflags = O_CREAT;
	return ibtv_open_xrcd(ctx, &a);
}

int ibt_close_xrcd(struct ibv_xrcd *xrcd) { return ibtv_close_xrcd(xrcd); }

// ibt_create_xrc_srq is ibv_create_srq_ex for an XRC SRQ (the context's
// op, which <infiniband/verbs.h>'s inline calls for one), and its number.
struct ibv_srq *ibt_create_xrc_srq(struct ibv_pd *pd, struct ibv_xrcd *xrcd, struct ibv_cq *cq, int max_wr, int max_sge, uint32_t *num) {
	struct verbs_context *vctx = ibt_vctx_op(pd->context, create_srq_ex);
	struct ibv_srq_init_attr_ex a;
	struct ibv_srq *srq;
	if (!vctx) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	memset(&a, 0, sizeof(a));
	a.attr.max_wr = max_wr;
	a.attr.max_sge = max_sge;
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	a.srq_type = IBV_SRQT_XRC;
	a.xrcd = xrcd;
	a.cq = cq;
	a.pd = pd;
	srq = vctx->create_srq_ex(pd->context, &a);
	if (srq && ibtv_get_srq_num(srq, num)) {
		int e = errno;
		ibtv_destroy_srq(srq);
		errno = e ? e : EOPNOTSUPP;
		return NULL;
	}
	return srq;
}

struct ibv_srq *ibt_create_srq(struct ibv_pd *pd, int max_wr, int max_sge) {
	struct ibv_srq_init_attr a;
	memset(&a, 0, sizeof(a));
	a.attr.max_wr = max_wr;
	a.attr.max_sge = max_sge;
	return ibtv_create_srq(pd, &a);
}

// ibt_build_rwrs makes the list wr from in: each request's SGL, or its
// one SGE in sge.
static void ibt_build_rwrs(struct ibt_rwr *in, int n, struct ibv_recv_wr *wr, struct ibv_sge *sge) {
	int i;
	for (i = 0; i < n; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = in[i].wr_id;
		if (in[i].nsge) {
			wr[i].sg_list = in[i].sgl;
			wr[i].num_sge = in[i].nsge;
		} else {
			sge[i].addr = in[i].addr;
			sge[i].length = in[i].length;
			sge[i].lkey = in[i].lkey;
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
		}
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
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
	out->has_inv = (wc->wc_flags & IBV_WC_WITH_INV) != 0;
	out->inv_rkey = out->has_inv ? wc->invalidated_rkey : 0;
}

int ibt_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc, struct ibt_wc *out) {
	int got = ibtv_poll_cq(cq, n, wc), i;
	for (i = 0; i < got; i++)
		ibt_flat_wc(&wc[i], &out[i]);
	return got;
}

struct ibv_cq_ex *ibt_create_cq_ex(struct ibv_context *ctx, int cqe, struct ibv_comp_channel *ch, uint64_t wc_flags) {
	struct verbs_context *vctx = ibt_vctx_op(ctx, create_cq_ex);
	struct ibv_cq_init_attr_ex a;
	if (!vctx) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	memset(&a, 0, sizeof(a));
	a.cqe = cqe;
	a.channel = ch;
	a.wc_flags = wc_flags;
	return vctx->create_cq_ex(ctx, &a);
}

// ibt_read_ex flattens the completion cq is at; a failed one has only
// its ID, status and vendor error.
static void ibt_read_ex(struct ibv_cq_ex *cq, uint64_t flags, struct ibt_wc *w) {
	memset(w, 0, sizeof(*w));
	w->wr_id = cq->wr_id;
	w->status = cq->status;
	w->vendor_err = cq->read_vendor_err(cq);
	if (cq->status != IBV_WC_SUCCESS)
		return;
	w->opcode = cq->read_opcode(cq);
	if (flags & IBV_WC_EX_WITH_BYTE_LEN)
		w->byte_len = cq->read_byte_len(cq);
	if ((flags & IBV_WC_EX_WITH_IMM) && (cq->read_wc_flags(cq) & IBV_WC_WITH_IMM)) {
		w->has_imm = 1;
		w->imm = ntohl(cq->read_imm_data(cq));
	}
	if (flags & IBV_WC_EX_WITH_QP_NUM)
		w->qp_num = cq->read_qp_num(cq);
	if (flags & IBV_WC_EX_WITH_SRC_QP)
		w->src_qp = cq->read_src_qp(cq);
	if (flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) {
		w->ts = cq->read_completion_ts(cq);
		w->has_ts = 1;
	}
}

int ibt_poll_ex(struct ibv_cq_ex *cq, uint64_t wc_flags, int n, struct ibt_wc *out) {
	struct ibv_poll_cq_attr attr = {0};
	int got = 0, rc = cq->start_poll(cq, &attr);
	if (rc == ENOENT)
		return 0;
	if (rc)
		return -1;
	while (got < n) {
		ibt_read_ex(cq, wc_flags, &out[got++]);
		if (got == n)
			break;
		rc = cq->next_poll(cq);
		if (rc == ENOENT)
			break;
		if (rc) {
			cq->end_poll(cq);
			return -1;
		}
	}
	cq->end_poll(cq);
	return got;
}

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
	rc = ibtv_post_send(qp, wr, &bad);
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
	int n = ibtv_poll_cq(cq, IBT_STREAM_WC, wc), i, rc;
	if (n == 0 && s->events) {
		if ((rc = ibtv_req_notify_cq(cq, 0)) != 0) {
			s->failed = IBT_FAIL_NOTIFY;
			s->err = rc > 0 ? rc : errno;
			return -1;
		}
		n = ibtv_poll_cq(cq, IBT_STREAM_WC, wc);
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
			n = ibtv_poll_cq(cq, IBT_STREAM_WC, wc);
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
void ibt_stream_run(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_comp_channel *ch, struct ibt_stream *s) {
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	int mod = s->signal_every, n;
	ibt_build_swr(&s->wr, &wr, &sge); // the ID and flags are set per post
	if (s->nsge > 1) {
		wr.sg_list = s->sges;
		wr.num_sge = s->nsge;
	}
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

int ibt_req_notify(struct ibv_cq *cq, int solicited) { return ibtv_req_notify_cq(cq, solicited); }

struct ibv_qp *ibt_create_qp(struct ibv_pd *pd, int type, struct ibv_cq *scq, struct ibv_cq *rcq, struct ibv_srq *srq, struct ibv_xrcd *xrcd,
		int swr, int rwr, int ssge, int rsge, int inl, int sigall, uint64_t send_ops, struct ibv_qp_cap *got, struct ibv_qp_ex **qpx) {
	struct ibv_qp_init_attr a;
	struct ibv_qp *qp;
	memset(&a, 0, sizeof(a));
	a.send_cq = scq;
	a.recv_cq = rcq;
	a.qp_type = type;
	a.srq = srq;
	a.sq_sig_all = sigall;
	a.cap.max_send_wr = swr;
	a.cap.max_recv_wr = rwr;
	a.cap.max_send_sge = ssge;
	a.cap.max_recv_sge = rsge;
	a.cap.max_inline_data = inl;
	*qpx = NULL;
	if (send_ops || type == IBV_QPT_XRC_SEND || type == IBV_QPT_XRC_RECV) {
		// XRC QPs, and QPs posting through the ibv_wr_* ops (send_ops),
		// come from the context's create_qp_ex (the op
		// ibv_create_qp_ex's inline calls): on a PD, an XRC receive
		// side in the XRC domain.
		struct verbs_context *vctx = ibt_vctx_op(pd->context, create_qp_ex);
		struct ibv_qp_init_attr_ex x;
		if (!vctx) {
			errno = EOPNOTSUPP;
			return NULL;
		}
		if (send_ops && !ibt_fn.qp_to_qp_ex) {
			errno = EOPNOTSUPP;
			return NULL;
		}
		memset(&x, 0, sizeof(x));
		x.qp_type = type;
		x.send_cq = scq;
		x.recv_cq = rcq;
		x.srq = srq;
		x.sq_sig_all = sigall;
		x.cap = a.cap;
		if (type == IBV_QPT_XRC_RECV) {
			x.comp_mask = IBV_QP_INIT_ATTR_XRCD;
			x.xrcd = xrcd;
			x.send_cq = NULL;
			memset(&x.cap, 0, sizeof(x.cap));
		} else {
			x.comp_mask = IBV_QP_INIT_ATTR_PD;
			x.pd = pd;
		}
		if (send_ops) {
			x.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
			x.send_ops_flags = send_ops;
		}
		qp = vctx->create_qp_ex(pd->context, &x);
		if (qp)
			*got = x.cap;
		if (qp && send_ops && !(*qpx = ibt_fn.qp_to_qp_ex(qp))) {
			ibtv_destroy_qp(qp);
			errno = EOPNOTSUPP;
			return NULL;
		}
		return qp;
	}
	qp = ibtv_create_qp(pd, &a);
	if (qp)
		*got = a.cap;
	return qp;
}

uint32_t ibt_qp_num(struct ibv_qp *qp) { return qp->qp_num; }

struct ibv_ah *ibt_create_ah(struct ibv_pd *pd, int port, int dlid, int sl, int global, const uint8_t *dgid,
		int sgid_index, int hop_limit, int tclass, uint32_t flow_label) {
	struct ibv_ah_attr a;
	memset(&a, 0, sizeof(a));
	a.dlid = dlid;
	a.sl = sl;
	a.port_num = port;
	if (global) {
		a.is_global = 1;
		memcpy(a.grh.dgid.raw, dgid, 16);
		a.grh.sgid_index = sgid_index;
		a.grh.hop_limit = hop_limit;
		a.grh.traffic_class = tclass;
		a.grh.flow_label = flow_label;
	}
	return ibtv_create_ah(pd, &a);
}

// The transitions set what each QP type takes (IBA 11.2.4.2's table):
// a UD QP a Q_Key at INIT and nothing at RTR, a UC QP no atomics, retries
// or timers.
int ibt_to_init(struct ibv_qp *qp, int port, int pkey_index, int access, uint32_t qkey) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = port;
	a.pkey_index = pkey_index;
	a.qp_access_flags = access;
	a.qkey = qkey;
	if (qp->qp_type == IBV_QPT_UD)
		return ibtv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	return ibtv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int ibt_to_rtr(struct ibv_qp *qp, int port, int mtu, uint32_t dqpn, uint32_t rq_psn, int dlid, int sl,
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
	if (qp->qp_type == IBV_QPT_UD)
		return ibtv_modify_qp(qp, &a, IBV_QP_STATE);
	if (qp->qp_type == IBV_QPT_UC || qp->qp_type == IBV_QPT_XRC_SEND)
		return ibtv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
	return ibtv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

int ibt_to_rts(struct ibv_qp *qp, uint32_t sq_psn, int timeout, int retry, int rnr_retry, int max_rd_atomic) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = timeout;
	a.retry_cnt = retry;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = max_rd_atomic;
	if (qp->qp_type == IBV_QPT_XRC_RECV)
		return ibtv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN);
	if (qp->qp_type != IBV_QPT_RC && qp->qp_type != IBV_QPT_XRC_SEND)
		return ibtv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return ibtv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

// ibt_query_qp is ibv_query_qp asking for every attribute the IBA has
// for a QP (providers fill what they keep whatever the mask).
int ibt_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, struct ibv_qp_init_attr *init) {
	memset(a, 0, sizeof(*a));
	memset(init, 0, sizeof(*init));
	return ibtv_query_qp(qp, a, IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY | IBV_QP_ACCESS_FLAGS |
		IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT |
		IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_ALT_PATH |
		IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_PATH_MIG_STATE | IBV_QP_CAP |
		IBV_QP_DEST_QPN, init);
}

// ibt_to_state moves qp to state (RESET, ERR, SQD) setting nothing else.
int ibt_to_state(struct ibv_qp *qp, int state) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = state;
	return ibtv_modify_qp(qp, &a, IBV_QP_STATE);
}

// ibt_wait_channel waits up to ms milliseconds for an event on ch: 1 when
// one is there, 0 when none came, -1 with errno.
int ibt_wait_channel(struct ibv_comp_channel *ch, int ms) {
	struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};
	int rc = poll(&pfd, 1, ms);
	if (rc < 0 && errno == EINTR)
		return 0;
	return rc < 0 ? -1 : rc > 0;
}

int ibt_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq) {
	void *cq_ctx;
	return ibtv_get_cq_event(ch, cq, &cq_ctx);
}

int ibt_count(struct ibv_device **l) {
	int n = 0;
	while (l && l[n])
		n++;
	return n;
}

const char *ibt_path(struct ibv_device *d) { return d->ibdev_path; }

int ibt_transport(struct ibv_device *d) { return d->transport_type; }

// ibt_query_gid reads GID idx of port and its sysfs type as
// ibv_query_gid_type reports it: 0 IB/RoCE v1 (also for an empty entry),
// 1 RoCE v2, 2 when the type does not read (ibv_devinfo's invalid type).
int ibt_query_gid(struct ibv_context *ctx, int port, int idx, union ibv_gid *gid, int *type) {
	struct ibv_gid_entry e = {};
	int rc = ibtv_query_gid(ctx, port, idx, gid);
	if (rc)
		return rc;
	rc = ibtv_query_gid_ex(ctx, port, idx, &e, 0);
	if (rc == ENODATA)
		*type = 0;
	else if (rc)
		*type = 2;
	else
		*type = (e.gid_type == IBV_GID_TYPE_IB || e.gid_type == IBV_GID_TYPE_ROCE_V1) ? 0 : 1;
	return 0;
}

int ibt_comp_vectors(struct ibv_context *ctx) { return ctx->num_comp_vectors; }

int ibt_async_fd(struct ibv_context *ctx) { return ctx->async_fd; }

int ibt_wait_async(struct ibv_context *ctx, int ms) {
	struct pollfd pfd = {.fd = ctx->async_fd, .events = POLLIN};
	int rc = poll(&pfd, 1, ms);
	if (rc < 0 && errno == EINTR)
		return 0;
	return rc < 0 ? -1 : rc > 0;
}

int ibt_get_async_event(struct ibv_context *ctx, int *type, int *port) {
	struct ibv_async_event e;
	int rc = ibt_fn.get_async_event(ctx, &e);
	if (rc)
		return rc;
	*type = e.event_type;
	*port = e.element.port_num;
	ibt_fn.ack_async_event(&e);
	return 0;
}
