package rdma

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/ibtool/ibtool/pkg/perftest"
	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// bwCMResolveTimeout is perftest's for address and route resolution.
const bwCMResolveTimeout = 2 * time.Second

// bwCommRecvs is how many receives the exchange's QP keeps posted: the
// exchange is strictly one message each way in turn, so one would do;
// a few more never make the peer's send wait for a repost.
const bwCommRecvs = 4

// bwComm is perftest's exchange over rdma_cm (-R and -z): an RC
// connection of its own, made by rdma_cm on the test's port, whose
// QP carries each message as one SEND (perftest's comm->rdma_ctx).
type bwComm struct {
	ch     *rdmacm.EventChannel
	id     *rdmacm.ID
	dev    *verbs.Context
	pd     *verbs.PD
	cch    *verbs.CompChannel
	scq    *verbs.CQ
	rcq    *verbs.CQ
	smr    *verbs.MR
	rmr    *verbs.MR
	client bool
	role   string // the peer's: "server" or "client"
	armed  bool
}

// dialBwComm connects the exchange to the server at dst (perftest's
// rdma_client_connect): resolve the address and the route, make the QP,
// post the receives, connect with 7 retries and RNR retries.
func dialBwComm(ctx context.Context, dst netip.AddrPort) (c *bwComm, err error) {
	c = &bwComm{client: true, role: "server"}
	defer func() {
		if err != nil {
			c.close()
			c = nil
		}
	}()
	if c.ch, err = rdmacm.NewEventChannel(); err != nil {
		return c, err
	}
	if c.id, err = c.ch.CreateID(rdmacm.PortSpaceTCP); err != nil {
		return c, err
	}
	if err = c.id.ResolveAddr(ctx, netip.AddrPort{}, dst, bwCMResolveTimeout); err != nil {
		return c, err
	}
	if err = c.id.ResolveRoute(ctx, bwCMResolveTimeout); err != nil {
		return c, err
	}
	if err = c.makeQP(); err != nil {
		return c, err
	}
	if _, err = c.id.Connect(ctx, rdmacm.ConnParam{RetryCount: 7, RNRRetryCount: 7}); err != nil {
		return c, err
	}
	return c, nil
}

// listenBwComm waits on port for the client's exchange connection and
// accepts it (perftest's rdma_server_connect); the listening ID is gone
// when it returns.
func listenBwComm(ctx context.Context, port uint16, debugf func(string, ...any)) (c *bwComm, err error) {
	c = &bwComm{role: "client"}
	defer func() {
		if err != nil {
			c.close()
			c = nil
		}
	}()
	if c.ch, err = rdmacm.NewEventChannel(); err != nil {
		return c, err
	}
	listen, err := c.ch.CreateID(rdmacm.PortSpaceTCP)
	if err != nil {
		return c, err
	}
	defer listen.Close()
	if err = listen.Bind(netip.AddrPortFrom(netip.IPv4Unspecified(), port)); err != nil {
		return c, err
	}
	if err = listen.Listen(1); err != nil {
		return c, err
	}
	debugf("Listening on rdma_cm port %d", port)
	for c.id == nil {
		ev, err := listen.Await(ctx, "wait for the client")
		if err != nil {
			return c, err
		}
		if ev.Type == rdmacm.EventConnectRequest {
			c.id = ev.ID
		}
	}
	if err = c.makeQP(); err != nil {
		c.id.Reject(nil)
		return c, err
	}
	if err = c.id.Accept(ctx, rdmacm.ConnParam{RetryCount: 7, RNRRetryCount: 7}); err != nil {
		return c, err
	}
	return c, nil
}

// makeQP makes the exchange's verbs objects on the ID's device and posts
// its receives.
func (c *bwComm) makeQP() error {
	var err error
	if c.dev, err = c.id.OpenDevice(); err != nil {
		return err
	}
	if c.pd, err = c.dev.AllocPD(); err != nil {
		return err
	}
	if c.cch, err = c.dev.CreateCompChannel(); err != nil {
		return err
	}
	if c.scq, err = c.dev.CreateCQ(1, nil); err != nil {
		return err
	}
	if c.rcq, err = c.dev.CreateCQ(bwCommRecvs, c.cch); err != nil {
		return err
	}
	if c.smr, err = c.pd.AllocMR(perftest.DestSize, 0); err != nil {
		return err
	}
	if c.rmr, err = c.pd.AllocMR(bwCommRecvs*perftest.DestSize, verbs.AccessLocalWrite); err != nil {
		return err
	}
	if _, err = c.id.CreateQP(c.pd, verbs.QPConfig{SendCQ: c.scq, RecvCQ: c.rcq,
		Caps: verbs.QPCaps{MaxSendWR: 1, MaxRecvWR: bwCommRecvs, MaxSendSGE: 1, MaxRecvSGE: 1}}); err != nil {
		return err
	}
	for i := range bwCommRecvs {
		if err := c.postRecv(i); err != nil {
			return err
		}
	}
	return nil
}

func (c *bwComm) postRecv(slot int) error {
	return c.id.QP().PostRecv(verbs.RecvWR{ID: uint64(slot), MR: c.rmr, Offset: slot * perftest.DestSize, Length: perftest.DestSize})
}

// send sends one message and waits for its completion.
func (c *bwComm) send(ctx context.Context, what string, m []byte) error {
	copy(c.smr.Bytes(), m)
	if err := c.id.QP().PostSend(verbs.SendWR{Op: verbs.OpSend, MR: c.smr, Length: len(m), Signaled: true}); err != nil {
		return fmt.Errorf("sending the %s to the %s: %w", what, c.role, err)
	}
	if _, err := c.scq.Next(ctx); err != nil {
		return c.failed(ctx, "sending the "+what+" to", err)
	}
	return nil
}

// recv waits for the peer's next message (asleep on the receive CQ's
// channel) and reposts its receive.
func (c *bwComm) recv(ctx context.Context, what string) ([]byte, error) {
	var wc [1]verbs.WorkCompletion
	for {
		n, err := c.rcq.Poll(wc[:])
		if err != nil {
			return nil, err
		}
		if n == 1 {
			break
		}
		if !c.armed {
			if err := c.rcq.ReqNotify(false); err != nil {
				return nil, err
			}
			c.armed = true
			continue // a completion may have come before the arming
		}
		if _, err := c.cch.WaitContext(ctx); err != nil {
			// The peer's last message may have come just before it
			// went away.
			if n, perr := c.rcq.Poll(wc[:]); perr == nil && n == 1 {
				break
			}
			return nil, c.failed(ctx, "waiting for the "+what+" of", err)
		}
		c.armed = false
	}
	if err := wc[0].Err(c.rcq); err != nil {
		return nil, c.failed(ctx, "waiting for the "+what+" of", err)
	}
	slot := int(wc[0].ID)
	m := append([]byte(nil), c.rmr.Bytes()[slot*perftest.DestSize:][:wc[0].ByteLen]...)
	if err := c.postRecv(slot); err != nil {
		return nil, err
	}
	return m, nil
}

// failed says what went wrong in an exchange step: the context's cause
// when the peer went away, the error otherwise.
func (c *bwComm) failed(ctx context.Context, step string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return fmt.Errorf("%s the %s: %w", step, c.role, err)
}

// xchg trades one message with the peer, perftest's way: the client
// sends first, the server answers.
func (c *bwComm) xchg(ctx context.Context, what string, mine []byte) ([]byte, error) {
	if c.client {
		if err := c.send(ctx, what, mine); err != nil {
			return nil, err
		}
		return c.recv(ctx, what)
	}
	theirs, err := c.recv(ctx, what)
	if err != nil {
		return nil, err
	}
	return theirs, c.send(ctx, what, mine)
}

// handshake trades pingpong_dests (ctx_hand_shake).
func (c *bwComm) handshake(ctx context.Context, what string, mine perftest.Dest) (perftest.Dest, error) {
	msg, _ := mine.MarshalBinary()
	b, err := c.xchg(ctx, what, msg)
	if err != nil {
		return perftest.Dest{}, err
	}
	var d perftest.Dest
	if err := d.UnmarshalBinary(b); err != nil {
		return d, fmt.Errorf("the %s's %s: %w", c.role, what, err)
	}
	return d, nil
}

// close ends the exchange's connection and frees what it made.
func (c *bwComm) close() {
	if c.id != nil {
		_ = c.id.Close() // its QP first
	}
	closeMade(c.smr)
	closeMade(c.rmr)
	closeMade(c.scq)
	closeMade(c.rcq)
	closeMade(c.cch)
	closeMade(c.pd)
	if c.dev != nil {
		_ = c.dev.Close()
	}
	if c.ch != nil {
		_ = c.ch.Close()
	}
}
