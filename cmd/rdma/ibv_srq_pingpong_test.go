package rdma

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ibtool/ibtool/pkg/verbs"
)

func TestIbvSrqPingpongArgs(t *testing.T) {
	def := srqOptions{ppOptions: rcWant, NumQP: 16}
	with := func(f func(o *srqOptions)) srqOptions { o := def; f(&o); return o }
	tests := []argsCase[srqOptions]{
		{"client defaults: 16 QPs", []string{"h"}, def, ""},
		{"every option", []string{"-p", "7000", "-d", "rxe0", "-i", "2", "-s", "64", "-m", "2048", "--num-qp", "4", "-r", "8", "-n", "5",
			"-l", "3", "-e", "-o", "-g", "1", "-c", "h"},
			with(func(o *srqOptions) {
				o.TCPPort, o.Device, o.IBPort, o.Size, o.MTU, o.NumQP, o.RxDepth, o.Iters, o.SL = 7000, "rxe0", 2, 64, 4, 4, 8, 5, 3
				o.Events, o.ODP, o.GIDIndex, o.Check = true, true, 1, true
			}), ""},
		{"fewer receives than QPs", []string{"-q", "8", "-r", "4"}, srqOptions{}, "rx_depth 4 is too small for 8 QPs -- must have at least one receive per QP"},
		{"MAX_QP", []string{"-q", "256", "-r", "500"}, srqOptions{}, "num_qp 256 must be less than 255"},
		{"no QPs", []string{"-q", "0"}, srqOptions{}, "invalid -q number of QPs 0"},
		{"no -t", []string{"-t"}, srqOptions{}, "unknown shorthand flag: 't'"},
	}
	testArgs(t, "ibv_srq_pingpong", newIbvSrqPingpongCmd, tests, append(ppCmpOpts, cmpopts.IgnoreUnexported(srqOptions{}))...)
}

// fakeSRQ is srqQueue for numQP QPs whose peer answers each send at
// once on the same QP.
type fakeSRQ struct {
	cq     []verbs.WorkCompletion
	sends  []int // per QP
	posted []int
}

func (q *fakeSRQ) postRecv(n int) (int, error) { q.posted = append(q.posted, n); return n, nil }

func (q *fakeSRQ) postSend(i int) error {
	q.sends[i]++
	qpn := uint32(0x100 + i)
	q.cq = append(q.cq, verbs.WorkCompletion{ID: ppSendWRID, QPNum: qpn}, verbs.WorkCompletion{ID: ppRecvWRID, QPNum: qpn})
	return nil
}

func (q *fakeSRQ) poll(wc []verbs.WorkCompletion) (int, error) {
	n := copy(wc, q.cq)
	q.cq = q.cq[n:]
	return n, nil
}

func (q *fakeSRQ) wait() error { return nil }

func (q *fakeSRQ) qpIndex(qpn uint32) int {
	if i := int(qpn) - 0x100; i >= 0 && i < len(q.sends) {
		return i
	}
	return -1
}

func TestSrqLoop(t *testing.T) {
	q := &fakeSRQ{sends: make([]int, 4)}
	// 10 exchanges in all over 4 QPs, 6 receives: every QP starts with
	// a send, and the SRQ is topped up when 4 or fewer receives are left.
	if _, err := srqLoop(context.Background(), q, 4, 10, 6, true, false, 6); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range q.sends {
		total += n
		if n == 0 {
			t.Errorf("a QP sent nothing: %v", q.sends)
		}
	}
	if total < 10 {
		t.Errorf("%d sends in all, want at least 10", total)
	}
	if len(q.posted) == 0 {
		t.Error("the SRQ was never topped up")
	}
	bad := &fakeSRQ{sends: make([]int, 1), cq: []verbs.WorkCompletion{{ID: ppRecvWRID, QPNum: 0x999}}}
	if _, err := srqLoop(context.Background(), bad, 1, 1, 2, false, false, 2); err == nil || !strings.Contains(err.Error(), "couldn't find QPN 000999") {
		t.Errorf("completion of an unknown QP: error %v", err)
	}
}
