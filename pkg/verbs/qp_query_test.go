package verbs

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestQuery: Query returns the driver's attributes, and its failure is
// a VerbError naming ibv_query_qp and the QP.
func TestQuery(t *testing.T) {
	r := newRig(t)
	r.f.qpAttr = QPAttr{State: QPStateErr, QKey: 0x123, Caps: QPCaps{MaxSendWR: 9}, GRH: &GRH{HopLimit: 1}}
	a, err := r.qp.Query()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r.f.qpAttr, a); diff != "" {
		t.Errorf("unexpected attributes (-want +got):\n%s", diff)
	}
	if r.qp.State() != QPStateReset {
		t.Errorf("Query moved the QP's own state to %s", r.qp.State())
	}
	r.f.fail["queryQP"] = syscall.EIO
	_, err = r.qp.Query()
	if diff := cmp.Diff("rxe0 QP 0x11: ibv_query_qp: input/output error", errString(err)); diff != "" {
		t.Errorf("unexpected error (-want +got):\n%s", diff)
	}
}

// TestSetStateReset: RESET takes nothing but the state, after which the
// QP can be moved to INIT again; a refused move keeps the state.
func TestSetStateReset(t *testing.T) {
	r := newRig(t)
	r.connect()
	if err := r.qp.SetState(QPStateReset); err != nil {
		t.Fatal(err)
	}
	if got := r.f.modify[len(r.f.modify)-1]; got.to != QPStateReset || got.typ != QPTypeRC {
		t.Errorf("modify %+v, want a move to RESET", got)
	}
	check(r.qp.Init(InitAttr{Port: 1}))
	r.f.fail["modifyQP"] = syscall.EINVAL
	err := r.qp.SetState(QPStateSQD)
	if !errors.Is(err, syscall.EINVAL) || r.qp.State() != QPStateInit {
		t.Errorf("refused move: error %v, state %s; want EINVAL and INIT", err, r.qp.State())
	}
	wantPanic(t, "verbs: SetState of rxe0 QP 0x11 to RTS: want ERR, SQD or RESET", func(r *rig) { _ = r.qp.SetState(QPStateRTS) })
}

// TestResizeCQ: Resize passes the size on and Entries reads what the
// provider made; a failure names the CQ and the size.
func TestResizeCQ(t *testing.T) {
	r := newRig(t)
	if err := r.cq.Resize(7); err != nil {
		t.Fatal(err)
	}
	if got := r.cq.Entries(); got != 8 {
		t.Errorf("Entries %d after resizing to 7, want the fake's 8", got)
	}
	r.f.fail["resizeCQ"] = syscall.EOPNOTSUPP
	err := r.cq.Resize(3)
	if diff := cmp.Diff("rxe0 CQ 3 (to 3 entries): ibv_resize_cq: operation not supported", errString(err)); diff != "" {
		t.Errorf("unexpected error (-want +got):\n%s", diff)
	}
	wantPanic(t, "verbs: Resize of rxe0 CQ 3 to 0 entries: want at least one", func(r *rig) { _ = r.cq.Resize(0) })
}
