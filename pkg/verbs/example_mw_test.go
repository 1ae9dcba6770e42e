package verbs_test

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// ExampleQP_BindMW hands a peer a memory window: remote read access to
// 256 bytes of a larger MR, which the owner takes back by binding it
// to zero bytes, without deregistering the MR. The peer gets the
// window's address and key (here through a variable; a program sends
// them over its own connection). Here both QPs are on one device (rxe0,
// port 1, GID 0); it needs an RDMA device with type 1 windows, so it is
// compiled, not run, by go test (TestIntegrationMWType1 and
// TestIntegrationInvalidateMWType1 run the same steps in the VM).
func ExampleQP_BindMW() {
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
	owned, _ := pd.AllocMR(4096, verbs.AccessLocalWrite|verbs.AccessMWBind)
	defer owned.Close()
	copy(owned.Bytes()[1024:], "shared part")
	landing, _ := pd.AllocMR(256, verbs.AccessLocalWrite)
	defer landing.Close()
	owner, peer, err := connectedPair(ctx, pd, cq, verbs.AccessRemoteRead)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer owner.Close()
	defer peer.Close()

	mw, err := pd.AllocMW(verbs.MWType1)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mw.Close()
	bgctx := context.Background()
	if err := owner.BindMW(mw, 1, verbs.MWBind{MR: owned, Offset: 1024, Length: 256, Access: verbs.AccessRemoteRead}, true); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := cq.Next(bgctx); err != nil {
		fmt.Println(err)
		return
	}
	addr, rkey := owned.Addr()+1024, mw.RKey() // what the peer is told

	// The peer reads through the window.
	err = peer.PostSend(verbs.SendWR{ID: 2, Op: verbs.OpRDMARead, MR: landing, Length: 11, RemoteAddr: addr, RKey: rkey, Signaled: true})
	if err == nil {
		_, err = cq.Next(bgctx)
	}
	fmt.Printf("peer read %q (%v)\n", landing.Bytes()[:11], err)

	// The owner takes the window back: the key stops working.
	if err := owner.BindMW(mw, 3, verbs.MWBind{MR: owned}, true); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := cq.Next(bgctx); err != nil {
		fmt.Println(err)
	}
}
