package simfabric

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/ibsim"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// The multicast group settings a join that creates a group asks for: the
// IPoIB broadcast group's Q_Key and the default P_Key, with SL 0, flow
// label 0, TClass 0, a 2048-byte MTU and 10 Gb/s (IBA 15.2.5.17: a create
// must give Q_Key, P_Key, SL, FlowLabel and TClass).
const (
	mcastQKey = 0x0b1b
	mcastPKey = 0xffff
)

// JoinMulticast makes port 1 of node simHost a full member of the
// multicast group mgid, creating the group when it does not exist, with an
// SA MCMemberRecord Set from that port, as a host's IPoIB does. It returns
// the group's MLID. opensm then routes the group: the switches on its
// spanning tree get multicast forwarding entries for the MLID, a moment
// after the answer (WaitMulticast waits for them).
func (f *Fabric) JoinMulticast(ctx context.Context, simHost string, mgid rdma.GID) (uint16, error) {
	rec, err := f.mcastRequest(ctx, simHost, mad.MethodSet, mgid)
	if err != nil {
		return 0, fmt.Errorf("joining %s from %s: %w", mgid, simHost, err)
	}
	var r mad.MCMemberRecord
	if err := r.UnmarshalBinary(rec); err != nil {
		return 0, fmt.Errorf("joining %s from %s: %w", mgid, simHost, err)
	}
	return r.MLID, nil
}

// LeaveMulticast ends the full membership of simHost's port 1 in mgid
// with an SA MCMemberRecord Delete; opensm deletes a group with its last
// member.
func (f *Fabric) LeaveMulticast(ctx context.Context, simHost string, mgid rdma.GID) error {
	if _, err := f.mcastRequest(ctx, simHost, mad.MethodDelete, mgid); err != nil {
		return fmt.Errorf("leaving %s from %s: %w", mgid, simHost, err)
	}
	return nil
}

// mcastRequest sends one MCMemberRecord Set or Delete for simHost's port
// 1, attached to ibsim as that node, and returns the record the SA
// answers with.
func (f *Fabric) mcastRequest(ctx context.Context, simHost string, method mad.Method, mgid rdma.GID) ([]byte, error) {
	env := map[string]string{}
	for _, kv := range f.Env(simHost) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, err := ibsim.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	c, err := ibsim.Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	dev, err := rdma.NewFS(c.SysFS(), ibsim.DeviceName).Device(ibsim.DeviceName)
	if err != nil {
		return nil, err
	}
	port := dev.Port(1)
	if port == nil || len(port.GIDs) == 0 {
		return nil, fmt.Errorf("%s has no port 1 with a GID", simHost)
	}
	x := madrpc.NewTransactor(c, madrpc.TransactorOptions{Timeout: time.Second, Retries: 2,
		SA: &madrpc.SAAddress{SMLID: port.SMLID, SL: port.SMSL, PortGUID: port.GUID, LID: port.LID, SMKey: 1, PKeys: port.PKeys}})
	defer x.Close()

	r := mad.MCMemberRecord{MGID: mgid, PortGID: port.GIDs[0].GID, JoinState: 1} // a full member
	mask := uint64(1<<0 | 1<<1 | 1<<16)                                          // MGID, PortGID, JoinState
	if method == mad.MethodSet {
		r.QKey, r.PKey = mcastQKey, mcastPKey
		r.MTUSelector, r.MTU = 2, 4   // exactly 2048 bytes
		r.RateSelector, r.Rate = 2, 3 // exactly 10 Gb/s
		// Q_Key, MTU selector and MTU, TClass, P_Key, rate selector and
		// rate, SL, FlowLabel.
		mask |= 1<<2 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<9 | 1<<12 | 1<<13
	}
	rec, err := r.MarshalBinary()
	if err != nil {
		return nil, err
	}
	res, err := x.QuerySA(ctx, &madrpc.SAQuery{Method: method, AttrID: mad.SARecordLayout("MCMemberRecord").ID,
		Name: "MCMemberRecord", ComponentMask: mask, Record: rec})
	if err != nil {
		return nil, err
	}
	if len(res.Records) == 0 || len(res.Records[0]) < len(rec) {
		return nil, errors.New("the SA answered without an MCMemberRecord")
	}
	return res.Records[0][:len(rec)], nil
}

// WaitMulticast waits until the multicast forwarding table of the switch
// at LID swLID, as infiniband-diags' ibroute -M reads it from simHost,
// has an entry for mlid, or the context ends.
func (f *Fabric) WaitMulticast(ctx context.Context, simHost string, swLID int, mlid uint16) error {
	want := fmt.Sprintf("0x%x ", mlid)
	return f.poll(ctx, fmt.Sprintf("MLID 0x%x in the MFT of LID %d", mlid, swLID), func() (bool, error) {
		out, _, _, err := f.RunReference(ctx, simHost, "ibroute", "-M", fmt.Sprint(swLID))
		if err != nil {
			return false, err
		}
		return bytes.HasPrefix(out, []byte(want)) || bytes.Contains(out, []byte("\n"+want)), nil
	})
}
