/*
 * ibt_dl.h: libibverbs loaded with dlopen(3) on first use, for the cgo
 * files of package verbs. ibtool is one binary for every tool; linked
 * against libibverbs (and through it libnl), every run of every tool would
 * load them, and a machine without libibverbs could not start any tool.
 * The types and the inline helpers that go through a context's ops
 * (ibv_poll_cq, ibv_post_send, ...) are ibt_verbs_abi.h's, so building
 * needs no libibverbs headers; the library's own functions are called
 * through ibt_fn only. One file (ibt_verbs.c) defines IBT_DEFINE before
 * including this, which makes the table and the loader.
 */
#ifndef IBT_DL_H
#define IBT_DL_H

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ibt_verbs_abi.h"

struct ibt_fns {
	struct ibv_device **(*get_device_list)(int *);
	void (*free_device_list)(struct ibv_device **);
	const char *(*get_device_name)(struct ibv_device *);
	struct ibv_context *(*open_device)(struct ibv_device *);
	int (*close_device)(struct ibv_context *);
	int (*query_device)(struct ibv_context *, struct ibv_device_attr *);
	/* ibv_query_port's symbol fills the port attributes of libibverbs 1.0,
	 * a prefix of struct ibv_port_attr. */
	int (*query_port)(struct ibv_context *, uint8_t, struct ibv_port_attr *);
	int (*query_gid)(struct ibv_context *, uint8_t, int, union ibv_gid *);
	int (*query_gid_ex)(struct ibv_context *, uint32_t, uint32_t, struct ibv_gid_entry *, uint32_t, size_t);
	ssize_t (*query_gid_table)(struct ibv_context *, struct ibv_gid_entry *, size_t, uint32_t, size_t);
	int (*query_pkey)(struct ibv_context *, uint8_t, int, uint16_t *);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *);
	int (*dealloc_pd)(struct ibv_pd *);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *, void *, size_t, int);
	int (*dereg_mr)(struct ibv_mr *);
	struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *);
	int (*destroy_comp_channel)(struct ibv_comp_channel *);
	struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *, struct ibv_comp_channel *, int);
	int (*destroy_cq)(struct ibv_cq *);
	int (*get_cq_event)(struct ibv_comp_channel *, struct ibv_cq **, void **);
	void (*ack_cq_events)(struct ibv_cq *, unsigned int);
	struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
	int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
	int (*query_qp)(struct ibv_qp *, struct ibv_qp_attr *, int, struct ibv_qp_init_attr *);
	int (*resize_cq)(struct ibv_cq *, int);
	/* Optional (NULL in a library older than rdma-core 24, 35, 39). */
	struct ibv_qp_ex *(*qp_to_qp_ex)(struct ibv_qp *);
	int (*is_fork_initialized)(void);
	int (*query_qp_data_in_order)(struct ibv_qp *, enum ibv_wr_opcode, uint32_t);
	int (*fork_init)(void);
	int (*destroy_qp)(struct ibv_qp *);
	struct ibv_ah *(*create_ah)(struct ibv_pd *, struct ibv_ah_attr *);
	int (*destroy_ah)(struct ibv_ah *);
	int (*attach_mcast)(struct ibv_qp *, const union ibv_gid *, uint16_t);
	int (*detach_mcast)(struct ibv_qp *, const union ibv_gid *, uint16_t);
	struct ibv_srq *(*create_srq)(struct ibv_pd *, struct ibv_srq_init_attr *);
	int (*destroy_srq)(struct ibv_srq *);
	int (*get_async_event)(struct ibv_context *, struct ibv_async_event *);
	void (*ack_async_event)(struct ibv_async_event *);
};

extern struct ibt_fns ibt_fn;

/* ibt_load fills ibt_fn; it returns NULL, or what failed. Call it once
 * (package verbs does, under a sync.Once) before any other ibt_ call. */
const char *ibt_load(void);

#ifdef IBT_DEFINE
struct ibt_fns ibt_fn;

const char *ibt_load(void)
{
	static char msg[512];
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);
	const char *e;

	if (!h) {
		e = dlerror();
		snprintf(msg, sizeof(msg), "%s", e ? e : "dlopen libibverbs.so.1 failed");
		return msg;
	}
#define IBT_SYM(field, name)                                                                   \
	do {                                                                                   \
		*(void **)&ibt_fn.field = dlsym(h, name);                                      \
		if (!ibt_fn.field) {                                                           \
			snprintf(msg, sizeof(msg), "libibverbs.so.1 has no %s", name);         \
			return msg;                                                            \
		}                                                                              \
	} while (0)
	IBT_SYM(get_device_list, "ibv_get_device_list");
	IBT_SYM(free_device_list, "ibv_free_device_list");
	IBT_SYM(get_device_name, "ibv_get_device_name");
	IBT_SYM(open_device, "ibv_open_device");
	IBT_SYM(close_device, "ibv_close_device");
	IBT_SYM(query_device, "ibv_query_device");
	IBT_SYM(query_port, "ibv_query_port");
	IBT_SYM(query_gid, "ibv_query_gid");
	IBT_SYM(query_gid_ex, "_ibv_query_gid_ex");
	IBT_SYM(query_gid_table, "_ibv_query_gid_table");
	IBT_SYM(query_pkey, "ibv_query_pkey");
	IBT_SYM(alloc_pd, "ibv_alloc_pd");
	IBT_SYM(dealloc_pd, "ibv_dealloc_pd");
	IBT_SYM(reg_mr, "ibv_reg_mr");
	IBT_SYM(dereg_mr, "ibv_dereg_mr");
	IBT_SYM(create_comp_channel, "ibv_create_comp_channel");
	IBT_SYM(destroy_comp_channel, "ibv_destroy_comp_channel");
	IBT_SYM(create_cq, "ibv_create_cq");
	IBT_SYM(destroy_cq, "ibv_destroy_cq");
	IBT_SYM(get_cq_event, "ibv_get_cq_event");
	IBT_SYM(ack_cq_events, "ibv_ack_cq_events");
	IBT_SYM(create_qp, "ibv_create_qp");
	IBT_SYM(modify_qp, "ibv_modify_qp");
	IBT_SYM(query_qp, "ibv_query_qp");
	IBT_SYM(resize_cq, "ibv_resize_cq");
	IBT_SYM(destroy_qp, "ibv_destroy_qp");
	IBT_SYM(create_ah, "ibv_create_ah");
	IBT_SYM(destroy_ah, "ibv_destroy_ah");
	IBT_SYM(attach_mcast, "ibv_attach_mcast");
	IBT_SYM(detach_mcast, "ibv_detach_mcast");
	IBT_SYM(create_srq, "ibv_create_srq");
	IBT_SYM(destroy_srq, "ibv_destroy_srq");
	IBT_SYM(get_async_event, "ibv_get_async_event");
	IBT_SYM(ack_async_event, "ibv_ack_async_event");
	IBT_SYM(fork_init, "ibv_fork_init");
#undef IBT_SYM
	*(void **)&ibt_fn.qp_to_qp_ex = dlsym(h, "ibv_qp_to_qp_ex");
	*(void **)&ibt_fn.is_fork_initialized = dlsym(h, "ibv_is_fork_initialized");
	*(void **)&ibt_fn.query_qp_data_in_order = dlsym(h, "ibv_query_qp_data_in_order");
	return NULL;
}
#endif

/* The library's functions, through ibt_fn, for Go and the helpers. */
static inline struct ibv_device **ibtv_get_device_list(int *n) { return ibt_fn.get_device_list(n); }
static inline void ibtv_free_device_list(struct ibv_device **l) { ibt_fn.free_device_list(l); }
static inline const char *ibtv_get_device_name(struct ibv_device *d) { return ibt_fn.get_device_name(d); }
static inline struct ibv_context *ibtv_open_device(struct ibv_device *d) { return ibt_fn.open_device(d); }
static inline int ibtv_close_device(struct ibv_context *c) { return ibt_fn.close_device(c); }
static inline int ibtv_query_gid(struct ibv_context *c, uint8_t port, int idx, union ibv_gid *gid) { return ibt_fn.query_gid(c, port, idx, gid); }
static inline int ibtv_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t idx, struct ibv_gid_entry *e, uint32_t flags) { return ibt_fn.query_gid_ex(c, port, idx, e, flags, sizeof(*e)); }
static inline ssize_t ibtv_query_gid_table(struct ibv_context *c, struct ibv_gid_entry *e, size_t n) { return ibt_fn.query_gid_table(c, e, n, 0, sizeof(*e)); }
static inline int ibtv_query_pkey(struct ibv_context *c, uint8_t port, int idx, uint16_t *pkey) { return ibt_fn.query_pkey(c, port, idx, pkey); }
static inline struct ibv_pd *ibtv_alloc_pd(struct ibv_context *c) { return ibt_fn.alloc_pd(c); }
static inline int ibtv_dealloc_pd(struct ibv_pd *pd) { return ibt_fn.dealloc_pd(pd); }
static inline struct ibv_mr *ibtv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access) { return ibt_fn.reg_mr(pd, addr, len, access); }
static inline int ibtv_dereg_mr(struct ibv_mr *mr) { return ibt_fn.dereg_mr(mr); }
static inline struct ibv_comp_channel *ibtv_create_comp_channel(struct ibv_context *c) { return ibt_fn.create_comp_channel(c); }
static inline int ibtv_destroy_comp_channel(struct ibv_comp_channel *ch) { return ibt_fn.destroy_comp_channel(ch); }
static inline struct ibv_cq *ibtv_create_cq(struct ibv_context *c, int cqe, void *ctx, struct ibv_comp_channel *ch, int vec) { return ibt_fn.create_cq(c, cqe, ctx, ch, vec); }
static inline int ibtv_destroy_cq(struct ibv_cq *cq) { return ibt_fn.destroy_cq(cq); }
static inline int ibtv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **ctx) { return ibt_fn.get_cq_event(ch, cq, ctx); }
static inline void ibtv_ack_cq_events(struct ibv_cq *cq, unsigned int n) { ibt_fn.ack_cq_events(cq, n); }
static inline struct ibv_qp *ibtv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a) { return ibt_fn.create_qp(pd, a); }
static inline int ibtv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask) { return ibt_fn.modify_qp(qp, a, mask); }
static inline int ibtv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *init) { return ibt_fn.query_qp(qp, a, mask, init); }
static inline int ibtv_query_device(struct ibv_context *c, struct ibv_device_attr *a) { return ibt_fn.query_device(c, a); }
static inline int ibtv_resize_cq(struct ibv_cq *cq, int cqe) { return ibt_fn.resize_cq(cq, cqe); }
static inline int ibtv_destroy_qp(struct ibv_qp *qp) { return ibt_fn.destroy_qp(qp); }
static inline struct ibv_ah *ibtv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *a) { return ibt_fn.create_ah(pd, a); }
static inline int ibtv_destroy_ah(struct ibv_ah *ah) { return ibt_fn.destroy_ah(ah); }
static inline int ibtv_attach_mcast(struct ibv_qp *qp, const uint8_t *gid, uint16_t lid) { return ibt_fn.attach_mcast(qp, (const union ibv_gid *)gid, lid); }
static inline int ibtv_detach_mcast(struct ibv_qp *qp, const uint8_t *gid, uint16_t lid) { return ibt_fn.detach_mcast(qp, (const union ibv_gid *)gid, lid); }
static inline struct ibv_srq *ibtv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *a) { return ibt_fn.create_srq(pd, a); }
static inline int ibtv_destroy_srq(struct ibv_srq *srq) { return ibt_fn.destroy_srq(srq); }

/* ibtv_is_fork_initialized is ibv_is_fork_initialized, or -1 from a
 * library without it. */
static inline int ibtv_fork_init(void) { return ibt_fn.fork_init(); }
static inline int ibtv_is_fork_initialized(void) { return ibt_fn.is_fork_initialized ? ibt_fn.is_fork_initialized() : -1; }

/* ibtv_query_qp_data_in_order is ibv_query_qp_data_in_order, or
 * -EOPNOTSUPP from a library without it (before rdma-core 39). */
static inline int ibtv_query_qp_data_in_order(struct ibv_qp *qp, int op, uint32_t flags)
{
	return ibt_fn.query_qp_data_in_order ? ibt_fn.query_qp_data_in_order(qp, (enum ibv_wr_opcode)op, flags) : -EOPNOTSUPP;
}

/* ibt_at is entry i of a device list, which Go cannot index. */
static inline struct ibv_device *ibt_at(struct ibv_device **l, int i) { return l[i]; }

/* ibt_query_device_ex is <infiniband/verbs.h>'s inline ibv_query_device_ex
 * with no input, its fallback through ibt_fn. */
static inline int ibt_query_device_ex(struct ibv_context *ctx, struct ibv_device_attr_ex *a)
{
	struct verbs_context *vctx = ibt_vctx_op(ctx, query_device_ex);
	int ret;

	if (vctx) {
		ret = vctx->query_device_ex(ctx, NULL, a, sizeof(*a));
		if (ret != EOPNOTSUPP && ret != ENOSYS)
			return ret;
	}
	memset(a, 0, sizeof(*a));
	return ibt_fn.query_device(ctx, &a->orig_attr);
}

/* ibt_query_port_attr is <infiniband/verbs.h>'s inline ibv_query_port,
 * its fallback through ibt_fn. */
static inline int ibt_query_port_attr(struct ibv_context *ctx, int port, struct ibv_port_attr *pa)
{
	struct verbs_context *vctx = ibt_vctx_op(ctx, query_port);

	if (!vctx) {
		memset(pa, 0, sizeof(*pa));
		return ibt_fn.query_port(ctx, port, pa);
	}
	return vctx->query_port(ctx, port, pa, sizeof(*pa));
}

#endif
