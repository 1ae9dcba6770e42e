package rdmacm

import (
	"context"
	"fmt"
	"net/netip"
)

// Multicast is a multicast group a UD ID joined.
type Multicast struct {
	id     *ID
	handle uint32
	uid    uint64
	// Addr is the group's address.
	Addr netip.Addr
	// attached is the group's GID and LID the ID's QP was attached to.
	attached bool
	mgid     [16]byte
	mlid     uint16
}

// JoinMulticast joins the UD ID to the group at addr (sendOnly: as a
// send-only full member) and waits until the join completes or ctx
// ends. The event's UD carries the group's QP number (0xffffff), Q_Key
// and address vector, to send to the group with. The ID's QP, when
// CreateQP made one, is attached to the group then, so that it receives
// the group's datagrams (as librdmacm does); Leave detaches it.
func (id *ID) JoinMulticast(ctx context.Context, addr netip.Addr, sendOnly bool) (*Multicast, *Event, error) {
	return id.join(ctx, addr, func(b []byte) int { return putSockaddr(b, netip.AddrPortFrom(addr, 0)) }, sendOnly)
}

// join joins the group of the sockaddr put writes (addr names it).
func (id *ID) join(ctx context.Context, addr netip.Addr, put func([]byte) int, sendOnly bool) (*Multicast, *Event, error) {
	mc := &Multicast{id: id, uid: newUID(), Addr: addr}
	in := make([]byte, joinMcastSize)
	le.PutUint64(in[8:], mc.uid)
	le.PutUint32(in[16:], id.handle)
	n := put(in[24:])
	if n == 0 {
		return nil, nil, &Error{Op: "join multicast", Err: fmt.Errorf("no group address")}
	}
	le.PutUint16(in[20:], uint16(n))
	if sendOnly {
		le.PutUint16(in[22:], 1) // RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER
	}
	out := make([]byte, joinMcastResp)
	ap := netip.AddrPortFrom(addr, 0)
	id.ch.mu.Lock()
	id.ch.mcs[mc.uid] = mc
	id.ch.mu.Unlock()
	if err := id.command("join multicast", ap, cmdJoinMcast, in, 0, out); err != nil {
		id.ch.mu.Lock()
		delete(id.ch.mcs, mc.uid)
		id.ch.mu.Unlock()
		return nil, nil, err
	}
	mc.handle = le.Uint32(out)
	ev, err := id.expect(ctx, "join multicast", ap, EventMulticastJoin)
	if err != nil {
		mc.Leave()
		return nil, ev, err
	}
	if id.qp != nil {
		ah := ev.UD.AH
		if err := id.qp.AttachMulticast(ah.DGID, ah.DLID); err != nil {
			mc.Leave()
			return nil, ev, &Error{Op: "attach the QP to the group", Addr: ap, Err: err}
		}
		mc.attached, mc.mgid, mc.mlid = true, ah.DGID, ah.DLID
	}
	return mc, ev, nil
}

// Leave leaves the group, detaching the ID's QP from it first.
func (mc *Multicast) Leave() error {
	var detachErr error
	if mc.attached && mc.id.qp != nil {
		if err := mc.id.qp.DetachMulticast(mc.mgid, mc.mlid); err != nil {
			detachErr = &Error{Op: "detach the QP from the group", Addr: netip.AddrPortFrom(mc.Addr, 0), Err: err}
		}
		mc.attached = false
	}
	in := make([]byte, leaveMcastSize)
	le.PutUint32(in[8:], mc.handle)
	out := make([]byte, destroyIDResp)
	err := mc.id.command("leave multicast", netip.AddrPortFrom(mc.Addr, 0), cmdLeaveMcast, in, 0, out)
	mc.id.ch.mu.Lock()
	delete(mc.id.ch.mcs, mc.uid)
	mc.id.ch.mu.Unlock()
	if err != nil {
		return err
	}
	return detachErr
}
