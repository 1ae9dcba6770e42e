//go:build cgo && !noverbs

package verbs

import (
	"errors"
	"math/rand/v2"
	"syscall"
	"testing"
)

// skipUnsupported skips the test, as pyverbs does, when err says the
// device does not do what was asked (EOPNOTSUPP); what names it in
// pyverbs' words.
func skipUnsupported(t *testing.T, err error, what string) {
	t.Helper()
	if errors.Is(err, syscall.EOPNOTSUPP) {
		t.Skipf("%s is not supported", what)
	}
}

// ok fails the test at once on err.
func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationPD is pyverbs' PDTest: a PD allocated and deallocated,
// and again up to 200 times; and a PD closed twice, then a third time as
// pyverbs' with-block closes it on leaving, without an error.
func TestIntegrationPD(t *testing.T) {
	ctx := integrationContext(t)
	allocFree := func(t *testing.T) {
		pd, err := ctx.AllocPD()
		ok(t, err)
		ok(t, pd.Close())
	}
	t.Run("alloc", allocFree)              // test_alloc_pd
	t.Run("dealloc", allocFree)            // test_dealloc_pd
	t.Run("multiple", func(t *testing.T) { // test_multiple_pd_creation
		for range 1 + rand.IntN(200) {
			allocFree(t)
		}
	})
	t.Run("twice", func(t *testing.T) { // test_destroy_pd_twice
		pd, err := ctx.AllocPD()
		ok(t, err)
		for i := range 3 {
			if err := pd.Close(); err != nil {
				t.Errorf("Close %d of %s: %v", i+1, pd, err)
			}
		}
	})
}

// TestIntegrationCreateCQWithCompChannel is CQAPITest.
// test_create_cq_with_comp_channel: CQs of 1 entry, half the device's
// maximum and its maximum, each with a completion channel.
func TestIntegrationCreateCQWithCompChannel(t *testing.T) {
	ctx := integrationContext(t)
	attr := integrationDevice(t, ctx).Attr
	maxCQE := attr.MaxCQE
	t.Logf("%s: %d completion vectors, CQs on vector 0", ctx.Name(), attr.NumCompVectors)
	for _, n := range []int{1, maxCQE / 2, maxCQE} {
		ch, err := ctx.CreateCompChannel()
		ok(t, err)
		cq, err := ctx.CreateCQ(n, ch)
		skipUnsupported(t, err, "CQ with completion channel")
		if err != nil {
			t.Fatalf("CQ of %d entries: %v", n, err)
		}
		ok(t, cq.Close())
		ok(t, ch.Close())
	}
}

// qpCaps are pyverbs' random_qp_cap: queue sizes well under the device's
// limits, which do not count larger work requests.
func qpCaps(a Attr) QPCaps {
	return QPCaps{
		MaxSendWR: 1 + rand.IntN(max(a.MaxQPWR/8, 1)), MaxRecvWR: 1 + rand.IntN(max(a.MaxQPWR/8, 1)),
		MaxSendSGE: 1 + rand.IntN(max(a.MaxSGE/2, 1)), MaxRecvSGE: 1 + rand.IntN(max(a.MaxSGE/2, 1)),
	}
}

// createQPWithAttr is pyverbs' QP made with a QPAttr (all defaults: port
// 1, P_Key index 0, no access flags, Q_Key 0, PSN 0): RC and UC QPs go to
// INIT, UD ones on to RTS.
func createQPWithAttr(qp *QP) error {
	if err := qp.Init(InitAttr{Port: 1}); err != nil || qp.Type() != QPTypeUD {
		return err
	}
	if err := qp.ReadyToReceive(RTRAttr{}); err != nil {
		return err
	}
	return qp.ReadyToSend(RTSAttr{})
}

// TestIntegrationCreateQP is QPTest.test_create_{rc,uc,ud}_qp_{no,with}_attr:
// a QP of random queue sizes made on a PD and a 100-entry CQ is in RESET,
// or with attributes in INIT (RC, UC) or RTS (UD).
func TestIntegrationCreateQP(t *testing.T) {
	ctx := integrationContext(t)
	attr := integrationDevice(t, ctx).Attr
	for _, typ := range []QPType{QPTypeRC, QPTypeUC, QPTypeUD} {
		for _, withAttr := range []bool{false, true} {
			name, want := typ.String()+"_no_attr", QPStateReset
			if withAttr {
				name, want = typ.String()+"_with_attr", QPStateInit
				if typ == QPTypeUD {
					want = QPStateRTS
				}
			}
			t.Run(name, func(t *testing.T) {
				pd, err := ctx.AllocPD()
				ok(t, err)
				defer pd.Close()
				cq, err := ctx.CreateCQ(100, nil)
				ok(t, err)
				defer cq.Close()
				qp, err := pd.CreateQP(QPConfig{Type: typ, SendCQ: cq, RecvCQ: cq, Caps: qpCaps(attr), SignalAll: rand.IntN(2) == 1})
				with := map[bool]string{false: "without", true: "with"}[withAttr]
				skipUnsupported(t, err, "Create "+typ.String()+" QP "+with+" attrs")
				ok(t, err)
				defer qp.Close()
				if withAttr {
					err := createQPWithAttr(qp)
					skipUnsupported(t, err, "Create "+typ.String()+" QP with attrs")
					ok(t, err)
				}
				if qp.State() != want {
					t.Errorf("%s QP should have been in %s, is in %s", typ, want, qp.State())
				}
			})
		}
	}
}

// TestIntegrationCreateQPIllegalCaps is QPTest.test_create_raw_qp_ex_with_
// illegal_caps_*: a UD QP asking for more work requests (2^32-1) or
// scatter-gather entries (2^16-1) than the device has fails, where the
// device has fewer.
func TestIntegrationCreateQPIllegalCaps(t *testing.T) {
	ctx := integrationContext(t)
	attr := integrationDevice(t, ctx).Attr
	tests := []struct {
		name  string
		edit  func(*QPCaps)
		limit bool // the device's limit is under what is asked
	}{
		{"max_send_wr", func(c *QPCaps) { c.MaxSendWR = 0xffffffff }, attr.MaxQPWR < 0xffffffff},
		{"max_send_sge", func(c *QPCaps) { c.MaxSendSGE = 0xffff }, attr.MaxSGE < 0xffff},
		{"max_recv_sge", func(c *QPCaps) { c.MaxRecvSGE = 0xffff }, attr.MaxSGE < 0xffff},
		{"max_recv_wr", func(c *QPCaps) { c.MaxRecvWR = 0xffffffff }, attr.MaxQPWR < 0xffffffff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.limit {
				return // pyverbs checks nothing then either
			}
			pd, err := ctx.AllocPD()
			ok(t, err)
			defer pd.Close()
			cq, err := ctx.CreateCQ(100, nil)
			ok(t, err)
			defer cq.Close()
			caps := qpCaps(attr)
			tt.edit(&caps)
			// Like pyverbs' QP with attributes, the error may come from
			// the create or from a modify after it.
			qp, err := pd.CreateQP(QPConfig{Type: QPTypeUD, SendCQ: cq, RecvCQ: cq, Caps: caps})
			if err == nil {
				err = createQPWithAttr(qp)
				ok(t, qp.Close())
			}
			var ve *VerbError
			if !errors.As(err, &ve) || ve.Err == nil {
				t.Errorf("a UD QP with %+v (device: %d WRs, %d SGEs): error %v, want a VerbError", caps, attr.MaxQPWR, attr.MaxSGE, err)
			}
		})
	}
}

// TestIntegrationAH is pyverbs' AHTest: an address handle to the port's
// own GID 0 made and destroyed, and on RoCE one without a GRH refused.
func TestIntegrationAH(t *testing.T) {
	ctx := integrationContext(t)
	p, err := ctx.QueryPort(1)
	ok(t, err)
	portUp := func(t *testing.T) {
		if p.State != PortStateActive && p.State != PortStateInit {
			t.Skip("Port 1 is not up, can not create AH")
		}
	}
	globalAH := func(t *testing.T) AHAttr {
		portUp(t)
		if p.GIDTblLen == 0 {
			t.Skip("Not supported without GID table")
		}
		gid, err := ctx.QueryGID(1, 0)
		ok(t, err)
		a := AHAttr{Port: 1, GRH: &GRH{DGID: gid, HopLimit: 1}}
		if p.LinkLayer == LinkLayerInfiniBand {
			a.DLID = p.LID
		}
		return a
	}
	pd, err := ctx.AllocPD()
	ok(t, err)
	t.Cleanup(func() { ok(t, pd.Close()) })
	t.Run("create", func(t *testing.T) { // test_create_ah
		ah, err := pd.CreateAH(globalAH(t))
		skipUnsupported(t, err, "Create AH")
		ok(t, err)
		ok(t, ah.Close())
	})
	t.Run("roce_without_GRH", func(t *testing.T) { // test_create_ah_roce
		if p.LinkLayer != LinkLayerEthernet {
			t.Skipf("Link layer of port=1 is %s , skip RoCE test", p.LinkLayer)
		}
		portUp(t)
		ah, err := pd.CreateAH(AHAttr{Port: 1})
		skipUnsupported(t, err, "Create AH")
		if err == nil {
			ok(t, ah.Close())
			t.Fatal("Successfully created a non-global AH on RoCE port=1")
		}
		var ve *VerbError
		if !errors.As(err, &ve) || ve.Verb != "ibv_create_ah" {
			t.Errorf("error %v, want ibv_create_ah's VerbError", err)
		}
	})
	t.Run("destroy", func(t *testing.T) { // test_destroy_ah
		ah, err := pd.CreateAH(globalAH(t))
		skipUnsupported(t, err, "Create AH")
		ok(t, err)
		if err := ah.Close(); err != nil {
			t.Errorf("destroying %s: %v", ah, err)
		}
	})
}

// TestIntegrationRegMRBadFlags is MRTest.test_reg_mr_bad_flags: remote
// write or remote atomic access without local write is refused (the
// kernel's EINVAL), on an MR of random length up to 4 MiB.
func TestIntegrationRegMRBadFlags(t *testing.T) {
	ctx := integrationContext(t)
	pd, err := ctx.AllocPD()
	ok(t, err)
	defer pd.Close()
	for _, access := range []Access{AccessRemoteWrite, AccessRemoteAtomic} {
		n := 1 + rand.IntN(4<<20)
		mr, err := pd.AllocMR(n, access)
		if err == nil {
			ok(t, mr.Close())
			t.Errorf("an MR with access %#x only was registered", uint32(access))
			continue
		}
		var ve *VerbError
		if !errors.As(err, &ve) || ve.Verb != "ibv_reg_mr" || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("access %#x: error %v, want ibv_reg_mr's VerbError wrapping EINVAL", uint32(access), err)
		}
	}
}
