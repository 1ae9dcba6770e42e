package madrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// sent is what the fake saw of one request.
type sent struct {
	Class  mad.Class
	Method mad.Method
	Attr   mad.AttrID
	Mod    uint32
	Key    uint64
	First  byte // the attribute data's second byte: a PMA attribute's PortSelect
}

func TestQuerier(t *testing.T) {
	reply := mad.PortCounters{PortSelect: 3, CounterSelect: 0xffff, SymbolErrorCounter: 7, PortXmitData: 1234}
	replyData, err := reply.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path mad.Path
		key  uint64
		call func(q *madrpc.Querier) (mad.Attribute, error)
		want sent
	}{
		{"PMA Get selects the port", mad.LIDPath(5), 0,
			func(q *madrpc.Querier) (mad.Attribute, error) {
				pc := &mad.PortCounters{PortSelect: 3}
				_, err := q.Get(context.Background(), pc, 0)
				return pc, err
			},
			sent{Class: mad.ClassPerf, Method: mad.MethodGet, Attr: mad.AttrPortCounters, First: 3}},
		{"PMA Set carries the attribute", mad.LIDPath(5), 0,
			func(q *madrpc.Querier) (mad.Attribute, error) {
				pc := &mad.PortCounters{PortSelect: 3, CounterSelect: 0xffff}
				_, err := q.Set(context.Background(), pc, 0, nil)
				return pc, err
			},
			sent{Class: mad.ClassPerf, Method: mad.MethodSet, Attr: mad.AttrPortCounters, First: 3}},
		{"SMP on a DR path with an M_Key", mad.DRPath(0, 1), 0x1122,
			func(q *madrpc.Querier) (mad.Attribute, error) {
				pc := &mad.PortCounters{}
				_, err := q.Get(context.Background(), &mad.NodeInfo{}, 9)
				return pc, err
			},
			sent{Class: mad.ClassSMIDirect, Method: mad.MethodGet, Attr: mad.AttrNodeInfo, Mod: 9, Key: 0x1122}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got sent
			h := func(req *mad.Packet) []mad.Packet {
				var hdr mad.Header
				if err := hdr.UnmarshalBinary(req.MAD); err != nil {
					t.Error(err)
				}
				off := 64
				got = sent{Class: hdr.MgmtClass, Method: hdr.Method, Attr: hdr.AttrID, Mod: hdr.AttrMod}
				if hdr.MgmtClass == mad.ClassSMIDirect {
					var d mad.DRSMPHeader
					if err := d.UnmarshalBinary(req.MAD); err != nil {
						t.Error(err)
					}
					got.Key = d.MKey
				}
				got.First = req.MAD[off+1]
				return []mad.Packet{madtest.Reply(req, 0, off, replyData)}
			}
			x := madrpc.NewTransactor(madtest.New(h), madrpc.TransactorOptions{Timeout: time.Second})
			defer x.Close()
			q := madrpc.NewQuerier(x, tt.path)
			q.Key = tt.key
			a, err := tt.call(q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected request (-want +got):\n%s", diff)
			}
			if pc, ok := a.(*mad.PortCounters); ok && tt.want.Class == mad.ClassPerf {
				if diff := cmp.Diff(&reply, pc); diff != "" {
					t.Errorf("unexpected decoded reply (-want +got):\n%s", diff)
				}
			}
		})
	}
}
