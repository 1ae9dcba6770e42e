package rdmacm

import "github.com/ibtool/ibtool/pkg/verbs"

// QPAttrMask says which fields of a QPAttr the kernel set (IBV_QP_*).
type QPAttrMask uint32

// QP attribute mask bits.
const (
	QPAttrState           QPAttrMask = 1 << 0
	QPAttrAccessFlags     QPAttrMask = 1 << 3
	QPAttrPKeyIndex       QPAttrMask = 1 << 4
	QPAttrPort            QPAttrMask = 1 << 5
	QPAttrQKey            QPAttrMask = 1 << 6
	QPAttrAV              QPAttrMask = 1 << 7
	QPAttrPathMTU         QPAttrMask = 1 << 8
	QPAttrTimeout         QPAttrMask = 1 << 9
	QPAttrRetryCnt        QPAttrMask = 1 << 10
	QPAttrRNRRetry        QPAttrMask = 1 << 11
	QPAttrRQPSN           QPAttrMask = 1 << 12
	QPAttrMaxQPRdAtomic   QPAttrMask = 1 << 13
	QPAttrMinRNRTimer     QPAttrMask = 1 << 15
	QPAttrSQPSN           QPAttrMask = 1 << 16
	QPAttrMaxDestRdAtomic QPAttrMask = 1 << 17
	QPAttrDestQPN         QPAttrMask = 1 << 20
)

// QPAttr is what the CM says a QP of an ID needs for a state (struct
// ib_uverbs_qp_attr from RDMA_USER_CM_CMD_INIT_QP_ATTR).
type QPAttr struct {
	Mask            QPAttrMask
	State           verbs.QPState
	PathMTU         verbs.MTU
	QKey            uint32
	RQPSN, SQPSN    uint32
	DestQPN         uint32
	Access          verbs.Access
	AH              AHAttr
	PKeyIndex       uint16
	MaxRdAtomic     uint8
	MaxDestRdAtomic uint8
	MinRNRTimer     uint8
	Port            uint8
	Timeout         uint8
	RetryCnt        uint8
	RNRRetry        uint8
}

func decodeQPAttr(b []byte) QPAttr {
	return QPAttr{Mask: QPAttrMask(le.Uint32(b[0:])), State: verbs.QPState(le.Uint32(b[4:])),
		PathMTU: verbs.MTU(le.Uint32(b[12:])), QKey: le.Uint32(b[20:]), RQPSN: le.Uint32(b[24:]),
		SQPSN: le.Uint32(b[28:]), DestQPN: le.Uint32(b[32:]), Access: verbs.Access(le.Uint32(b[36:])),
		AH: ahAttr(b[40:72]), PKeyIndex: le.Uint16(b[124:]), MaxRdAtomic: b[130], MaxDestRdAtomic: b[131],
		MinRNRTimer: b[132], Port: b[133], Timeout: b[134], RetryCnt: b[135], RNRRetry: b[136]}
}

// InitAttr is the attributes as pkg/verbs' move to INIT takes them.
func (a QPAttr) InitAttr() verbs.InitAttr {
	return verbs.InitAttr{Port: int(a.Port), PKeyIndex: int(a.PKeyIndex), Access: a.Access, QKey: a.QKey}
}

// RTRAttr is the attributes as pkg/verbs' move to RTR takes them.
func (a QPAttr) RTRAttr() verbs.RTRAttr {
	r := verbs.RTRAttr{PathMTU: a.PathMTU, DestQPN: a.DestQPN, RQPSN: a.RQPSN, DLID: a.AH.DLID, SL: a.AH.SL,
		MaxDestRdAtomic: a.MaxDestRdAtomic, MinRNRTimer: a.MinRNRTimer}
	if a.AH.IsGlobal {
		r.GRH = &verbs.GRH{DGID: a.AH.DGID, SGIDIndex: int(a.AH.SGIDIndex), HopLimit: a.AH.HopLimit,
			TrafficClass: a.AH.TrafficClass, FlowLabel: a.AH.FlowLabel}
	}
	return r
}

// RTSAttr is the attributes as pkg/verbs' move to RTS takes them.
func (a QPAttr) RTSAttr() verbs.RTSAttr {
	return verbs.RTSAttr{SQPSN: a.SQPSN, Timeout: a.Timeout, RetryCnt: a.RetryCnt, RNRRetry: a.RNRRetry, MaxRdAtomic: a.MaxRdAtomic}
}

// InitQPAttr asks the kernel what a QP of the ID needs to go to state
// (INIT, RTR or RTS), as librdmacm's rdma_init_qp_attr does.
func (id *ID) InitQPAttr(state verbs.QPState) (QPAttr, error) {
	in := make([]byte, initQPAttrSize)
	le.PutUint32(in[8:], id.handle)
	le.PutUint32(in[12:], uint32(state))
	out := make([]byte, qpAttrResp)
	if err := id.command("init QP attributes for "+state.String(), id.addr.Remote, cmdInitQPAttr, in, 0, out); err != nil {
		return QPAttr{}, err
	}
	return decodeQPAttr(out), nil
}
