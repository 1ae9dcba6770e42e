/*
 * ibt_verbs_abi.h: the part of libibverbs' ABI that package verbs uses,
 * declared here so that building ibtool needs no libibverbs-dev: the
 * library is loaded at run time (ibt_dl.h), and its ABI is stable across
 * versions. The layouts are rdma-core's (libibverbs/verbs.h, v44), each
 * struct whole; function pointers package verbs does not call are opaque
 * (void *), and enums name the values it uses and the ones before them.
 * Types and field names are the library's, so the C helpers read as
 * libibverbs code does.
 * internal/abicheck compares every size, offset and value here with
 * <infiniband/verbs.h> where that is installed (make test).
 *
 * The header's inline functions (ibv_poll_cq, ibv_post_send, ...) call a
 * context's ops; they are the ibtv_ inlines at the end, under their own
 * names.
 */
#ifndef IBT_VERBS_ABI_H
#define IBT_VERBS_ABI_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct ibv_context;
struct ibv_cq;
struct ibv_qp;
struct ibv_srq;
struct ibv_pd;
struct ibv_ah;
struct ibv_xrcd;

enum {
	IBV_SYSFS_NAME_MAX = 64,
	IBV_SYSFS_PATH_MAX = 256,
};

union ibv_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix; /* big endian */
		uint64_t interface_id;  /* big endian */
	} global;
};

enum ibv_gid_type {
	IBV_GID_TYPE_IB,
	IBV_GID_TYPE_ROCE_V1,
	IBV_GID_TYPE_ROCE_V2,
};

struct ibv_gid_entry {
	union ibv_gid gid;
	uint32_t gid_index;
	uint32_t port_num;
	uint32_t gid_type;
	uint32_t ndev_ifindex;
};

enum ibv_node_type {
	IBV_NODE_UNKNOWN = -1,
	IBV_NODE_CA = 1,
	IBV_NODE_SWITCH,
	IBV_NODE_ROUTER,
	IBV_NODE_RNIC,
	IBV_NODE_USNIC,
	IBV_NODE_USNIC_UDP,
	IBV_NODE_UNSPECIFIED,
};

enum ibv_transport_type {
	IBV_TRANSPORT_UNKNOWN = -1,
	IBV_TRANSPORT_IB = 0,
	IBV_TRANSPORT_IWARP,
	IBV_TRANSPORT_USNIC,
	IBV_TRANSPORT_USNIC_UDP,
	IBV_TRANSPORT_UNSPECIFIED,
};

enum ibv_atomic_cap {
	IBV_ATOMIC_NONE,
	IBV_ATOMIC_HCA,
	IBV_ATOMIC_GLOB,
};

struct ibv_device_attr {
	char fw_ver[64];
	uint64_t node_guid;      /* big endian */
	uint64_t sys_image_guid; /* big endian */
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	int max_qp;
	int max_qp_wr;
	unsigned int device_cap_flags;
	int max_sge;
	int max_sge_rd;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom;
	int max_ee_rd_atom;
	int max_res_rd_atom;
	int max_qp_init_rd_atom;
	int max_ee_init_rd_atom;
	enum ibv_atomic_cap atomic_cap;
	int max_ee;
	int max_rdd;
	int max_mw;
	int max_raw_ipv6_qp;
	int max_raw_ethy_qp;
	int max_mcast_grp;
	int max_mcast_qp_attach;
	int max_total_mcast_qp_attach;
	int max_ah;
	int max_fmr;
	int max_map_per_fmr;
	int max_srq;
	int max_srq_wr;
	int max_srq_sge;
	uint16_t max_pkeys;
	uint8_t local_ca_ack_delay;
	uint8_t phys_port_cnt;
};

struct ibv_query_device_ex_input {
	uint32_t comp_mask;
};

struct ibv_odp_caps {
	uint64_t general_caps;
	struct {
		uint32_t rc_odp_caps;
		uint32_t uc_odp_caps;
		uint32_t ud_odp_caps;
	} per_transport_caps;
};

struct ibv_tso_caps {
	uint32_t max_tso;
	uint32_t supported_qpts;
};

struct ibv_rss_caps {
	uint32_t supported_qpts;
	uint32_t max_rwq_indirection_tables;
	uint32_t max_rwq_indirection_table_size;
	uint64_t rx_hash_fields_mask;
	uint8_t rx_hash_function;
};

struct ibv_packet_pacing_caps {
	uint32_t qp_rate_limit_min;
	uint32_t qp_rate_limit_max;
	uint32_t supported_qpts;
};

struct ibv_tm_caps {
	uint32_t max_rndv_hdr_size;
	uint32_t max_num_tags;
	uint32_t flags;
	uint32_t max_ops;
	uint32_t max_sge;
};

struct ibv_cq_moderation_caps {
	uint16_t max_cq_count;
	uint16_t max_cq_period;
};

struct ibv_pci_atomic_caps {
	uint16_t fetch_add;
	uint16_t swap;
	uint16_t compare_swap;
};

/* The library fills as much of it as the size the caller passes. */
struct ibv_device_attr_ex {
	struct ibv_device_attr orig_attr;
	uint32_t comp_mask;
	struct ibv_odp_caps odp_caps;
	uint64_t completion_timestamp_mask;
	uint64_t hca_core_clock;
	uint64_t device_cap_flags_ex;
	struct ibv_tso_caps tso_caps;
	struct ibv_rss_caps rss_caps;
	uint32_t max_wq_type_rq;
	struct ibv_packet_pacing_caps packet_pacing_caps;
	uint32_t raw_packet_caps;
	struct ibv_tm_caps tm_caps;
	struct ibv_cq_moderation_caps cq_mod_caps;
	uint64_t max_dm_size;
	struct ibv_pci_atomic_caps pci_atomic_caps;
	uint32_t xrc_odp_caps;
	uint32_t phys_port_cnt_ex;
};

enum ibv_mtu {
	IBV_MTU_256 = 1,
	IBV_MTU_512 = 2,
	IBV_MTU_1024 = 3,
	IBV_MTU_2048 = 4,
	IBV_MTU_4096 = 5,
};

enum ibv_port_state {
	IBV_PORT_NOP = 0,
	IBV_PORT_DOWN = 1,
	IBV_PORT_INIT = 2,
	IBV_PORT_ARMED = 3,
	IBV_PORT_ACTIVE = 4,
	IBV_PORT_ACTIVE_DEFER = 5,
};

enum {
	IBV_LINK_LAYER_UNSPECIFIED,
	IBV_LINK_LAYER_INFINIBAND,
	IBV_LINK_LAYER_ETHERNET,
};

/* The library fills as much of it as the size the caller passes (later
 * versions append active_speed_ex). */
struct ibv_port_attr {
	enum ibv_port_state state;
	enum ibv_mtu max_mtu;
	enum ibv_mtu active_mtu;
	int gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;
	uint32_t qkey_viol_cntr;
	uint16_t pkey_tbl_len;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;
	uint8_t flags;
	uint16_t port_cap_flags2;
};

enum ibv_event_type {
	IBV_EVENT_CQ_ERR,
	IBV_EVENT_QP_FATAL,
	IBV_EVENT_QP_REQ_ERR,
	IBV_EVENT_QP_ACCESS_ERR,
	IBV_EVENT_COMM_EST,
	IBV_EVENT_SQ_DRAINED,
	IBV_EVENT_PATH_MIG,
	IBV_EVENT_PATH_MIG_ERR,
	IBV_EVENT_DEVICE_FATAL,
	IBV_EVENT_PORT_ACTIVE,
	IBV_EVENT_PORT_ERR,
	IBV_EVENT_LID_CHANGE,
	IBV_EVENT_PKEY_CHANGE,
	IBV_EVENT_SM_CHANGE,
	IBV_EVENT_SRQ_ERR,
	IBV_EVENT_SRQ_LIMIT_REACHED,
	IBV_EVENT_QP_LAST_WQE_REACHED,
	IBV_EVENT_CLIENT_REREGISTER,
	IBV_EVENT_GID_CHANGE,
	IBV_EVENT_WQ_FATAL,
};

struct ibv_async_event {
	union {
		struct ibv_cq *cq;
		struct ibv_qp *qp;
		struct ibv_srq *srq;
		void *wq;
		int port_num;
	} element;
	enum ibv_event_type event_type;
};

enum ibv_wc_status {
	IBV_WC_SUCCESS,
	IBV_WC_LOC_LEN_ERR,
	IBV_WC_LOC_QP_OP_ERR,
	IBV_WC_LOC_EEC_OP_ERR,
	IBV_WC_LOC_PROT_ERR,
	IBV_WC_WR_FLUSH_ERR,
	IBV_WC_MW_BIND_ERR,
	IBV_WC_BAD_RESP_ERR,
	IBV_WC_LOC_ACCESS_ERR,
	IBV_WC_REM_INV_REQ_ERR,
	IBV_WC_REM_ACCESS_ERR,
	IBV_WC_REM_OP_ERR,
	IBV_WC_RETRY_EXC_ERR,
	IBV_WC_RNR_RETRY_EXC_ERR,
	IBV_WC_LOC_RDD_VIOL_ERR,
	IBV_WC_REM_INV_RD_REQ_ERR,
	IBV_WC_REM_ABORT_ERR,
	IBV_WC_INV_EECN_ERR,
	IBV_WC_INV_EEC_STATE_ERR,
	IBV_WC_FATAL_ERR,
	IBV_WC_RESP_TIMEOUT_ERR,
	IBV_WC_GENERAL_ERR,
	IBV_WC_TM_ERR,
	IBV_WC_TM_RNDV_INCOMPLETE,
};

enum ibv_wc_opcode {
	IBV_WC_SEND,
	IBV_WC_RDMA_WRITE,
	IBV_WC_RDMA_READ,
	IBV_WC_COMP_SWAP,
	IBV_WC_FETCH_ADD,
	IBV_WC_BIND_MW,
	IBV_WC_LOCAL_INV,
	IBV_WC_TSO,
	IBV_WC_ATOMIC_WRITE = 9,
	IBV_WC_RECV = 1 << 7,
	IBV_WC_RECV_RDMA_WITH_IMM,
};

enum ibv_wc_flags {
	IBV_WC_GRH = 1 << 0,
	IBV_WC_WITH_IMM = 1 << 1,
	IBV_WC_IP_CSUM_OK = 1 << 2,
	IBV_WC_WITH_INV = 1 << 3,
};

/* ibv_poll_cq fills arrays of it: its size is the ABI's. */
struct ibv_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	union {
		uint32_t imm_data; /* big endian */
		uint32_t invalidated_rkey;
	};
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
};

enum ibv_access_flags {
	IBV_ACCESS_LOCAL_WRITE = 1,
	IBV_ACCESS_REMOTE_WRITE = 1 << 1,
	IBV_ACCESS_REMOTE_READ = 1 << 2,
	IBV_ACCESS_REMOTE_ATOMIC = 1 << 3,
	IBV_ACCESS_MW_BIND = 1 << 4,
	IBV_ACCESS_ZERO_BASED = 1 << 5,
	IBV_ACCESS_ON_DEMAND = 1 << 6,
	IBV_ACCESS_HUGETLB = 1 << 7,
};

struct ibv_pd {
	struct ibv_context *context;
	uint32_t handle;
};

enum ibv_xrcd_init_attr_mask {
	IBV_XRCD_INIT_ATTR_FD = 1 << 0,
	IBV_XRCD_INIT_ATTR_OFLAGS = 1 << 1,
};

struct ibv_xrcd_init_attr {
	uint32_t comp_mask;
	int fd;
	int oflags;
};

struct ibv_xrcd {
	struct ibv_context *context;
};

struct ibv_mr {
	struct ibv_context *context;
	struct ibv_pd *pd;
	void *addr;
	size_t length;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
};

struct ibv_global_route {
	union ibv_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
};

struct ibv_ah_attr {
	struct ibv_global_route grh;
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t port_num;
};

struct ibv_srq_attr {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
};

struct ibv_srq_init_attr {
	void *srq_context;
	struct ibv_srq_attr attr;
};

enum ibv_srq_type {
	IBV_SRQT_BASIC,
	IBV_SRQT_XRC,
	IBV_SRQT_TM,
};

enum ibv_srq_init_attr_mask {
	IBV_SRQ_INIT_ATTR_TYPE = 1 << 0,
	IBV_SRQ_INIT_ATTR_PD = 1 << 1,
	IBV_SRQ_INIT_ATTR_XRCD = 1 << 2,
	IBV_SRQ_INIT_ATTR_CQ = 1 << 3,
	IBV_SRQ_INIT_ATTR_TM = 1 << 4,
};

struct ibv_tm_cap {
	uint32_t max_num_tags;
	uint32_t max_ops;
};

struct ibv_srq_init_attr_ex {
	void *srq_context;
	struct ibv_srq_attr attr;
	uint32_t comp_mask;
	enum ibv_srq_type srq_type;
	struct ibv_pd *pd;
	struct ibv_xrcd *xrcd;
	struct ibv_cq *cq;
	struct ibv_tm_cap tm_cap;
};

enum ibv_qp_type {
	IBV_QPT_RC = 2,
	IBV_QPT_UC,
	IBV_QPT_UD,
	IBV_QPT_RAW_PACKET = 8,
	IBV_QPT_XRC_SEND = 9,
	IBV_QPT_XRC_RECV,
};

struct ibv_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct ibv_qp_init_attr {
	void *qp_context;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	struct ibv_qp_cap cap;
	enum ibv_qp_type qp_type;
	int sq_sig_all;
};

enum ibv_qp_init_attr_mask {
	IBV_QP_INIT_ATTR_PD = 1 << 0,
	IBV_QP_INIT_ATTR_XRCD = 1 << 1,
	IBV_QP_INIT_ATTR_SEND_OPS_FLAGS = 1 << 6,
};

enum ibv_qp_create_send_ops_flags {
	IBV_QP_EX_WITH_RDMA_WRITE = 1 << 0,
	IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM = 1 << 1,
	IBV_QP_EX_WITH_SEND = 1 << 2,
	IBV_QP_EX_WITH_SEND_WITH_IMM = 1 << 3,
	IBV_QP_EX_WITH_RDMA_READ = 1 << 4,
	IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP = 1 << 5,
	IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD = 1 << 6,
	IBV_QP_EX_WITH_LOCAL_INV = 1 << 7,
	IBV_QP_EX_WITH_BIND_MW = 1 << 8,
	IBV_QP_EX_WITH_SEND_WITH_INV = 1 << 9,
	IBV_QP_EX_WITH_TSO = 1 << 10,
	IBV_QP_EX_WITH_ATOMIC_WRITE = 1 << 12,
};

struct ibv_rx_hash_conf {
	uint8_t rx_hash_function;
	uint8_t rx_hash_key_len;
	uint8_t *rx_hash_key;
	uint64_t rx_hash_fields_mask;
};

struct ibv_qp_init_attr_ex {
	void *qp_context;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	struct ibv_qp_cap cap;
	enum ibv_qp_type qp_type;
	int sq_sig_all;
	uint32_t comp_mask;
	struct ibv_pd *pd;
	struct ibv_xrcd *xrcd;
	uint32_t create_flags;
	uint16_t max_tso_header;
	void *rwq_ind_tbl;
	struct ibv_rx_hash_conf rx_hash_conf;
	uint32_t source_qpn;
	uint64_t send_ops_flags;
};

enum ibv_qp_attr_mask {
	IBV_QP_STATE = 1 << 0,
	IBV_QP_CUR_STATE = 1 << 1,
	IBV_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	IBV_QP_ACCESS_FLAGS = 1 << 3,
	IBV_QP_PKEY_INDEX = 1 << 4,
	IBV_QP_PORT = 1 << 5,
	IBV_QP_QKEY = 1 << 6,
	IBV_QP_AV = 1 << 7,
	IBV_QP_PATH_MTU = 1 << 8,
	IBV_QP_TIMEOUT = 1 << 9,
	IBV_QP_RETRY_CNT = 1 << 10,
	IBV_QP_RNR_RETRY = 1 << 11,
	IBV_QP_RQ_PSN = 1 << 12,
	IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	IBV_QP_ALT_PATH = 1 << 14,
	IBV_QP_MIN_RNR_TIMER = 1 << 15,
	IBV_QP_SQ_PSN = 1 << 16,
	IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	IBV_QP_PATH_MIG_STATE = 1 << 18,
	IBV_QP_CAP = 1 << 19,
	IBV_QP_DEST_QPN = 1 << 20,
	IBV_QP_RATE_LIMIT = 1 << 25,
};

enum ibv_qp_state {
	IBV_QPS_RESET,
	IBV_QPS_INIT,
	IBV_QPS_RTR,
	IBV_QPS_RTS,
	IBV_QPS_SQD,
	IBV_QPS_SQE,
	IBV_QPS_ERR,
	IBV_QPS_UNKNOWN,
};

enum ibv_mig_state {
	IBV_MIG_MIGRATED,
	IBV_MIG_REARM,
	IBV_MIG_ARMED,
};

struct ibv_qp_attr {
	enum ibv_qp_state qp_state;
	enum ibv_qp_state cur_qp_state;
	enum ibv_mtu path_mtu;
	enum ibv_mig_state path_mig_state;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	unsigned int qp_access_flags;
	struct ibv_qp_cap cap;
	struct ibv_ah_attr ah_attr;
	struct ibv_ah_attr alt_ah_attr;
	uint16_t pkey_index;
	uint16_t alt_pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t alt_port_num;
	uint8_t alt_timeout;
	uint32_t rate_limit;
};

enum ibv_wr_opcode {
	IBV_WR_RDMA_WRITE,
	IBV_WR_RDMA_WRITE_WITH_IMM,
	IBV_WR_SEND,
	IBV_WR_SEND_WITH_IMM,
	IBV_WR_RDMA_READ,
	IBV_WR_ATOMIC_CMP_AND_SWP,
	IBV_WR_ATOMIC_FETCH_AND_ADD,
	IBV_WR_LOCAL_INV,
	IBV_WR_BIND_MW,
	IBV_WR_SEND_WITH_INV,
	IBV_WR_TSO,
	IBV_WR_DRIVER1,
	IBV_WR_ATOMIC_WRITE = 15,
};

enum ibv_send_flags {
	IBV_SEND_FENCE = 1 << 0,
	IBV_SEND_SIGNALED = 1 << 1,
	IBV_SEND_SOLICITED = 1 << 2,
	IBV_SEND_INLINE = 1 << 3,
	IBV_SEND_IP_CSUM = 1 << 4,
};

struct ibv_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct ibv_mw_bind_info {
	struct ibv_mr *mr;
	uint64_t addr;
	uint64_t length;
	unsigned int mw_access_flags;
};

enum ibv_mw_type {
	IBV_MW_TYPE_1 = 1,
	IBV_MW_TYPE_2 = 2,
};

struct ibv_mw {
	struct ibv_context *context;
	struct ibv_pd *pd;
	uint32_t rkey;
	uint32_t handle;
	enum ibv_mw_type type;
};

struct ibv_mw_bind {
	uint64_t wr_id;
	unsigned int send_flags;
	struct ibv_mw_bind_info bind_info;
};

/* Package verbs allocates arrays of it: its size is the ABI's. */
struct ibv_send_wr {
	uint64_t wr_id;
	struct ibv_send_wr *next;
	struct ibv_sge *sg_list;
	int num_sge;
	enum ibv_wr_opcode opcode;
	unsigned int send_flags;
	union {
		uint32_t imm_data; /* big endian */
		uint32_t invalidate_rkey;
	};
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			struct ibv_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
	} wr;
	union {
		struct {
			uint32_t remote_srqn;
		} xrc;
	} qp_type;
	union {
		struct {
			void *mw;
			uint32_t rkey;
			struct ibv_mw_bind_info bind_info;
		} bind_mw;
		struct {
			void *hdr;
			uint16_t hdr_sz;
			uint16_t mss;
		} tso;
	};
};

struct ibv_recv_wr {
	uint64_t wr_id;
	struct ibv_recv_wr *next;
	struct ibv_sge *sg_list;
	int num_sge;
};

struct ibv_srq {
	struct ibv_context *context;
	void *srq_context;
	struct ibv_pd *pd;
	uint32_t handle;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t events_completed;
};

struct ibv_qp {
	struct ibv_context *context;
	void *qp_context;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	uint32_t handle;
	uint32_t qp_num;
	enum ibv_qp_state state;
	enum ibv_qp_type qp_type;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t events_completed;
};

struct ibv_data_buf {
	void *addr;
	size_t length;
};

/* An extended QP (ibv_qp_to_qp_ex) and its ibv_wr_* ops; those package
 * verbs does not call are opaque. */
struct ibv_qp_ex {
	struct ibv_qp qp_base;
	uint64_t comp_mask;
	uint64_t wr_id;
	unsigned int wr_flags;
	void (*wr_atomic_cmp_swp)(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, uint64_t compare, uint64_t swap);
	void (*wr_atomic_fetch_add)(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, uint64_t add);
	void (*wr_bind_mw)(struct ibv_qp_ex *qp, struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *bind_info);
	void (*wr_local_inv)(struct ibv_qp_ex *qp, uint32_t invalidate_rkey);
	void (*wr_rdma_read)(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr);
	void (*wr_rdma_write)(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr);
	void (*wr_rdma_write_imm)(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, uint32_t imm_data);
	void (*wr_send)(struct ibv_qp_ex *qp);
	void (*wr_send_imm)(struct ibv_qp_ex *qp, uint32_t imm_data);
	void (*wr_send_inv)(struct ibv_qp_ex *qp, uint32_t invalidate_rkey);
	void *wr_send_tso;
	void (*wr_set_ud_addr)(struct ibv_qp_ex *qp, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey);
	void (*wr_set_xrc_srqn)(struct ibv_qp_ex *qp, uint32_t remote_srqn);
	void (*wr_set_inline_data)(struct ibv_qp_ex *qp, void *addr, size_t length);
	void (*wr_set_inline_data_list)(struct ibv_qp_ex *qp, size_t num_buf, const struct ibv_data_buf *buf_list);
	void (*wr_set_sge)(struct ibv_qp_ex *qp, uint32_t lkey, uint64_t addr, uint32_t length);
	void (*wr_set_sge_list)(struct ibv_qp_ex *qp, size_t num_sge, const struct ibv_sge *sg_list);
	void (*wr_start)(struct ibv_qp_ex *qp);
	int (*wr_complete)(struct ibv_qp_ex *qp);
	void (*wr_abort)(struct ibv_qp_ex *qp);
	void *wr_atomic_write;
};

struct ibv_comp_channel {
	struct ibv_context *context;
	int fd;
	int refcnt;
};

struct ibv_cq {
	struct ibv_context *context;
	struct ibv_comp_channel *channel;
	void *cq_context;
	uint32_t handle;
	int cqe;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t comp_events_completed;
	uint32_t async_events_completed;
};

struct ibv_ah {
	struct ibv_context *context;
	struct ibv_pd *pd;
	uint32_t handle;
};

struct _ibv_device_ops {
	void *_dummy1;
	void *_dummy2;
};

struct ibv_device {
	struct _ibv_device_ops _ops;
	enum ibv_node_type node_type;
	enum ibv_transport_type transport_type;
	char name[IBV_SYSFS_NAME_MAX];
	char dev_name[IBV_SYSFS_NAME_MAX];
	char dev_path[IBV_SYSFS_PATH_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
};

enum ibv_create_cq_wc_flags {
	IBV_WC_EX_WITH_BYTE_LEN = 1 << 0,
	IBV_WC_EX_WITH_IMM = 1 << 1,
	IBV_WC_EX_WITH_QP_NUM = 1 << 2,
	IBV_WC_EX_WITH_SRC_QP = 1 << 3,
	IBV_WC_EX_WITH_SLID = 1 << 4,
	IBV_WC_EX_WITH_SL = 1 << 5,
	IBV_WC_EX_WITH_DLID_PATH_BITS = 1 << 6,
	IBV_WC_EX_WITH_COMPLETION_TIMESTAMP = 1 << 7,
	IBV_WC_EX_WITH_CVLAN = 1 << 8,
	IBV_WC_EX_WITH_FLOW_TAG = 1 << 9,
	IBV_WC_EX_WITH_TM_INFO = 1 << 10,
	IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK = 1 << 11,
};

struct ibv_cq_init_attr_ex {
	uint32_t cqe;
	void *cq_context;
	struct ibv_comp_channel *channel;
	uint32_t comp_vector;
	uint64_t wc_flags;
	uint32_t comp_mask;
	uint32_t flags;
	struct ibv_pd *parent_domain;
};

struct ibv_poll_cq_attr {
	uint32_t comp_mask;
};

/* An extended CQ begins as struct ibv_cq does (ibv_cq_ex_to_cq is a
 * cast); its poll and read ops follow. Those package verbs does not call
 * are opaque. */
struct ibv_cq_ex {
	struct ibv_context *context;
	struct ibv_comp_channel *channel;
	void *cq_context;
	uint32_t handle;
	int cqe;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t comp_events_completed;
	uint32_t async_events_completed;
	uint32_t comp_mask;
	enum ibv_wc_status status;
	uint64_t wr_id;
	int (*start_poll)(struct ibv_cq_ex *current, struct ibv_poll_cq_attr *attr);
	int (*next_poll)(struct ibv_cq_ex *current);
	void (*end_poll)(struct ibv_cq_ex *current);
	enum ibv_wc_opcode (*read_opcode)(struct ibv_cq_ex *current);
	uint32_t (*read_vendor_err)(struct ibv_cq_ex *current);
	uint32_t (*read_byte_len)(struct ibv_cq_ex *current);
	uint32_t (*read_imm_data)(struct ibv_cq_ex *current); /* big endian */
	uint32_t (*read_qp_num)(struct ibv_cq_ex *current);
	uint32_t (*read_src_qp)(struct ibv_cq_ex *current);
	unsigned int (*read_wc_flags)(struct ibv_cq_ex *current);
	uint32_t (*read_slid)(struct ibv_cq_ex *current);
	uint8_t (*read_sl)(struct ibv_cq_ex *current);
	uint8_t (*read_dlid_path_bits)(struct ibv_cq_ex *current);
	uint64_t (*read_completion_ts)(struct ibv_cq_ex *current);
	void *read_cvlan;
	void *read_flow_tag;
	void *read_tm_info;
	uint64_t (*read_completion_wallclock_ns)(struct ibv_cq_ex *current);
};

/* A context's ops: the data path the header's inlines call. The entries
 * package verbs does not call are opaque. */
struct ibv_context_ops {
	void *_compat_query_device;
	void *_compat_query_port;
	void *_compat_alloc_pd;
	void *_compat_dealloc_pd;
	void *_compat_reg_mr;
	void *_compat_rereg_mr;
	void *_compat_dereg_mr;
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
	int (*dealloc_mw)(struct ibv_mw *mw);
	void *_compat_create_cq;
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	void *_compat_cq_event;
	void *_compat_resize_cq;
	void *_compat_destroy_cq;
	void *_compat_create_srq;
	void *_compat_modify_srq;
	void *_compat_query_srq;
	void *_compat_destroy_srq;
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr, struct ibv_recv_wr **bad_recv_wr);
	void *_compat_create_qp;
	void *_compat_query_qp;
	void *_compat_modify_qp;
	void *_compat_destroy_qp;
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
	void *_compat_create_ah;
	void *_compat_destroy_ah;
	void *_compat_attach_mcast;
	void *_compat_detach_mcast;
	void *_compat_async_event;
};

struct ibv_context {
	struct ibv_device *device;
	struct ibv_context_ops ops;
	int cmd_fd;
	int async_fd;
	int num_comp_vectors;
	pthread_mutex_t mutex;
	void *abi_compat; /* IBT_ABI_IS_EXTENDED: a verbs_context holds it */
};

/*
 * verbs_context holds a context at its end and grows toward lower
 * addresses: a newer library prepends ops, so each op's distance from the
 * context is fixed, and sz (the library's sizeof) tells which ops it has.
 * Declared from query_port, the newest op package verbs calls; ops it
 * does not call are opaque.
 */
struct verbs_context {
	int (*query_port)(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr, size_t port_attr_len);
	void *advise_mr;
	void *alloc_null_mr;
	void *read_counters;
	void *attach_counters_point_flow;
	void *create_counters;
	void *destroy_counters;
	void *reg_dm_mr;
	void *alloc_dm;
	void *free_dm;
	void *modify_flow_action_esp;
	void *destroy_flow_action;
	void *create_flow_action_esp;
	void *modify_qp_rate_limit;
	void *alloc_parent_domain;
	void *dealloc_td;
	void *alloc_td;
	void *modify_cq;
	void *post_srq_ops;
	void *destroy_rwq_ind_table;
	void *create_rwq_ind_table;
	void *destroy_wq;
	void *modify_wq;
	void *create_wq;
	void *query_rt_values;
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context, struct ibv_cq_init_attr_ex *init_attr);
	void *priv;
	int (*query_device_ex)(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size);
	void *ibv_destroy_flow;
	void *ABI_placeholder2;
	void *ibv_create_flow;
	void *ABI_placeholder1;
	void *open_qp;
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context, struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context, struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context, struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	uint64_t _ABI_placeholder3;
	size_t sz;
	struct ibv_context context;
};

#define IBT_ABI_IS_EXTENDED ((void *)UINTPTR_MAX)

/* ibt_vctx is verbs_get_ctx: the verbs_context around ctx, or NULL for a
 * context of a library too old to have one. */
static inline struct verbs_context *ibt_vctx(struct ibv_context *ctx)
{
	if (ctx->abi_compat != IBT_ABI_IS_EXTENDED)
		return NULL;
	return (struct verbs_context *)((uint8_t *)ctx - offsetof(struct verbs_context, context));
}

/* ibt_vctx_op is verbs_get_ctx_op: the verbs_context around ctx when its
 * library has op and set it, else NULL. */
#define ibt_vctx_op(ctx, op)                                                        \
	({                                                                          \
		struct verbs_context *__v = ibt_vctx(ctx);                          \
		(!__v || __v->sz < sizeof(*__v) - offsetof(struct verbs_context, op) || \
		 !__v->op) ? NULL : __v;                                            \
	})

/* The header's inlines, through a context's ops. */
static inline int ibtv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc) { return cq->context->ops.poll_cq(cq, n, wc); }
static inline int ibtv_req_notify_cq(struct ibv_cq *cq, int solicited_only) { return cq->context->ops.req_notify_cq(cq, solicited_only); }
static inline int ibtv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad) { return qp->context->ops.post_send(qp, wr, bad); }
static inline int ibtv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) { return qp->context->ops.post_recv(qp, wr, bad); }
static inline int ibtv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) { return srq->context->ops.post_srq_recv(srq, wr, bad); }

static inline struct ibv_xrcd *ibtv_open_xrcd(struct ibv_context *ctx, struct ibv_xrcd_init_attr *a)
{
	struct verbs_context *v = ibt_vctx_op(ctx, open_xrcd);

	if (!v) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return v->open_xrcd(ctx, a);
}

/* A domain was opened through open_xrcd, so its context has close_xrcd. */
static inline int ibtv_close_xrcd(struct ibv_xrcd *xrcd) { return ibt_vctx(xrcd->context)->close_xrcd(xrcd); }

static inline int ibtv_get_srq_num(struct ibv_srq *srq, uint32_t *num)
{
	struct verbs_context *v = ibt_vctx_op(srq->context, get_srq_num);

	return v ? v->get_srq_num(srq, num) : EOPNOTSUPP;
}

#endif
