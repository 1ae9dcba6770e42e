package madrpc_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// viaSAFake is an SA with the PortInfoRecords of a 3-port switch at LID
// 1 (ports 0 to 2, port n's PortInfo bytes all n+1), the NodeRecord of
// LID 1 and the LinkRecords of the links LID 1 port 2 to LID 4 port 1 and
// LID 4 port 2 to LID 1 port 1; it keeps the requests and answers SMPs
// with an empty GetResp.
type viaSAFake struct {
	reqs []*mad.Packet
}

func (s *viaSAFake) respond(req *mad.Packet) []byte {
	s.reqs = append(s.reqs, req)
	if req.MAD[1] == byte(mad.ClassSMI) || req.MAD[1] == byte(mad.ClassSMIDirect) {
		m := append([]byte(nil), req.MAD[:256]...)
		m[3] = byte(mad.MethodGetResp)
		return m
	}
	tmpl, mask := req.MAD[56:], binary.BigEndian.Uint64(req.MAD[48:])
	switch binary.BigEndian.Uint16(req.MAD[16:]) {
	case 0x20:
		var recs [][]byte
		for _, l := range [][]byte{{0, 1, 2, 1, 0, 4}, {0, 4, 2, 1, 0, 1}} {
			if mask&1 != 0 && binary.BigEndian.Uint16(tmpl) != binary.BigEndian.Uint16(l) || mask&2 != 0 && tmpl[2] != l[2] {
				continue
			}
			recs = append(recs, l)
		}
		return madtest.SAResponse(req, 0, 8, recs...)
	case 0x11:
		if binary.BigEndian.Uint16(tmpl) != 1 {
			return madtest.SAResponse(req, 0, 112)
		}
		nr := make([]byte, 112)
		binary.BigEndian.PutUint16(nr, 1)
		nr[4+2] = 2 // a switch
		copy(nr[44:], "sw1")
		return madtest.SAResponse(req, 0, 112, nr)
	case 0x12:
		var recs [][]byte
		for port := byte(0); port < 3; port++ {
			if mask&2 != 0 && tmpl[2] != port {
				continue
			}
			r := make([]byte, 72)
			binary.BigEndian.PutUint16(r, 1)
			r[2] = port
			for i := 4; i < 68; i++ {
				r[i] = port + 1
			}
			recs = append(recs, r)
		}
		return madtest.SAResponse(req, 0, 72, recs...)
	}
	return madtest.SAResponse(req, 0x0c00, 8)
}

func TestViaSA(t *testing.T) {
	fake := &viaSAFake{}
	resp := &madtest.RMPPResponder{HdrLen: 56, Respond: fake.respond}
	x := madrpc.NewTransactor(madtest.New(resp.Handle), madrpc.TransactorOptions{ViaSA: true,
		SA: &madrpc.SAAddress{SMLID: 1, LID: 1, SMKey: 7}})
	defer x.Close()
	ctx := context.Background()
	get := func(p mad.Path, attr mad.AttrID, mod uint32) (*madrpc.Response, error) {
		return x.Do(ctx, &madrpc.Request{Path: p, Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: attr, AttrMod: mod, Name: "attr"})
	}

	r, err := get(mad.LIDPath(1), mad.AttrNodeDescription, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimRight(string(r.Data()), "\x00"); got != "sw1" || r.Header.AttrID != mad.AttrNodeDescription || r.Header.Method != mad.MethodGetResp {
		t.Errorf("NodeDescription: %q, header %+v", got, r.Header)
	}
	if k := binary.BigEndian.Uint64(fake.reqs[0].MAD[36:]); k != 7 {
		t.Errorf("SM_Key %d, want 7", k)
	}
	// PortInfo of port 2; of the port an SMP would enter (a switch's 0),
	// also by a directed route to the local port.
	for _, c := range []struct {
		path mad.Path
		mod  uint32
		want byte
	}{{mad.LIDPath(1), 2, 3}, {mad.LIDPath(1), 0, 1}, {mad.DRPath(0), 0, 1}} {
		r, err := get(c.path, mad.AttrPortInfo, c.mod)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]byte{c.want, c.want}, r.Data()[:2]); diff != "" {
			t.Errorf("PortInfo %v port %d (-want +got):\n%s", c.path, c.mod, diff)
		}
	}

	var nr *madrpc.NoRecordError
	if _, err := get(mad.LIDPath(9), mad.AttrNodeInfo, 0); !errors.As(err, &nr) {
		t.Errorf("no record: %v", err)
	}
	// A directed route is found as a LID through the LinkRecords, each
	// link asked for once.
	before := len(fake.reqs)
	if r, err := get(mad.DRPath(0, 2, 2, 2), mad.AttrNodeDescription, 0); err == nil || !strings.Contains(err.Error(), "no NodeRecord") {
		t.Errorf("NodeDescription by 0,2,2,2 (Lid 4): %v, %v", r, err)
	}
	if _, err := get(mad.DRPath(0, 2, 2), mad.AttrNodeDescription, 0); err != nil {
		t.Errorf("NodeDescription by 0,2,2 (Lid 1): %v", err)
	}
	// NodeInfo by a directed route names the port the route entered by,
	// the last link's ToPort, as the node's SMA would.
	if r, err := get(mad.DRPath(0, 2, 2), mad.AttrNodeInfo, 0); err != nil || r.Data()[36] != 1 {
		t.Errorf("NodeInfo by 0,2,2: LocalPortNum of %v, %v; want 1", r, err)
	}
	// So does PortInfo, of any port: the fake's record of port 2 says 3.
	if r, err := get(mad.DRPath(0, 2, 2), mad.AttrPortInfo, 2); err != nil || r.Data()[28] != 1 || r.Data()[27] != 3 {
		t.Errorf("PortInfo 2 by 0,2,2: LocalPortNum of %v, %v; want 1 and the record's other bytes", r, err)
	}
	var links []string
	for _, q := range fake.reqs[before:] {
		if binary.BigEndian.Uint16(q.MAD[16:]) == 0x20 {
			links = append(links, fmt.Sprintf("%d/%d", binary.BigEndian.Uint16(q.MAD[56:]), q.MAD[58]))
		}
	}
	if diff := cmp.Diff([]string{"1/2", "4/2", "1/2"}, links); diff != "" {
		t.Errorf("LinkRecords asked for (-want +got):\n%s", diff)
	}
	if _, err := get(mad.DRPath(0, 3), mad.AttrNodeInfo, 0); err == nil || !strings.Contains(err.Error(), "no LinkRecord from Lid 1 port 3") {
		t.Errorf("a hop with no link: %v", err)
	}

	// A Set, and a Get no record carries, go as SMPs.
	for _, c := range []madrpc.Request{
		{Path: mad.LIDPath(1), Method: mad.MethodSet, AttrID: mad.AttrPortInfo, Data: make([]byte, 64)},
		{Path: mad.DRPath(0, 1), Method: mad.MethodGet, AttrID: 0xff90},
	} {
		c.Class = mad.ClassSMI
		if c.Path.IsDR() {
			c.Class = mad.ClassSMIDirect
		}
		if _, err := x.Do(ctx, &c); err != nil {
			t.Errorf("%v: %v", c.String(), err)
		}
		if last := fake.reqs[len(fake.reqs)-1]; last.MAD[1] != byte(c.Class) || binary.BigEndian.Uint16(last.MAD[16:]) != uint16(c.AttrID) {
			t.Errorf("%v went as class %#x attribute %#x, not as the SMP", c.String(), last.MAD[1], binary.BigEndian.Uint16(last.MAD[16:]))
		}
	}
}
