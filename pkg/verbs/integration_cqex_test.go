//go:build cgo && !noverbs

package verbs

import (
	"errors"
	"syscall"
	"testing"
)

// The extended CQ tests are rdma-core's tests/test_cqex.py: making CQs
// with each completion field (CQEXAPITest), refusing sizes past the
// device's, and RC traffic polled the extended way.

// TestIntegrationCreateCQEx is test_create_cq_ex: no fields, and each
// field alone, make a CQ or are refused with EOPNOTSUPP (on a device
// without extended CQs, siw, all are, and the test passes as pyverbs'
// does).
func TestIntegrationCreateCQEx(t *testing.T) {
	ctx := integrationContext(t)
	flags := []WCFlags{0, WCWithByteLen, WCWithImm, WCWithQPNum, WCWithSrcQP, WCWithSLID, WCWithSL,
		WCWithDLIDPathBits, WCWithCompletionTimestamp, WCStandardFlags}
	for _, f := range flags {
		cq, err := ctx.CreateCQEx(10, nil, f)
		if errors.Is(err, syscall.EOPNOTSUPP) {
			t.Logf("flags %#x: not supported", uint64(f))
			continue
		}
		if err != nil {
			t.Errorf("flags %#x: %v", uint64(f), err)
			continue
		}
		if cq.Entries() < 10 {
			t.Errorf("flags %#x: the CQ holds %d, want at least 10", uint64(f), cq.Entries())
		}
		closeOrFail(t, cq.Close)
	}
}

// TestIntegrationCreateCQExBadFlow is test_create_cq_ex_bad_flow's size
// check: more entries than the device's max_cqe is refused.
func TestIntegrationCreateCQExBadFlow(t *testing.T) {
	ctx := integrationContext(t)
	a, err := ctx.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	cq, err := ctx.CreateCQEx(a.MaxCQE+1, nil, 0)
	if errors.Is(err, syscall.EOPNOTSUPP) {
		t.Skipf("%s has no extended CQs: %v", ctx.Name(), err)
	}
	if err == nil {
		closeOrFail(t, cq.Close)
		t.Fatalf("a CQ of %d entries (max_cqe %d) was made", a.MaxCQE+1, a.MaxCQE)
	}
}

// TestIntegrationRCTrafficCQEx is test_rc_traffic_cq_ex: SENDs with
// immediate data both ways over RC QPs on extended CQs; the receive
// completions carry the length, the immediate data and the QP, and a
// timestamp where the device has a completion clock.
func TestIntegrationRCTrafficCQEx(t *testing.T) {
	ctx := integrationContext(t)
	a, err := ctx.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	flags := WCStandardFlags
	if a.CompletionTimestampMask != 0 {
		flags |= WCWithCompletionTimestamp
	}
	probe, err := ctx.CreateCQEx(1, nil, flags)
	if errors.Is(err, syscall.EOPNOTSUPP) {
		t.Skipf("%s: no extended CQs with flags %#x: %v", ctx.Name(), uint64(flags), err)
	} else if err != nil {
		t.Fatal(err)
	}
	closeOrFail(t, probe.Close)
	client, server := rcLoop(t, ctx, loopConfig{mrSize: 1024, mrAccess: AccessLocalWrite, cqEx: true, wcFlags: flags})
	for i := range 10 {
		for _, p := range [][2]*loopSide{{client, server}, {server, client}} {
			from, to := p[0], p[1]
			if err := to.qp.PostRecv(RecvWR{ID: uint64(i), MR: to.mr, Length: 1024}); err != nil {
				t.Fatal(err)
			}
			err := from.qp.PostSend(SendWR{ID: uint64(i), Op: OpSendImm, MR: from.mr, Length: 100 + i, Imm: 0xabc0 + uint32(i), Signaled: true})
			if err != nil {
				t.Fatal(err)
			}
			if wc, err := from.next(t); err != nil || wc.Opcode != WCSend || wc.ID != uint64(i) {
				t.Fatalf("send completion %+v, error %v", wc, err)
			}
			wc, err := to.next(t)
			if err != nil {
				t.Fatal(err)
			}
			want := WorkCompletion{ID: uint64(i), Opcode: WCRecv, ByteLen: uint32(100 + i), Imm: 0xabc0 + uint32(i), HasImm: true,
				QPNum: to.qp.Num(), SrcQP: wc.SrcQP, Timestamp: wc.Timestamp, HasTimestamp: flags&WCWithCompletionTimestamp != 0}
			if wc != want {
				t.Errorf("receive completion %+v, want %+v", wc, want)
			}
			if want.HasTimestamp && wc.Timestamp == 0 {
				t.Errorf("receive completion without a timestamp")
			}
		}
	}
}
