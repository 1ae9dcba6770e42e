package endport_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// saData is where an SA MAD's record starts: after the common header,
// the RMPP header and the SA header.
const saData = 56

// fakeSA answers PathRecord Gets with the path to DLID 9 (or the LID the
// query names), and records each query's LID and component mask.
type fakeSA struct {
	queries []mad.PathRecord
	masks   []uint64
}

func (s *fakeSA) handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	if h.UnmarshalBinary(req.MAD) != nil || h.MgmtClass != mad.ClassSA || h.AttrID != mad.AttrPathRecord {
		return []mad.Packet{madtest.Reply(req, mad.Status(0x0c), 0, nil)}
	}
	var q mad.PathRecord
	q.UnmarshalBinary(req.MAD[saData:])
	s.queries = append(s.queries, q)
	s.masks = append(s.masks, beUint64(req.MAD[48:56]))
	if q.DGID == rdma.NewGID(0xfe80<<48, 0x99) {
		return []mad.Packet{madtest.Reply(req, mad.Status(3<<8), 0, nil)} // ERR_NO_RECORDS
	}
	r := mad.PathRecord{DGID: q.DGID, SGID: q.SGID, DLID: 9, SLID: 5, SL: 2, MTU: 4, PKey: 0xffff}
	if q.DLID != 0 {
		r.DLID = q.DLID
	}
	data, _ := r.MarshalBinary()
	return []mad.Packet{madtest.Reply(req, 0, saData, data)}
}

func beUint64(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

func openOnSA(t *testing.T, sa *fakeSA) *endport.Port {
	t.Helper()
	p, err := endport.Open(context.Background(), "mlx5_0/1", endport.WithSysfs(fixture),
		endport.WithSimulator(endport.SimOff), endport.WithConfigFile(""),
		endport.WithTransport(func(context.Context, *rdma.Device, *rdma.Port) (mad.Transport, error) {
			return madtest.New(sa.handle), nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestPathRecord checks the query PathRecord sends for each form of its
// ends and the record it returns.
func TestPathRecord(t *testing.T) {
	local := rdma.NewGID(0xfe80<<48, 0x0c42a10300a1b2c4)
	sgid := (&mad.PathRecord{}).Layout()
	mask := func(names ...string) uint64 {
		var m uint64
		for _, n := range names {
			c, _ := sgid.Component(n)
			m |= c.Mask
		}
		return m
	}
	tests := []struct {
		name, src, dst string
		wantQuery      mad.PathRecord
		wantMask       uint64
		wantDLID       uint16
	}{
		{"from this port to a GUID", "", "0x0002c90300000042",
			mad.PathRecord{SGID: local, DGID: rdma.NewGID(0xfe80<<48, 0x0002c90300000042)}, mask("SGID", "DGID"), 9},
		{"between two GUIDs", "0x0000000000000011", "0x0000000000000022",
			mad.PathRecord{SGID: rdma.NewGID(0xfe80<<48, 0x11), DGID: rdma.NewGID(0xfe80<<48, 0x22)}, mask("SGID", "DGID"), 9},
		{"LIDs", "5", "12", mad.PathRecord{SLID: 5, DLID: 12}, mask("SLID", "DLID"), 12},
		{"a GID", "", "fe80::2:c903:0:1492",
			mad.PathRecord{SGID: local, DGID: rdma.NewGID(0xfe80<<48, 0x0002c90300001492)}, mask("SGID", "DGID"), 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sa := &fakeSA{}
			p := openOnSA(t, sa)
			rec, err := p.PathRecord(context.Background(), tt.src, tt.dst)
			if err != nil {
				t.Fatal(err)
			}
			if len(sa.queries) != 1 {
				t.Fatalf("%d queries, want 1", len(sa.queries))
			}
			if diff := cmp.Diff(tt.wantQuery, sa.queries[0]); diff != "" {
				t.Errorf("unexpected query (-want +got):\n%s", diff)
			}
			if sa.masks[0] != tt.wantMask {
				t.Errorf("component mask %#x, want %#x", sa.masks[0], tt.wantMask)
			}
			if rec.DLID != tt.wantDLID || rec.SL != 2 {
				t.Errorf("record DLID %d SL %d, want DLID %d SL 2", rec.DLID, rec.SL, tt.wantDLID)
			}
		})
	}
}

// TestPathRecordErrors checks malformed ends and the SA's refusal.
func TestPathRecordErrors(t *testing.T) {
	p := openOnSA(t, &fakeSA{})
	for _, dst := range []string{"0,1,3", "bogus", ""} {
		if _, err := p.PathRecord(context.Background(), "", dst); err == nil {
			t.Errorf("PathRecord to %q succeeded", dst)
		}
	}
	_, err := p.PathRecord(context.Background(), "", "0x0000000000000099")
	var se *madrpc.StatusError
	if !errors.As(err, &se) {
		t.Errorf("PathRecord to an unknown GUID: %v, want a *mad.StatusError", err)
	}
}
