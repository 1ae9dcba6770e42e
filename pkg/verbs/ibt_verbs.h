/*
 * ibt_verbs.h: the C side of package verbs' cgo driver (ibt_verbs.c),
 * which the cgo files include. The helpers build work request lists, flatten
 * completions and run a bandwidth test's send loop in C, so that the Go
 * code passes plain structs without pointers across the cgo boundary and a
 * whole run is one call. libibverbs itself is reached through ibt_dl.h.
 */
#ifndef IBT_VERBS_H
#define IBT_VERBS_H

#include <stdint.h>
#include "ibt_dl.h"

/* ibt_swr and ibt_rwr are work requests without pointers, which Go code
 * fills in C memory; ibt_post_send and ibt_post_recv build the ibv_*_wr
 * lists from them and post them in one call. */
struct ibt_swr {
	uint64_t wr_id, addr, raddr;
	uint32_t length, lkey, rkey, imm;
	int opcode, flags;
	struct ibv_ah *ah; /* UD: set, with the peer's QP number and Q_Key */
	uint32_t rqpn, rqkey;
	uint32_t srqn; /* XRC: the peer's SRQ */
	uint64_t compare_add, swap; /* atomics */
	struct ibv_sge *sgl; /* nsge > 0: the SGL, instead of addr, length and lkey */
	int nsge;
	uint32_t inv_rkey; /* LOCAL_INV, SEND_WITH_INV */
	/* BIND_MW: the window, its new rkey, and what it binds */
	struct ibv_mw *mw;
	uint32_t bind_rkey;
	int bind_access;
	struct ibv_mr *bind_mr;
	uint64_t bind_addr, bind_length;
};

struct ibt_rwr {
	uint64_t wr_id, addr;
	uint32_t length, lkey;
	struct ibv_sge *sgl; /* as ibt_swr's */
	int nsge;
};

/* ibt_wc is struct ibv_wc's fields without its unions, immediate data in
 * host order. */
struct ibt_wc {
	uint64_t wr_id;
	uint32_t status, opcode, vendor_err, byte_len, imm, has_imm, qp_num, src_qp;
	uint32_t inv_rkey, has_inv; /* a SEND_WITH_INV received */
	uint64_t ts; /* an extended CQ's completion timestamp, when has_ts */
	uint32_t has_ts;
};

/* ibt_stream is one QP.Stream run in C (stream.go says why): the request
 * and parameters in, the counts and cycle stamps out. */
struct ibt_stream {
	struct ibt_swr wr;
	int64_t count, duration_ns, from_ns, to_ns;
	int depth, signal_every, events, record;
	uint64_t *posted, *completed; /* record: count cycle stamps each */
	struct ibv_sge *sges;         /* nsge > 1: wr's data in these entries, wr's lkey */
	int nsge;
	int stop;                     /* set by Go when the context ends */

	int64_t scnt, ccnt, window, window_ns, start_ns, end_ns;
	uint64_t start_cyc, end_cyc, last_cyc;
	int failed, err;
	struct ibt_wc wc;
};

/* What ended an ibt_stream run early, in its failed field. */
enum { IBT_FAIL_POST = 1, IBT_FAIL_POLL, IBT_FAIL_WC, IBT_FAIL_NOTIFY, IBT_FAIL_EVENT, IBT_STOPPED };

/* Posting and polling: n requests or completions a call, wr, sge and wc
 * being the caller's scratch arrays of n. */
int ibt_post_send(struct ibv_qp *qp, struct ibt_swr *in, int n, struct ibv_send_wr *wr, struct ibv_sge *sge);
int ibt_post_recv(struct ibv_qp *qp, struct ibt_rwr *in, int n, struct ibv_recv_wr *wr, struct ibv_sge *sge);
int ibt_post_srq_recv(struct ibv_srq *srq, struct ibt_rwr *in, int n, struct ibv_recv_wr *wr, struct ibv_sge *sge);
struct ibv_srq *ibt_create_srq(struct ibv_pd *pd, int max_wr, int max_sge);

/* XRC: domains, and XRC SRQs with their numbers. */
struct ibv_xrcd *ibt_open_xrcd(struct ibv_context *ctx, int fd);
int ibt_close_xrcd(struct ibv_xrcd *xrcd);
struct ibv_srq *ibt_create_xrc_srq(struct ibv_pd *pd, struct ibv_xrcd *xrcd, struct ibv_cq *cq, int max_wr, int max_sge, uint32_t *num);
int ibt_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc, struct ibt_wc *out);

/* Extended CQs: ibv_create_cq_ex, and polling up to n completions with
 * ibv_start_poll, ibv_next_poll and ibv_end_poll, reading the fields
 * wc_flags asked for (-1: the poll failed). */
struct ibv_cq_ex *ibt_create_cq_ex(struct ibv_context *ctx, int cqe, struct ibv_comp_channel *ch, uint64_t wc_flags);
int ibt_poll_ex(struct ibv_cq_ex *cq, uint64_t wc_flags, int n, struct ibt_wc *out);

/* ibt_stream_run is perftest's run_iter_bw on s; see ibt_verbs.c. */
void ibt_stream_run(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_comp_channel *ch, struct ibt_stream *s);

int ibt_req_notify(struct ibv_cq *cq, int solicited);
int ibt_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq);
int ibt_wait_channel(struct ibv_comp_channel *ch, int ms);

/* Queue pairs (RC, UC, UD): creation, and the moves to INIT, RTR and RTS with the
 * attributes as plain arguments. */
struct ibv_qp *ibt_create_qp(struct ibv_pd *pd, int type, struct ibv_cq *scq, struct ibv_cq *rcq, struct ibv_srq *srq, struct ibv_xrcd *xrcd,
		int swr, int rwr, int ssge, int rsge, int inl, int sigall, uint64_t send_ops, struct ibv_qp_cap *got, struct ibv_qp_ex **qpx);
/* ibt_post_send_ex posts n requests through an extended QP's ibv_wr_*
 * ops (a QP made with send_ops). */
int ibt_post_send_ex(struct ibv_qp_ex *qp, struct ibt_swr *in, int n);
uint32_t ibt_qp_num(struct ibv_qp *qp);
int ibt_to_init(struct ibv_qp *qp, int port, int pkey_index, int access, uint32_t qkey);
int ibt_to_rtr(struct ibv_qp *qp, int port, int mtu, uint32_t dqpn, uint32_t rq_psn, int dlid, int sl,
		int global, const uint8_t *dgid, int sgid_index, int hop_limit, int tclass, uint32_t flow_label,
		int max_dest_rd_atomic, int min_rnr_timer);
struct ibv_ah *ibt_create_ah(struct ibv_pd *pd, int port, int dlid, int sl, int global, const uint8_t *dgid,
		int sgid_index, int hop_limit, int tclass, uint32_t flow_label);
int ibt_to_rts(struct ibv_qp *qp, uint32_t sq_psn, int timeout, int retry, int rnr_retry, int max_rd_atomic);
int ibt_to_state(struct ibv_qp *qp, int state);
int ibt_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, struct ibv_qp_init_attr *init);

/* Memory windows: the context's ops, as <infiniband/verbs.h>'s inlines
 * call them; ibt_bind_mw is ibv_bind_mw of a type 1 window. */
struct ibv_mw *ibt_alloc_mw(struct ibv_pd *pd, int type);
int ibt_dealloc_mw(struct ibv_mw *mw);
int ibt_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, uint64_t wr_id, int flags, struct ibv_mr *mr, uint64_t addr, uint64_t length, int access);

/* Devices: the fields of a device list, a device and a context that Go
 * reads, and a GID with its type. */
int ibt_count(struct ibv_device **l);
const char *ibt_path(struct ibv_device *d);
int ibt_transport(struct ibv_device *d);
int ibt_query_gid(struct ibv_context *ctx, int port, int idx, union ibv_gid *gid, int *type);
int ibt_comp_vectors(struct ibv_context *ctx);

/* Async events: the context's FD, a wait of up to ms milliseconds (1: an
 * event is there, 0: none, -1: errno), and one event read and
 * acknowledged, its type and the element's port number (what rdma-core's
 * ibv_asyncwatch prints, whatever the element). */
int ibt_async_fd(struct ibv_context *ctx);
int ibt_wait_async(struct ibv_context *ctx, int ms);
int ibt_get_async_event(struct ibv_context *ctx, int *type, int *port);

#endif
