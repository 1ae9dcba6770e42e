//go:build cgo && !noverbs

package verbs

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// What pyverbs' traffic resources use (tests/base.py, tests/utils.py).
const (
	trafficMsgSize  = 1024       // TrafficResources.msg_size
	trafficNumMsgs  = 1000       // num_msgs: the CQ's and receive queue's depth
	trafficGRHSize  = 40         // a UD receive's room for the GRH
	trafficUDQKey   = 0x11111111 // UDResources.UD_QKEY
	trafficPollWait = 10 * time.Second

	// accessRelaxedOrdering is IBV_ACCESS_RELAXED_ORDERING, the first of
	// the optional access flags libibverbs drops where the kernel cannot
	// take them.
	accessRelaxedOrdering Access = 1 << 20
)

// trafficGID is the GID index pyverbs' RDMATestCase picks for traffic on
// port 1: the first whose last 8 bytes are not all zero, on an active
// port. Without one it skips the test as pyverbs does (on siw, whose
// only GID is its MAC address followed by zeroes).
func trafficGID(t *testing.T, ctx *Context) (int, [16]byte, Port) {
	t.Helper()
	p, err := ctx.QueryPort(1)
	ok(t, err)
	if p.State == PortStateActive {
		for i := range p.GIDTblLen {
			gid, err := ctx.QueryGID(1, i)
			if err == nil && !bytes.Equal(gid[8:], make([]byte, 8)) {
				return i, gid, p
			}
		}
	}
	t.Skip("No supported port is up, can't run traffic")
	return 0, [16]byte{}, p
}

// player is one side of pyverbs' traffic (its RCResources or
// UDResources): its own context, PD, CQ (with a completion channel for
// the CQ events tests), MR and one QP.
type player struct {
	ctx    *Context
	pd     *PD
	ch     *CompChannel
	cq     *CQ
	mr     *MR
	qp     *QP
	ah     *AH
	psn    uint32
	offset int // where a message starts in mr: after the GRH on UD
}

// newPlayer makes one side on device name; the objects are destroyed
// when the test ends.
func newPlayer(t *testing.T, name string, typ QPType, events bool, access Access) *player {
	t.Helper()
	ctx, err := Open(name)
	ok(t, err)
	t.Cleanup(func() { ok(t, ctx.Close()) })
	p := &player{ctx: ctx, psn: rand.Uint32N(1 << 24)}
	p.pd, err = ctx.AllocPD()
	ok(t, err)
	t.Cleanup(func() { ok(t, p.pd.Close()) })
	if events {
		p.ch, err = ctx.CreateCompChannel()
		ok(t, err)
		t.Cleanup(func() { ok(t, p.ch.Close()) })
	}
	p.cq, err = ctx.CreateCQ(trafficNumMsgs, p.ch)
	ok(t, err)
	t.Cleanup(func() { ok(t, p.cq.Close()) })
	if events {
		ok(t, p.cq.ReqNotify(false))
	}
	size := trafficMsgSize
	if typ == QPTypeUD {
		p.offset = trafficGRHSize
		size += trafficGRHSize
	}
	p.mr, err = p.pd.AllocMR(size, access)
	ok(t, err)
	t.Cleanup(func() { ok(t, p.mr.Close()) })
	p.qp, err = p.pd.CreateQP(QPConfig{Type: typ, SendCQ: p.cq, RecvCQ: p.cq,
		Caps: QPCaps{MaxSendWR: 1, MaxRecvWR: trafficNumMsgs, MaxSendSGE: 1, MaxRecvSGE: 1}})
	skipUnsupported(t, err, "Create QP type "+typ.String())
	ok(t, err)
	t.Cleanup(func() { ok(t, p.qp.Close()) })
	// pyverbs makes the QP with a QPAttr: a UD QP goes to RTS at once,
	// an RC one to INIT (no access flags) until it knows its peer.
	init := InitAttr{Port: 1}
	if typ == QPTypeUD {
		init.QKey = trafficUDQKey
	}
	ok(t, p.qp.Init(init))
	if typ == QPTypeUD {
		ok(t, p.qp.ReadyToReceive(RTRAttr{}))
		ok(t, p.qp.ReadyToSend(RTSAttr{}))
	}
	return p
}

// connect is pyverbs' pre_run: an RC QP to RTS towards peer with
// ibv_rc_pingpong's values and a GRH to the port's own GID (both sides are
// on one device); a UD side makes its address handle to that GID instead.
func (p *player) connect(t *testing.T, peer *player) {
	t.Helper()
	idx, gid, port := trafficGID(t, p.ctx)
	grh := &GRH{DGID: gid, SGIDIndex: idx, HopLimit: 1}
	if p.qp.Type() == QPTypeUD {
		var err error
		p.ah, err = p.pd.CreateAH(AHAttr{Port: 1, DLID: port.LID, GRH: grh})
		ok(t, err)
		t.Cleanup(func() { ok(t, p.ah.Close()) })
		return
	}
	ok(t, p.qp.ReadyToReceive(RTRAttr{PathMTU: MTU1024, DestQPN: peer.qp.Num(), RQPSN: p.psn,
		DLID: port.LID, GRH: grh, MaxDestRdAtomic: 1, MinRNRTimer: 12}))
	ok(t, p.qp.ReadyToSend(RTSAttr{SQPSN: peer.psn, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1}))
}

// postRecv posts one receive of a whole message (and its GRH on UD).
func (p *player) postRecv(t *testing.T) {
	t.Helper()
	ok(t, p.qp.PostRecv(RecvWR{MR: p.mr, Length: p.mr.Len()}))
}

// send fills the MR with fill and sends one signaled message of it.
func (p *player) send(t *testing.T, peer *player, fill byte) {
	t.Helper()
	for i := range p.mr.Bytes() {
		p.mr.Bytes()[i] = fill
	}
	wr := SendWR{Op: OpSend, MR: p.mr, Offset: p.offset, Length: trafficMsgSize, Signaled: true}
	if p.ah != nil {
		wr.AH, wr.RemoteQPN, wr.RemoteQKey = p.ah, peer.qp.Num(), trafficUDQKey
	}
	ok(t, p.qp.PostSend(wr))
}

// poll is pyverbs' poll_cq of one completion: with a completion channel
// it waits for the CQ's event and asks for the next before it polls. A
// completion with an error status fails the test.
func (p *player) poll(t *testing.T) WorkCompletion {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), trafficPollWait)
	defer cancel()
	var wc [1]WorkCompletion
	for {
		if p.ch != nil {
			_, err := p.ch.WaitContext(ctx)
			ok(t, err)
			ok(t, p.cq.ReqNotify(false))
		}
		n, err := p.cq.Poll(wc[:])
		ok(t, err)
		if n == 1 {
			if wc[0].Status != WCSuccess {
				t.Fatalf("Completion status is %s", wc[0].Status)
			}
			return wc[0]
		}
		if ctx.Err() != nil {
			t.Fatal("Got timeout on polling (1 CQEs remaining)")
		}
	}
}

// validate checks that the message received is all fill.
func (p *player) validate(t *testing.T, fill byte) {
	t.Helper()
	got := p.mr.Bytes()[p.offset : p.offset+trafficMsgSize]
	if want := bytes.Repeat([]byte{fill}, trafficMsgSize); !bytes.Equal(got, want) {
		t.Fatalf("Data validation failure: expected %q..., received %q...", want[:8], got[:8])
	}
}

// traffic is pyverbs' utils.traffic: iters round trips of a SEND from
// the client ('c's) and one back from the server ('s's), each side
// polling its send and receive completions and posting a new receive.
func traffic(t *testing.T, client, server *player, iters int) {
	t.Helper()
	client.postRecv(t)
	server.postRecv(t)
	for range iters {
		client.send(t, server, 'c')
		client.poll(t)
		server.poll(t)
		server.postRecv(t)
		server.validate(t, 'c')
		server.send(t, client, 's')
		server.poll(t)
		client.poll(t)
		client.postRecv(t)
		client.validate(t, 's')
	}
}

// players makes a client and a server of typ and connects them.
func players(t *testing.T, typ QPType, events bool, access Access) (*player, *player) {
	t.Helper()
	// RDMATestCase's set-up picks the GID first: no traffic without one.
	ctx := integrationContext(t)
	trafficGID(t, ctx)
	client := newPlayer(t, ctx.Name(), typ, events, access)
	server := newPlayer(t, ctx.Name(), typ, events, access)
	client.connect(t, server)
	server.connect(t, client)
	return client, server
}

// TestIntegrationCQEvents is pyverbs' CqEventsTestCase: 100 round trips
// of RC and of UD traffic whose completions each side waits for on its
// CQ's completion channel.
func TestIntegrationCQEvents(t *testing.T) {
	for _, typ := range []QPType{QPTypeRC, QPTypeUD} {
		t.Run(typ.String(), func(t *testing.T) {
			client, server := players(t, typ, true, AccessLocalWrite)
			traffic(t, client, server, 100)
		})
	}
}

// TestIntegrationRelaxedOrdering is pyverbs' RoTestCase (RC and UD): 100
// round trips of traffic through MRs registered with relaxed ordering.
func TestIntegrationRelaxedOrdering(t *testing.T) {
	for _, typ := range []QPType{QPTypeRC, QPTypeUD} {
		t.Run(typ.String(), func(t *testing.T) {
			client, server := players(t, typ, false, AccessLocalWrite|accessRelaxedOrdering)
			traffic(t, client, server, 100)
		})
	}
}
