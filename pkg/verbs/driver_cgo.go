//go:build cgo && !noverbs

package verbs

// The C helpers are in ibt_verbs.c; libibverbs is loaded with dlopen
// (ibt_dl.h), so only libdl is linked.

// #cgo LDFLAGS: -ldl
// #include <stdlib.h>
// #include "ibt_verbs.h"
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
	// An extended CQ (cq is the same object): polled through its ops,
	// reading the fields exFlags asked for.
	ex      *C.struct_ibv_cq_ex
	exFlags C.uint64_t
}

type cQP struct {
	qp    *C.struct_ibv_qp
	swr   *C.struct_ibt_swr
	rwr   *C.struct_ibt_rwr
	sends *C.struct_ibv_send_wr
	recvs *C.struct_ibv_recv_wr
	sges  *C.struct_ibv_sge
	// spool and rpool hold the SGLs of a batch of sends and receives
	// with more than one SGE: maxPostBatch times the QP's most.
	spool, rpool []C.struct_ibv_sge
	qpx          *C.struct_ibv_qp_ex // a QP made with send ops: posts go through it
}

type cMR struct{ mr *C.struct_ibv_mr }

type cSRQ struct {
	srq   *C.struct_ibv_srq
	rwr   *C.struct_ibt_rwr
	recvs *C.struct_ibv_recv_wr
	sges  *C.struct_ibv_sge
	rpool []C.struct_ibv_sge // as cQP's
}

// sgePool allocates C memory for maxPostBatch requests of up to n SGEs.
func sgePool(n int) []C.struct_ibv_sge {
	n = maxPostBatch * max(n, 1)
	return unsafe.Slice((*C.struct_ibv_sge)(C.calloc(C.size_t(n), C.sizeof_struct_ibv_sge)), n)
}

// fillSGL copies a request's SGL into pool from *at on, returning the
// C list and its length; a request with one SGE or none gets (nil, 0).
func fillSGL(pool []C.struct_ibv_sge, at *int, sgl []sgeWork) (*C.struct_ibv_sge, C.int) {
	if len(sgl) == 0 {
		return nil, 0
	}
	out := pool[*at : *at+len(sgl)]
	for i, e := range sgl {
		out[i] = C.struct_ibv_sge{addr: C.uint64_t(e.addr), length: C.uint32_t(e.length), lkey: C.uint32_t(e.lkey)}
	}
	*at += len(sgl)
	return &out[0], C.int(len(sgl))
}

// rwrToC is a checked receive work request as the C helpers take it, its
// SGL (if it has one) put in pool from *at on.
func rwrToC(w recvWork, pool []C.struct_ibv_sge, at *int) C.struct_ibt_rwr {
	r := C.struct_ibt_rwr{wr_id: C.uint64_t(w.id), addr: C.uint64_t(w.addr), length: C.uint32_t(w.length), lkey: C.uint32_t(w.lkey)}
	r.sgl, r.nsge = fillSGL(pool, at, w.sgl)
	return r
}

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

func (d *cDriver) createCQ(ctx handle, cqe int, ch handle, vector int) (handle, error) {
	var cch *C.struct_ibv_comp_channel
	if ch != nil {
		cch = ch.(*C.struct_ibv_comp_channel)
	}
	cq, err := C.ibtv_create_cq(ctx.(*C.struct_ibv_context), C.int(cqe), nil, cch, C.int(vector))
	if cq == nil {
		return nil, errnoOr(err, C.int(syscall.ENOMEM))
	}
	return d.adoptCQ(&cCQ{cq: cq}), nil
}

// adoptCQ gives h its scratch memory and records it for
// ibv_get_cq_event.
func (d *cDriver) adoptCQ(h *cCQ) *cCQ {
	h.wc = (*C.struct_ibv_wc)(C.calloc(maxPostBatch, C.sizeof_struct_ibv_wc))
	h.flat = (*C.struct_ibt_wc)(C.calloc(maxPostBatch, C.sizeof_struct_ibt_wc))
	d.mu.Lock()
	d.cqs[h.cq] = h
	d.mu.Unlock()
	return h
}

func (d *cDriver) createCQEx(ctx handle, cqe int, ch handle, flags WCFlags) (handle, error) {
	var cch *C.struct_ibv_comp_channel
	if ch != nil {
		cch = ch.(*C.struct_ibv_comp_channel)
	}
	cq, err := C.ibt_create_cq_ex(ctx.(*C.struct_ibv_context), C.int(cqe), cch, C.uint64_t(flags))
	if cq == nil {
		return nil, errnoOr(err, C.int(syscall.EOPNOTSUPP))
	}
	// ibv_cq_ex_to_cq is a cast: the extended CQ begins as a CQ.
	return d.adoptCQ(&cCQ{cq: (*C.struct_ibv_cq)(unsafe.Pointer(cq)), ex: cq, exFlags: C.uint64_t(flags)}), nil
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

func (d *cDriver) waitChannel(ch handle, ms int) (bool, error) {
	rc, err := C.ibt_wait_channel(ch.(*C.struct_ibv_comp_channel), C.int(ms))
	if rc < 0 {
		return false, err
	}
	return rc == 1, nil
}

func (d *cDriver) ackCQEvents(cq handle, n int) { C.ibtv_ack_cq_events(cq.(*cCQ).cq, C.uint(n)) }

func (d *cDriver) pollCQ(cq handle, wc []WorkCompletion) (int, error) {
	h := cq.(*cCQ)
	var n C.int
	if h.ex != nil {
		n = C.ibt_poll_ex(h.ex, h.exFlags, C.int(min(len(wc), maxPostBatch)), h.flat)
	} else {
		n = C.ibt_poll(h.cq, C.int(min(len(wc), maxPostBatch)), h.wc, h.flat)
	}
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
		QPNum: uint32(f.qp_num), SrcQP: uint32(f.src_qp), InvRKey: uint32(f.inv_rkey), HasInv: f.has_inv != 0,
		Timestamp: uint64(f.ts), HasTimestamp: f.has_ts != 0, SLID: uint16(f.slid), SL: uint8(f.sl), GRH: f.grh != 0,
		DLIDPathBits: uint8(f.dlid_path_bits)}
}

func (d *cDriver) createQP(pd handle, a qpCreate) (handle, uint32, QPCaps, error) {
	var got C.struct_ibv_qp_cap
	sigall := C.int(0)
	if a.signalAll {
		sigall = 1
	}
	flags := C.int(0)
	if a.blockSelfMcastLB {
		flags |= C.IBV_QP_CREATE_BLOCK_SELF_MCAST_LB
	}
	c := a.caps
	var srq *C.struct_ibv_srq
	if a.srq != nil {
		srq = a.srq.(*cSRQ).srq
	}
	var scq, rcq *C.struct_ibv_cq
	if a.sendCQ != nil {
		scq = a.sendCQ.(*cCQ).cq
	}
	if a.recvCQ != nil {
		rcq = a.recvCQ.(*cCQ).cq
	}
	var xrcd *C.struct_ibv_xrcd
	if a.xrcd != nil {
		xrcd = a.xrcd.(*C.struct_ibv_xrcd)
	}
	var qpx *C.struct_ibv_qp_ex
	qp, err := C.ibt_create_qp(pd.(*C.struct_ibv_pd), C.int(a.typ), scq, rcq, srq, xrcd,
		C.int(c.MaxSendWR), C.int(c.MaxRecvWR), C.int(c.MaxSendSGE), C.int(c.MaxRecvSGE), C.int(c.MaxInlineData), sigall,
		C.uint64_t(a.sendOps), flags, &got, &qpx)
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
	h.spool, h.rpool = sgePool(caps.MaxSendSGE), sgePool(caps.MaxRecvSGE)
	h.qpx = qpx
	return h, uint32(C.ibt_qp_num(qp)), caps, nil
}

func (d *cDriver) modifyQP(qp handle, m qpModify) error {
	q := qp.(*cQP).qp
	var rc C.int
	var err error
	switch m.to {
	case QPStateInit:
		rc, err = C.ibt_to_init(q, C.int(m.init.Port), C.int(m.init.PKeyIndex), C.int(m.init.Access), C.uint32_t(m.init.QKey))
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
	case QPStateReset, QPStateErr, QPStateSQD:
		rc, err = C.ibt_to_state(q, C.int(m.to))
	default:
		return syscall.EINVAL
	}
	if rc != 0 {
		return rcErr(rc, err)
	}
	return nil
}

func (d *cDriver) queryDataInOrder(qp handle, op Opcode) (DataInOrder, error) {
	rc, err := C.ibtv_query_qp_data_in_order(qp.(*cQP).qp, C.int(op), 0)
	if rc < 0 {
		return 0, rcErr(rc, err)
	}
	return DataInOrder(rc), nil
}

func (d *cDriver) queryQP(qp handle) (QPAttr, error) {
	var a C.struct_ibv_qp_attr
	var init C.struct_ibv_qp_init_attr
	if rc, err := C.ibt_query_qp(qp.(*cQP).qp, &a, &init); rc != 0 {
		return QPAttr{}, rcErr(rc, err)
	}
	q := QPAttr{State: QPState(a.qp_state), CurState: QPState(a.cur_qp_state), PathMTU: MTU(a.path_mtu),
		QKey: uint32(a.qkey), RQPSN: uint32(a.rq_psn), SQPSN: uint32(a.sq_psn), DestQPN: uint32(a.dest_qp_num),
		Access: Access(a.qp_access_flags), PKeyIndex: int(a.pkey_index), Port: int(a.port_num),
		SQDraining: a.sq_draining != 0, MaxRdAtomic: uint8(a.max_rd_atomic), MaxDestRdAtomic: uint8(a.max_dest_rd_atomic),
		MinRNRTimer: uint8(a.min_rnr_timer), Timeout: uint8(a.timeout), RetryCnt: uint8(a.retry_cnt), RNRRetry: uint8(a.rnr_retry),
		DLID: uint16(a.ah_attr.dlid), SL: uint8(a.ah_attr.sl), SignalAll: init.sq_sig_all != 0,
		Caps: QPCaps{MaxSendWR: int(init.cap.max_send_wr), MaxRecvWR: int(init.cap.max_recv_wr), MaxSendSGE: int(init.cap.max_send_sge),
			MaxRecvSGE: int(init.cap.max_recv_sge), MaxInlineData: int(init.cap.max_inline_data)}}
	if a.ah_attr.is_global != 0 {
		g := &a.ah_attr.grh
		q.GRH = &GRH{SGIDIndex: int(g.sgid_index), HopLimit: uint8(g.hop_limit), TrafficClass: uint8(g.traffic_class), FlowLabel: uint32(g.flow_label)}
		copy(q.GRH.DGID[:], C.GoBytes(unsafe.Pointer(&g.dgid), 16))
	}
	return q, nil
}

func (d *cDriver) cqEntries(cq handle) int { return int(cq.(*cCQ).cq.cqe) }

func (d *cDriver) resizeCQ(cq handle, cqe int) error {
	if rc, err := C.ibtv_resize_cq(cq.(*cCQ).cq, C.int(cqe)); rc != 0 {
		return rcErr(rc, err)
	}
	return nil
}

func (d *cDriver) destroyQP(qp handle) error {
	h := qp.(*cQP)
	if rc, err := C.ibtv_destroy_qp(h.qp); rc != 0 {
		return rcErr(rc, err)
	}
	for _, p := range []unsafe.Pointer{unsafe.Pointer(h.swr), unsafe.Pointer(h.rwr), unsafe.Pointer(h.sends), unsafe.Pointer(h.recvs), unsafe.Pointer(h.sges),
		unsafe.Pointer(unsafe.SliceData(h.spool)), unsafe.Pointer(unsafe.SliceData(h.rpool))} {
		C.free(p)
	}
	return nil
}

func (d *cDriver) createSRQ(pd handle, maxWR, maxSGE int) (handle, error) {
	srq, err := C.ibt_create_srq(pd.(*C.struct_ibv_pd), C.int(maxWR), C.int(maxSGE))
	if srq == nil {
		return nil, errnoOr(err, C.int(syscall.EINVAL))
	}
	return &cSRQ{srq: srq,
		rwr:   (*C.struct_ibt_rwr)(C.calloc(maxPostBatch, C.sizeof_struct_ibt_rwr)),
		recvs: (*C.struct_ibv_recv_wr)(C.calloc(maxPostBatch, C.sizeof_struct_ibv_recv_wr)),
		sges:  (*C.struct_ibv_sge)(C.calloc(maxPostBatch, C.sizeof_struct_ibv_sge)),
		rpool: sgePool(maxSGE)}, nil
}

func (d *cDriver) openXRCD(ctx handle, fd int) (handle, error) {
	x, err := C.ibt_open_xrcd(ctx.(*C.struct_ibv_context), C.int(fd))
	if x == nil {
		return nil, errnoOr(err, C.int(syscall.EOPNOTSUPP))
	}
	return x, nil
}

func (d *cDriver) closeXRCD(xrcd handle) error {
	if rc, err := C.ibt_close_xrcd(xrcd.(*C.struct_ibv_xrcd)); rc != 0 {
		return rcErr(rc, err)
	}
	return nil
}

func (d *cDriver) createXRCSRQ(pd, xrcd, cq handle, maxWR, maxSGE int) (handle, uint32, error) {
	var num C.uint32_t
	srq, err := C.ibt_create_xrc_srq(pd.(*C.struct_ibv_pd), xrcd.(*C.struct_ibv_xrcd), cq.(*cCQ).cq, C.int(maxWR), C.int(maxSGE), &num)
	if srq == nil {
		return nil, 0, errnoOr(err, C.int(syscall.EOPNOTSUPP))
	}
	return &cSRQ{srq: srq,
		rwr:   (*C.struct_ibt_rwr)(C.calloc(maxPostBatch, C.sizeof_struct_ibt_rwr)),
		recvs: (*C.struct_ibv_recv_wr)(C.calloc(maxPostBatch, C.sizeof_struct_ibv_recv_wr)),
		sges:  (*C.struct_ibv_sge)(C.calloc(maxPostBatch, C.sizeof_struct_ibv_sge)),
		rpool: sgePool(maxSGE)}, uint32(num), nil
}

func (d *cDriver) destroySRQ(srq handle) error {
	h := srq.(*cSRQ)
	if rc, err := C.ibtv_destroy_srq(h.srq); rc != 0 {
		return rcErr(rc, err)
	}
	C.free(unsafe.Pointer(h.rwr))
	C.free(unsafe.Pointer(h.recvs))
	C.free(unsafe.Pointer(h.sges))
	C.free(unsafe.Pointer(unsafe.SliceData(h.rpool)))
	return nil
}

func (d *cDriver) postSRQRecv(srq handle, wrs []recvWork) error {
	h := srq.(*cSRQ)
	in := unsafe.Slice(h.rwr, len(wrs))
	at := 0
	for i, w := range wrs {
		in[i] = rwrToC(w, h.rpool, &at)
	}
	if rc := C.ibt_post_srq_recv(h.srq, h.rwr, C.int(len(wrs)), h.recvs, h.sges); rc != 0 {
		return rcErr(rc, nil)
	}
	return nil
}

func (d *cDriver) createAH(pd handle, a AHAttr) (handle, error) {
	var dgid [16]byte
	global := C.int(0)
	var sgid, hop, tclass C.int
	var flow C.uint32_t
	if a.GRH != nil {
		global, dgid = 1, a.GRH.DGID
		sgid, hop, tclass, flow = C.int(a.GRH.SGIDIndex), C.int(a.GRH.HopLimit), C.int(a.GRH.TrafficClass), C.uint32_t(a.GRH.FlowLabel)
	}
	ah, err := C.ibt_create_ah(pd.(*C.struct_ibv_pd), C.int(a.Port), C.int(a.DLID), C.int(a.SL), global,
		(*C.uint8_t)(unsafe.Pointer(&dgid[0])), sgid, hop, tclass, flow)
	if ah == nil {
		return nil, errnoOr(err, C.int(syscall.EINVAL))
	}
	return ah, nil
}

func (d *cDriver) allocMW(pd handle, typ MWType) (handle, uint32, error) {
	mw, err := C.ibt_alloc_mw(pd.(*C.struct_ibv_pd), C.int(typ))
	if mw == nil {
		return nil, 0, errnoOr(err, C.int(syscall.EOPNOTSUPP))
	}
	return mw, uint32(mw.rkey), nil
}

func (d *cDriver) deallocMW(mw handle) error {
	if rc, err := C.ibt_dealloc_mw(mw.(*C.struct_ibv_mw)); rc != 0 {
		return rcErr(rc, err)
	}
	return nil
}

func (d *cDriver) bindMW(qp, mw handle, id uint64, flags sendFlags, b mwBindWork) (uint32, error) {
	m := mw.(*C.struct_ibv_mw)
	var mr *C.struct_ibv_mr
	if b.mr != nil {
		mr = b.mr.(*cMR).mr
	}
	if rc, err := C.ibt_bind_mw(qp.(*cQP).qp, m, C.uint64_t(id), C.int(flags), mr, C.uint64_t(b.addr), C.uint64_t(b.length), C.int(b.access)); rc != 0 {
		return 0, rcErr(rc, err)
	}
	return uint32(m.rkey), nil
}

func (d *cDriver) destroyAH(ah handle) error {
	if rc, err := C.ibtv_destroy_ah(ah.(*C.struct_ibv_ah)); rc != 0 {
		return rcErr(rc, err)
	}
	return nil
}

func (d *cDriver) attachMcast(qp handle, gid [16]byte, lid uint16) error {
	if rc, err := C.ibtv_attach_mcast(qp.(*cQP).qp, (*C.uint8_t)(unsafe.Pointer(&gid[0])), C.uint16_t(lid)); rc != 0 {
		return rcErr(rc, err)
	}
	return nil
}

func (d *cDriver) detachMcast(qp handle, gid [16]byte, lid uint16) error {
	if rc, err := C.ibtv_detach_mcast(qp.(*cQP).qp, (*C.uint8_t)(unsafe.Pointer(&gid[0])), C.uint16_t(lid)); rc != 0 {
		return rcErr(rc, err)
	}
	return nil
}

func (d *cDriver) postSend(qp handle, wrs []sendWork) error {
	h := qp.(*cQP)
	in := unsafe.Slice(h.swr, len(wrs))
	at := 0
	for i, w := range wrs {
		in[i] = swrToC(w)
		in[i].sgl, in[i].nsge = fillSGL(h.spool, &at, w.sgl)
	}
	if h.qpx != nil {
		if rc := C.ibt_post_send_ex(h.qpx, h.swr, C.int(len(wrs))); rc != 0 {
			return rcErr(rc, nil)
		}
		return nil
	}
	if rc := C.ibt_post_send(h.qp, h.swr, C.int(len(wrs)), h.sends, h.sges); rc != 0 {
		return rcErr(rc, nil)
	}
	return nil
}

// swrToC is a checked send work request as the C helpers take it.
func swrToC(w sendWork) C.struct_ibt_swr {
	s := C.struct_ibt_swr{wr_id: C.uint64_t(w.id), addr: C.uint64_t(w.addr), raddr: C.uint64_t(w.raddr),
		length: C.uint32_t(w.length), lkey: C.uint32_t(w.lkey), rkey: C.uint32_t(w.rkey), imm: C.uint32_t(w.imm),
		opcode: C.int(w.op), flags: C.int(w.flags), rqpn: C.uint32_t(w.rqpn), rqkey: C.uint32_t(w.rqkey), srqn: C.uint32_t(w.srqn),
		compare_add: C.uint64_t(w.compareAdd), swap: C.uint64_t(w.swap), inv_rkey: C.uint32_t(w.invRKey)}
	if w.mw != nil {
		s.mw, s.bind_rkey, s.bind_access = w.mw.(*C.struct_ibv_mw), C.uint32_t(w.bindRKey), C.int(w.bind.access)
		s.bind_addr, s.bind_length = C.uint64_t(w.bind.addr), C.uint64_t(w.bind.length)
		if w.bind.mr != nil {
			s.bind_mr = w.bind.mr.(*cMR).mr
		}
	}
	if w.ah != nil {
		s.ah = w.ah.(*C.struct_ibv_ah)
	}
	return s
}

func (d *cDriver) postRecv(qp handle, wrs []recvWork) error {
	h := qp.(*cQP)
	in := unsafe.Slice(h.rwr, len(wrs))
	at := 0
	for i, w := range wrs {
		in[i] = rwrToC(w, h.rpool, &at)
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
	if len(r.sges) > 1 {
		s.sges = (*C.struct_ibv_sge)(C.calloc(C.size_t(len(r.sges)), C.sizeof_struct_ibv_sge))
		if s.sges == nil {
			r.failed = "calloc"
			return syscall.ENOMEM
		}
		defer C.free(unsafe.Pointer(s.sges))
		sges := unsafe.Slice(s.sges, len(r.sges))
		for i, e := range r.sges {
			sges[i] = C.struct_ibv_sge{addr: C.uint64_t(e.addr), length: C.uint32_t(e.length), lkey: C.uint32_t(r.wr.lkey)}
		}
		s.nsge = C.int(len(r.sges))
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
