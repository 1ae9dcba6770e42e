package verbs

import "fmt"

// SRQ is a shared receive queue (struct ibv_srq): the receives of every
// QP made with it in QPConfig.SRQ.
type SRQ struct {
	pd     *PD
	h      handle
	id     int
	qps    int // QPs that use it
	closed bool
	recvs  []recvWork
	maxSGE int    // what each receive may have
	num    uint32 // an XRC SRQ's number
	xrcd   *XRCD
	cq     *CQ
}

// CreateSRQ makes a shared receive queue of maxWR receives of maxSGE
// entries each; more than the device takes (its max_srq_sge) is an error
// wrapping ErrTooManySGEs.
func (pd *PD) CreateSRQ(maxWR, maxSGE int) (*SRQ, error) {
	pd.use("CreateSRQ")
	a, err := pd.ctx.QueryDevice()
	if err != nil {
		return nil, err
	}
	if maxSGE > a.MaxSRQSGE {
		return nil, verbError("ibv_create_srq", pd.String(), tooManySGEs(maxSGE, pd.ctx.name+" (max_srq_sge)", a.MaxSRQSGE))
	}
	h, err := drv.createSRQ(pd.h, maxWR, maxSGE)
	if err != nil {
		return nil, verbError("ibv_create_srq", fmt.Sprintf("%s (%d WRs)", pd, maxWR), err)
	}
	pd.children++
	return &SRQ{pd: pd, h: h, id: pd.ctx.adopt(), maxSGE: maxSGE}, nil
}

// CreateXRCSRQ makes an XRC SRQ in xrcd whose receives complete on cq:
// the peer's XRC_SEND QPs send to it by its Num, through any XRC_RECV QP
// of the domain.
func (pd *PD) CreateXRCSRQ(xrcd *XRCD, cq *CQ, maxWR, maxSGE int) (*SRQ, error) {
	pd.use("CreateXRCSRQ")
	xrcd.use("CreateXRCSRQ")
	cq.use("CreateXRCSRQ")
	h, num, err := drv.createXRCSRQ(pd.h, xrcd.h, cq.h, maxWR, maxSGE)
	if err != nil {
		return nil, verbError("ibv_create_srq_ex", fmt.Sprintf("%s (XRC, %d WRs)", pd, maxWR), err)
	}
	pd.children++
	xrcd.qps++
	cq.qps++
	return &SRQ{pd: pd, h: h, id: pd.ctx.adopt(), maxSGE: maxSGE, num: num, xrcd: xrcd, cq: cq}, nil
}

// Num is an XRC SRQ's number, which the peer's sends name (0 for an SRQ
// that is not XRC).
func (s *SRQ) Num() uint32 { return s.num }

// String names the SRQ in messages.
func (s *SRQ) String() string { return fmt.Sprintf("%s SRQ %d", s.pd.ctx.name, s.id) }

func (s *SRQ) use(what string) {
	if s.closed {
		panic(fmt.Sprintf("verbs: %s on destroyed %s", what, s))
	}
}

// PostRecv queues receive work requests; naming memory outside the MR,
// or an MR of another PD, panics. A full queue is an error wrapping
// ENOMEM, more SGEs than the SRQ was made with one wrapping
// ErrTooManySGEs.
func (s *SRQ) PostRecv(wrs ...RecvWR) error {
	s.use("PostRecv")
	for len(wrs) > 0 {
		n := min(len(wrs), maxPostBatch)
		recvs, err := checkRecvs(s.recvs[:0], "PostRecv", s, s.String(), s.pd, s.maxSGE, wrs[:n])
		s.recvs = recvs
		if len(recvs) > 0 {
			if err := drv.postSRQRecv(s.h, recvs); err != nil {
				return verbError("ibv_post_srq_recv", s.String(), err)
			}
		}
		if err != nil {
			return verbError("ibv_post_srq_recv", s.String(), err)
		}
		wrs = wrs[n:]
	}
	return nil
}

// Close destroys the SRQ. Closing it again does nothing and returns nil;
// closing it while a QP uses it panics.
func (s *SRQ) Close() error {
	if s.closed {
		return nil
	}
	if s.qps > 0 {
		panic(fmt.Sprintf("verbs: Close of %s with %d QPs still using it", s, s.qps))
	}
	if err := drv.destroySRQ(s.h); err != nil {
		return verbError("ibv_destroy_srq", s.String(), err)
	}
	s.closed = true
	s.pd.children--
	if s.xrcd != nil {
		s.xrcd.qps--
		s.cq.qps--
	}
	s.pd.ctx.release()
	return nil
}
