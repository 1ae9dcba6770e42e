package madrpc_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestResolveGUID(t *testing.T) {
	var asked []mad.Packet
	h := func(req *mad.Packet) []mad.Packet {
		asked = append(asked, *req)
		rec := make([]byte, 64)
		copy(rec, req.MAD[56:120])
		if binary.BigEndian.Uint64(req.MAD[56+16:]) == 0x999 {
			return []mad.Packet{madtest.Reply(req, 0x0d00, 56, nil)} // ERR_NO_RECORDS
		}
		binary.BigEndian.PutUint16(rec[40:], 7)
		rec[53] = 0x13 // QoS class 1, SL 3
		return []mad.Packet{madtest.Reply(req, 0, 56, rec)}
	}
	x := madrpc.NewTransactor(madtest.New(h), madrpc.TransactorOptions{Timeout: 50 * time.Millisecond,
		SA: &madrpc.SAAddress{SMLID: 1, SL: 2, PortGUID: 0x100001}})
	defer x.Close()
	ctx := context.Background()
	p, err := x.Resolve(ctx, mad.Path{GUID: 0x100004})
	if err != nil || p.LID != 7 || p.SL != 3 || p.String() != "Lid 7" {
		t.Fatalf("Resolve = %+v, %v; want Lid 7 SL 3", p, err)
	}
	if len(asked) != 1 {
		t.Fatalf("%d MADs sent, want 1", len(asked))
	}
	m := asked[0].MAD
	if m[1] != byte(mad.ClassSA) || m[2] != 2 || m[3] != byte(mad.MethodGet) || binary.BigEndian.Uint16(m[16:]) != 0x35 {
		t.Errorf("header % x: want SA class version 2 Get PathRecord", m[:24])
	}
	if got := binary.BigEndian.Uint64(m[48:]); got != 0xc {
		t.Errorf("component mask %#x, want DGID|SGID (0xc)", got)
	}
	if dgid, sgid := binary.BigEndian.Uint64(m[56+16:]), binary.BigEndian.Uint64(m[56+32:]); dgid != 0x100004 || sgid != 0x100001 ||
		binary.BigEndian.Uint64(m[56+8:]) != 0xfe80000000000000 {
		t.Errorf("DGID/SGID: % x", m[56+8:56+40])
	}
	if asked[0].Addr.LID != 1 || asked[0].Addr.SL != 2 || asked[0].Addr.QPN != 1 {
		t.Errorf("sent to %+v, want the SM's LID 1, SL 2, QP1", asked[0].Addr)
	}
	if _, err := x.Resolve(ctx, mad.Path{GUID: 0x100004}); err != nil || len(asked) != 1 {
		t.Errorf("second Resolve: %v, %d MADs; want the cached answer", err, len(asked))
	}
	if p, err := x.Resolve(ctx, mad.LIDPath(5)); err != nil || p.LID != 5 {
		t.Errorf("a LID path: %+v, %v", p, err)
	}
	_, err = x.Resolve(ctx, mad.Path{GUID: 0x999})
	if err == nil || !strings.Contains(err.Error(), "resolving port GUID 0x0000000000000999 through the SA: SubnAdmGet(PathRecord) to Lid 1: MAD status 0x0d00") {
		t.Errorf("no record: %v", err)
	}
	if err := (mad.Path{GUID: 0x5}).Validate(); err == nil {
		t.Error("an unresolved GUID path validates")
	}

	y := madrpc.NewTransactor(madtest.New(h), madrpc.TransactorOptions{})
	defer y.Close()
	if _, err := y.Resolve(ctx, mad.Path{GUID: rdma.GUID(1)}); err == nil || !strings.Contains(err.Error(), "knows no SM LID") {
		t.Errorf("without an SA: %v", err)
	}
}

func TestResolveGID(t *testing.T) {
	var asked []mad.Packet
	h := func(req *mad.Packet) []mad.Packet {
		asked = append(asked, *req)
		rec := make([]byte, 64)
		copy(rec, req.MAD[56:120])
		binary.BigEndian.PutUint16(rec[40:], 9)
		rec[53] = 0x04 // SL 4
		return []mad.Packet{madtest.Reply(req, 0, 56, rec)}
	}
	gid := rdma.NewGID(0xfe80000000000123, 0x100004)
	x := madrpc.NewTransactor(madtest.New(h), madrpc.TransactorOptions{Timeout: 50 * time.Millisecond,
		SA: &madrpc.SAAddress{SMLID: 1, PortGUID: 0x100001}})
	defer x.Close()
	ctx := context.Background()
	p, err := x.Resolve(ctx, mad.Path{DGID: &gid})
	if err != nil || p.LID != 9 || p.SL != 4 || p.DGID != nil || p.String() != "Lid 9" {
		t.Fatalf("Resolve = %+v, %v; want Lid 9 SL 4 without a GRH", p, err)
	}
	if len(asked) != 1 || !bytes.Equal(asked[0].MAD[56+8:56+24], gid[:]) {
		t.Fatalf("%d MADs; DGID asked % x, want % x", len(asked), asked[0].MAD[56+8:56+24], gid[:])
	}

	// Without an SM (RoCE) a GID target keeps its global route.
	y := madrpc.NewTransactor(madtest.New(h), madrpc.TransactorOptions{})
	defer y.Close()
	if p, err := y.Resolve(ctx, mad.Path{DGID: &gid}); err != nil || p.DGID == nil || p.LID != 0 {
		t.Errorf("without an SM: %+v, %v; want the GID route unchanged", p, err)
	}
	// An SMP cannot take it.
	_, err = y.Do(ctx, &madrpc.Request{Path: mad.Path{DGID: &gid}, Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: 0x11, Name: "NodeInfo"})
	if err == nil || !strings.Contains(err.Error(), "an SMP takes no global route") {
		t.Errorf("SMP to a GID without an SA: %v", err)
	}
}

func TestResolvePKey(t *testing.T) {
	var sent []mad.Packet
	h := func(req *mad.Packet) []mad.Packet {
		sent = append(sent, *req)
		if req.MAD[1] != byte(mad.ClassSA) {
			return []mad.Packet{madtest.Reply(req, 0, 64, nil)}
		}
		rec := make([]byte, 64)
		binary.BigEndian.PutUint16(rec[40:], 7)
		// The path's P_Key: the port GUID's low 16 bits.
		copy(rec[50:52], req.MAD[56+22:56+24])
		return []mad.Packet{madtest.Reply(req, 0, 56, rec)}
	}
	x := madrpc.NewTransactor(madtest.New(h), madrpc.TransactorOptions{Timeout: 50 * time.Millisecond,
		SA: &madrpc.SAAddress{SMLID: 1, PortGUID: 0x100001, PKeys: []uint16{0xffff, 0x8001, 0x0002}}})
	defer x.Close()
	ctx := context.Background()
	for _, c := range []struct {
		pkey    uint64
		want    uint16
		wantErr string
	}{
		{0xffff, 0, ""}, {0x8001, 1, ""}, {0x8002, 2, ""},
		{0x8003, 0, "the path's P_Key 0x8003 is not in the local port's P_Key table"},
	} {
		p, err := x.Resolve(ctx, mad.Path{GUID: rdma.GUID(0x10000 | c.pkey)})
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("P_Key %#x: error %v, want %q", c.pkey, err, c.wantErr)
			}
			continue
		}
		if err != nil || p.PKeyIndex != c.want {
			t.Fatalf("P_Key %#x: %+v, %v; want index %d", c.pkey, p, err, c.want)
		}
		// A GMP goes with the index, an SMP without.
		for _, class := range []mad.Class{mad.ClassPerf, mad.ClassSMI} {
			sent = nil
			if _, err := x.Do(ctx, &madrpc.Request{Path: p, Class: class, Method: mad.MethodGet, AttrID: 0x11}); err != nil {
				t.Fatal(err)
			}
			want := c.want
			if class == mad.ClassSMI {
				want = 0
			}
			if got := sent[0].Addr.PKeyIndex; got != want {
				t.Errorf("P_Key %#x, class %v: sent with index %d, want %d", c.pkey, class, got, want)
			}
		}
	}
}
