package verbs

import (
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestQPMovesForTheCM: the transitions the connection manager needs: INIT
// again with new access flags, ERR and SQD with the state alone, and RTS
// recorded when the kernel made it (iWARP).
func TestQPMovesForTheCM(t *testing.T) {
	r := newRig(t)
	check(r.qp.Init(InitAttr{Port: 1}))
	check(r.qp.Reinit(InitAttr{Port: 1, Access: AccessRemoteRead | AccessRemoteWrite}))
	r.qp.Moved(QPStateRTS)
	if r.qp.State() != QPStateRTS {
		t.Fatalf("state %s after Moved(RTS)", r.qp.State())
	}
	check(r.qp.SetState(QPStateSQD))
	check(r.qp.SetState(QPStateErr))
	var got []QPState
	for _, m := range r.f.modify {
		got = append(got, m.to)
	}
	if diff := cmp.Diff([]QPState{QPStateInit, QPStateInit, QPStateSQD, QPStateErr}, got); diff != "" {
		t.Errorf("unexpected transitions (-want +got):\n%s", diff)
	}
	if a := r.f.modify[1].init.Access; a != AccessRemoteRead|AccessRemoteWrite {
		t.Errorf("Reinit set access %#x", a)
	}
	if r.qp.State() != QPStateErr {
		t.Errorf("state %s, want ERR", r.qp.State())
	}
}

func TestQPSetStateError(t *testing.T) {
	r := newRig(t)
	r.f.fail["modifyQP"] = syscall.EINVAL
	err := r.qp.SetState(QPStateErr)
	if err == nil || !strings.Contains(err.Error(), "RESET->ERR: ibv_modify_qp") {
		t.Errorf("got %v", err)
	}
	if r.qp.State() != QPStateReset {
		t.Errorf("state %s after a failed move", r.qp.State())
	}
}

func TestQPMovesMisuse(t *testing.T) {
	for name, f := range map[string]func(*QP){
		"SetState to RTS":     func(qp *QP) { qp.SetState(QPStateRTS) },
		"Moved out of RESET":  func(qp *QP) { qp.Moved(QPStateRTS) },
		"Moved to RTR":        func(qp *QP) { check(qp.Init(InitAttr{Port: 1})); qp.Moved(QPStateRTR) },
		"Reinit out of RESET": func(qp *QP) { qp.Reinit(InitAttr{Port: 1}) },
	} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f(r.qp)
		})
	}
}
