package madrpc_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

func TestQuerySA(t *testing.T) {
	var sent []*mad.Packet
	resp := &madtest.RMPPResponder{HdrLen: 56, Respond: func(req *mad.Packet) []byte {
		sent = append(sent, req)
		return madtest.SAResponse(req, mad.StatusOK, 112, records(300, 112)...)
	}}
	tr := madtest.New(func(req *mad.Packet) []mad.Packet {
		if mad.Method(req.MAD[3]) == mad.MethodGet {
			// opensm answers a Get with one MAD, RMPP inactive.
			return []mad.Packet{madtest.Reply(req, 0x0300, 56, nil)}
		}
		return resp.Handle(req)
	})
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{SA: &madrpc.SAAddress{SMLID: 7, SL: 2}})
	defer x.Close()
	ctx := context.Background()

	rec := make([]byte, 112)
	binary.BigEndian.PutUint16(rec, 5)
	res, err := x.QuerySA(ctx, &madrpc.SAQuery{Method: mad.MethodGetTable, AttrID: 0x11, Name: "NodeRecord", ComponentMask: 1, SMKey: 0x1234, Record: rec})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(records(300, 112), res.Records); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	req := sent[0]
	got := struct {
		LID       uint16
		SL        uint8
		SMKey     uint64
		Offset    uint16
		Mask      uint64
		RecordLID uint16
	}{uint16(req.Addr.LID), req.Addr.SL, binary.BigEndian.Uint64(req.MAD[36:]), binary.BigEndian.Uint16(req.MAD[44:]), binary.BigEndian.Uint64(req.MAD[48:]), binary.BigEndian.Uint16(req.MAD[56:])}
	want := got
	want.LID, want.SL, want.SMKey, want.Offset, want.Mask, want.RecordLID = 7, 2, 0x1234, 0, 1, 5
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}

	_, err = x.QuerySA(ctx, &madrpc.SAQuery{Method: mad.MethodGet, AttrID: 0x11, Name: "NodeRecord"})
	var se *madrpc.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("error %v, want a *mad.StatusError", err)
	}
	wantErr := "SubnAdmGet(NodeRecord) to Lid 7: MAD status 0x0300: ERR_NO_RECORDS, no records match the request"
	if diff := cmp.Diff(wantErr, err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}

	noSA := madrpc.NewTransactor(madtest.New(nil), madrpc.TransactorOptions{})
	defer noSA.Close()
	if _, err := noSA.QuerySA(ctx, &madrpc.SAQuery{Method: mad.MethodGet, AttrID: 0x11}); err == nil {
		t.Error("QuerySA without an SM LID: no error")
	}
}

func TestPathSLs(t *testing.T) {
	var reqs []*mad.Packet
	resp := &madtest.RMPPResponder{HdrLen: 56, Respond: func(req *mad.Packet) []byte {
		reqs = append(reqs, req)
		var recs [][]byte
		for lid := 1; lid <= 40; lid++ {
			pr := make([]byte, 64)
			binary.BigEndian.PutUint16(pr[40:], uint16(lid))
			pr[53] = byte(lid % 16)
			recs = append(recs, pr)
		}
		return madtest.SAResponse(req, 0, 64, recs...)
	}}
	x := madrpc.NewTransactor(madtest.New(resp.Handle), madrpc.TransactorOptions{SA: &madrpc.SAAddress{SMLID: 1, PortGUID: 0x100001}})
	defer x.Close()
	sls, err := x.PathSLs(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(sls) != 40 || sls[17] != 1 || sls[15] != 15 {
		t.Errorf("SLs %v: want 40 LIDs, LID 17 on SL 1, LID 15 on SL 15", sls)
	}
	m := reqs[0].MAD
	if mask := binary.BigEndian.Uint64(m[48:]); mask != 1<<3|1<<11|1<<12 {
		t.Errorf("component mask %#x, want SGID|Reversible|NumbPath", mask)
	}
	if sgid, np := binary.BigEndian.Uint64(m[56+32:]), m[56+49]; sgid != 0x100001 || np != 0x81 {
		t.Errorf("SGID GUID %#x, NumbPath byte %#x; want 0x100001, 0x81", sgid, np)
	}
	if _, err := x.PathSLs(context.Background(), 0x100004, 0); err != nil {
		t.Fatal(err)
	}
	if m := reqs[1].MAD; binary.BigEndian.Uint64(m[48:])&(1<<2) == 0 || binary.BigEndian.Uint64(m[56+16:]) != 0x100004 {
		t.Errorf("to one port: mask %#x, DGID GUID %#x", binary.BigEndian.Uint64(m[48:]), binary.BigEndian.Uint64(m[56+16:]))
	}
}

// TestQuerySAGetMulti sends a SubnAdmGetMulti whose template takes three
// RMPP segments: the responder acknowledges them, gets the whole request
// and answers with PathRecords in RMPP, which the Transactor reassembles
// (the answer's attribute is PathRecord, as IBA o15-0.2.7 has it).
func TestQuerySAGetMulti(t *testing.T) {
	req := bytes.Repeat([]byte{1, 2, 3, 4, 5}, 100) // 500 bytes: 3 segments of 200
	var got []byte
	var method mad.Method
	want := records(300, 64)
	resp := &madtest.RMPPResponder{HdrLen: 56, Respond: func(p *mad.Packet) []byte {
		got, method = append([]byte(nil), p.MAD[56:]...), mad.Method(p.MAD[3])
		m := madtest.SAResponse(p, mad.StatusOK, 64, want...)
		binary.BigEndian.PutUint16(m[16:], uint16(mad.AttrPathRecord))
		return m
	}}
	x := madrpc.NewTransactor(madtest.New(resp.Handle), madrpc.TransactorOptions{SA: &madrpc.SAAddress{SMLID: 1}, Timeout: time.Second})
	defer x.Close()
	res, err := x.QuerySA(context.Background(), &madrpc.SAQuery{Method: mad.MethodGetMulti, AttrID: mad.AttrMultiPathRecord,
		Name: "MultiPathRecord", ComponentMask: 1<<19 | 1<<20, Record: req})
	if err != nil {
		t.Fatal(err)
	}
	if method != mad.MethodGetMulti || !bytes.Equal(got, req) {
		t.Errorf("the responder got %v with %d bytes, want GetMulti with the %d sent", method, len(got), len(req))
	}
	if len(res.Records) != len(want) {
		t.Fatalf("%d records, want %d", len(res.Records), len(want))
	}
	for i := range want {
		if !bytes.Equal(res.Records[i], want[i]) {
			t.Fatalf("record %d: % x, want % x", i, res.Records[i][:8], want[i][:8])
		}
	}
	// Sent: the request's 3 segments and the ACKs of the answer's 96
	// (after segments 1, 33, 65 and 96).
	if res.Response.Sent != 7 {
		t.Errorf("Sent = %d, want 7", res.Response.Sent)
	}
	if res.Response.Header.Method != mad.MethodGetMultiResp || res.Response.Header.AttrID != mad.AttrPathRecord {
		t.Errorf("response %v(%#x), want GetMultiResp(PathRecord)", res.Response.Header.Method, uint16(res.Response.Header.AttrID))
	}
}

// TestQuerySAGetMultiStopped checks that a receiver's STOP of the
// request's segments ends the query with an RMPPError at once.
func TestQuerySAGetMultiStopped(t *testing.T) {
	tr := madtest.New(func(p *mad.Packet) []mad.Packet {
		stop := make([]byte, mad.Size)
		copy(stop, p.MAD[:56])
		(&mad.RMPPHeader{Version: 1, Type: mad.RMPPTypeStop, Flags: mad.RMPPActive, Status: mad.RMPPStatusResources}).MarshalTo(stop)
		return []mad.Packet{{MAD: stop, Addr: p.Addr}}
	})
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{SA: &madrpc.SAAddress{SMLID: 1}, Timeout: 5 * time.Second})
	defer x.Close()
	start := time.Now()
	_, err := x.QuerySA(context.Background(), &madrpc.SAQuery{Method: mad.MethodGetMulti, AttrID: mad.AttrMultiPathRecord,
		Name: "MultiPathRecord", Record: make([]byte, 300)})
	var re *madrpc.RMPPError
	if !errors.As(err, &re) || re.Type != mad.RMPPTypeStop || re.Status != mad.RMPPStatusResources {
		t.Fatalf("error %v, want the receiver's STOP", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v: the STOP should end the query, not the timeout", d)
	}
}
