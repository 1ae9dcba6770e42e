package verbs

import "fmt"

// Reinit modifies a QP in INIT again (INIT to INIT) with new
// attributes: the RDMA connection manager gives a connecting QP its
// access flags this way once the peer's answer says what it may do.
func (qp *QP) Reinit(a InitAttr) error {
	if err := qp.move(QPStateInit, qpModify{to: QPStateInit, init: a}); err != nil {
		return err
	}
	qp.port = a.Port
	return nil
}

// SetState moves the QP to ERR (flushing its work requests), SQD
// (draining its send queue: how an iWARP connection closes) or RESET
// (emptying its queues, ready for Init again), setting nothing but the
// state. The device refuses what the IBA's state diagram does not allow
// (SQD from RESET, ...): an error wrapping EINVAL. Other target states
// panic: they take attributes (Init, ReadyToReceive, ReadyToSend).
func (qp *QP) SetState(to QPState) error {
	qp.use("SetState")
	if to != QPStateErr && to != QPStateSQD && to != QPStateReset {
		panic(fmt.Sprintf("verbs: SetState of %s to %s: want ERR, SQD or RESET", qp, to))
	}
	object := fmt.Sprintf("%s %s->%s", qp, qp.state, to)
	if err := drv.modifyQP(qp.h, qpModify{typ: qp.cfg.Type, to: to}); err != nil {
		return verbError("ibv_modify_qp", object, err)
	}
	qp.state = to
	return nil
}

// Moved records a transition the kernel made on the QP's behalf: an
// iWARP device moves a QP to RTS itself when its connection manager
// establishes the connection (the QP was moved to INIT by the caller).
// Moving it to RTS from a state other than INIT, RTR or RTS panics.
func (qp *QP) Moved(to QPState) {
	qp.use("Moved")
	if to != QPStateRTS || qp.state < QPStateInit || qp.state > QPStateRTS {
		panic(fmt.Sprintf("verbs: Moved of %s from %s to %s: the kernel moves a connected QP from INIT to RTS", qp, qp.state, to))
	}
	qp.state = to
}
