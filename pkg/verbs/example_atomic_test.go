package verbs_test

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// ExampleQP_PostSend_fetchAndAdd is a counter that two requesters
// increment with FETCH_AND_ADD: each gets the value before its add, so
// no two get the same ticket. The counter is 8 bytes of an MR that allows
// remote atomics, behind a responder QP per requester; here all four QPs
// are on one device (rxe0, port 1, GID 0), connected in pairs. It needs
// an RDMA device whose atomic_cap is not ATOMIC_NONE, so it is compiled,
// not run, by go test (the package's TestIntegrationAtomic* tests run the
// same traffic in the VM).
func ExampleQP_PostSend_fetchAndAdd() {
	ctx, err := verbs.Open("rxe0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	pd, _ := ctx.AllocPD()
	defer pd.Close()
	cq, _ := ctx.CreateCQ(16, nil)
	defer cq.Close()
	access := verbs.AccessLocalWrite | verbs.AccessRemoteAtomic
	counter, _ := pd.AllocMR(8, access) // the shared counter, zero
	defer counter.Close()
	tickets, _ := pd.AllocMR(16, verbs.AccessLocalWrite) // each requester's 8 bytes
	defer tickets.Close()

	var requesters []*verbs.QP
	for range 2 {
		req, resp, err := connectedPair(ctx, pd, cq, access)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Close()
		defer req.Close()
		requesters = append(requesters, req)
	}
	for i, qp := range requesters {
		err := qp.PostSend(verbs.SendWR{ID: uint64(i), Op: verbs.OpAtomicFetchAndAdd, Signaled: true,
			MR: tickets, Offset: 8 * i, Length: 8, RemoteAddr: counter.Addr(), RKey: counter.RKey(), CompareAdd: 1})
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	for range requesters {
		wc, err := cq.Next(context.Background())
		if err != nil {
			fmt.Println(err)
			return
		}
		// The fetched value is in the responder's byte order, here
		// this host's.
		fmt.Printf("requester %d got ticket %d\n", wc.ID, binary.NativeEndian.Uint64(tickets.Bytes()[8*wc.ID:]))
	}
	fmt.Println("counter:", binary.NativeEndian.Uint64(counter.Bytes()))
}

// connectedPair makes two RC QPs on cq connected to each other, in RTS,
// the responder allowing access.
func connectedPair(ctx *verbs.Context, pd *verbs.PD, cq *verbs.CQ, access verbs.Access) (req, resp *verbs.QP, err error) {
	gid, err := ctx.QueryGID(1, 0)
	if err != nil {
		return nil, nil, err
	}
	caps := verbs.QPCaps{MaxSendWR: 4, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}
	if req, err = pd.CreateQP(verbs.QPConfig{SendCQ: cq, RecvCQ: cq, Caps: caps}); err != nil {
		return nil, nil, err
	}
	if resp, err = pd.CreateQP(verbs.QPConfig{SendCQ: cq, RecvCQ: cq, Caps: caps}); err != nil {
		req.Close()
		return nil, nil, err
	}
	for _, p := range [][2]*verbs.QP{{req, resp}, {resp, req}} {
		self, peer := p[0], p[1]
		err = self.Init(verbs.InitAttr{Port: 1, Access: access})
		if err == nil {
			err = self.ReadyToReceive(verbs.RTRAttr{PathMTU: verbs.MTU1024, DestQPN: peer.Num(), MaxDestRdAtomic: 1,
				MinRNRTimer: 12, GRH: &verbs.GRH{DGID: gid, HopLimit: 1}})
		}
		if err == nil {
			err = self.ReadyToSend(verbs.RTSAttr{Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1})
		}
		if err != nil {
			req.Close()
			resp.Close()
			return nil, nil, err
		}
	}
	return req, resp, nil
}
