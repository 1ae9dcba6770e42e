package verbs

import "fmt"

// QPAttr is a QP's attributes as the device keeps them (struct
// ibv_qp_attr, and from struct ibv_qp_init_attr the queue sizes and
// whether every send is signalled), what QP.Query reads.
type QPAttr struct {
	State, CurState QPState
	PathMTU         MTU
	QKey            uint32 // UD
	RQPSN, SQPSN    uint32
	DestQPN         uint32
	Access          Access
	Caps            QPCaps
	PKeyIndex       int
	Port            int
	SQDraining      bool
	MaxRdAtomic     uint8
	MaxDestRdAtomic uint8
	MinRNRTimer     uint8
	Timeout         uint8
	RetryCnt        uint8
	RNRRetry        uint8
	// The address vector of a connected QP: the peer's LID and SL, and
	// its global route (nil without one).
	DLID      uint16
	SL        uint8
	GRH       *GRH
	SignalAll bool
}

// Query reads the QP's attributes from the device (ibv_query_qp). Its
// state there may differ from State(), which is the state the QP was last
// moved to: a device moves a QP to ERR when a work request fails.
func (qp *QP) Query() (QPAttr, error) {
	qp.use("Query")
	a, err := drv.queryQP(qp.h)
	if err != nil {
		return QPAttr{}, verbError("ibv_query_qp", qp.String(), err)
	}
	return a, nil
}

// Entries is how many completions the CQ holds: at least what CreateCQ
// or Resize asked for, as the provider rounded it.
func (cq *CQ) Entries() int {
	cq.use("Entries")
	return drv.cqEntries(cq.h)
}

// Resize asks the provider to make the CQ hold at least cqe completions
// (ibv_resize_cq). A provider that cannot is an error wrapping
// EOPNOTSUPP; one holding more completions than cqe, one wrapping
// EINVAL. A cqe below 1 panics.
func (cq *CQ) Resize(cqe int) error {
	cq.use("Resize")
	if cqe <= 0 {
		panic(fmt.Sprintf("verbs: Resize of %s to %d entries: want at least one", cq, cqe))
	}
	if err := drv.resizeCQ(cq.h, cqe); err != nil {
		return verbError("ibv_resize_cq", fmt.Sprintf("%s (to %d entries)", cq, cqe), err)
	}
	return nil
}
