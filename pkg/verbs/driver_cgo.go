//go:build cgo && !noverbs

package verbs

/*
#cgo LDFLAGS: -ldl
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

static int ibt_post_send(struct ibv_qp *qp, struct ibt_swr *in, int n, struct ibv_send_wr *wr, struct ibv_sge *sge) {
	struct ibv_send_wr *bad = NULL;
	int i;
	for (i = 0; i < n; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = in[i].wr_id;
		if (in[i].length) {
			sge[i].addr = in[i].addr;
			sge[i].length = in[i].length;
			sge[i].lkey = in[i].lkey;
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
		}
		wr[i].opcode = in[i].opcode;
		wr[i].send_flags = in[i].flags;
		wr[i].wr.rdma.remote_addr = in[i].raddr;
		wr[i].wr.rdma.rkey = in[i].rkey;
		if (in[i].opcode == IBV_WR_RDMA_WRITE_WITH_IMM || in[i].opcode == IBV_WR_SEND_WITH_IMM)
			wr[i].imm_data = htonl(in[i].imm);
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

static int ibt_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc, struct ibt_wc *out) {
	int got = ibv_poll_cq(cq, n, wc), i;
	for (i = 0; i < got; i++) {
		out[i].wr_id = wc[i].wr_id;
		out[i].status = wc[i].status;
		out[i].opcode = wc[i].opcode;
		out[i].vendor_err = wc[i].vendor_err;
		out[i].byte_len = wc[i].byte_len;
		out[i].has_imm = (wc[i].wc_flags & IBV_WC_WITH_IMM) != 0;
		out[i].imm = out[i].has_imm ? ntohl(wc[i].imm_data) : 0;
		out[i].qp_num = wc[i].qp_num;
		out[i].src_qp = wc[i].src_qp;
	}
	return got;
}

static struct ibv_device *ibt_dev_at(struct ibv_device **l, int i) { return l[i]; }

static int ibt_qport(struct ibv_context *ctx, int port, struct ibv_port_attr *pa) {
	return ibt_query_port_attr(ctx, port, pa);
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
	"errors"
	"fmt"
	"sync"
	"syscall"
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
			dv := C.ibt_dev_at(l, C.int(i))
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
	if rc, err := C.ibt_qport(ctx.(*C.struct_ibv_context), C.int(port), &pa); rc != 0 {
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
		wc[i] = WorkCompletion{ID: uint64(f.wr_id), Status: WCStatus(f.status), Opcode: WCOpcode(f.opcode),
			VendorErr: uint32(f.vendor_err), ByteLen: uint32(f.byte_len), Imm: uint32(f.imm), HasImm: f.has_imm != 0,
			QPNum: uint32(f.qp_num), SrcQP: uint32(f.src_qp)}
	}
	return int(n), nil
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
		in[i] = C.struct_ibt_swr{wr_id: C.uint64_t(w.id), addr: C.uint64_t(w.addr), raddr: C.uint64_t(w.raddr),
			length: C.uint32_t(w.length), lkey: C.uint32_t(w.lkey), rkey: C.uint32_t(w.rkey), imm: C.uint32_t(w.imm),
			opcode: C.int(w.op), flags: C.int(w.flags)}
	}
	if rc := C.ibt_post_send(h.qp, h.swr, C.int(len(wrs)), h.sends, h.sges); rc != 0 {
		return rcErr(rc, nil)
	}
	return nil
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
