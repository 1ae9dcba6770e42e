package route_test

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/route"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// saFabric is twoSwitches' fabric behind a transactor whose SA (at LID 1)
// answers every SubnAdmGetTable with respond's status and records of
// recLen bytes, and whose SMPs go to the fake fabric. It returns the
// transactor, the SA queries seen and a count of the forwarding table
// SMPs.
type saFabric struct {
	mu       sync.Mutex
	queries  []mad.Header
	smKeys   []uint64
	tableSMP int
}

func newSAFabric(t *testing.T, ff *subnettest.Fabric, recLen int, respond func(h mad.Header) (mad.Status, [][]byte)) (*saFabric, *madrpc.Transactor) {
	t.Helper()
	s := &saFabric{}
	resp := &madtest.RMPPResponder{HdrLen: 56, Respond: func(req *mad.Packet) []byte {
		var h mad.Header
		if err := h.UnmarshalBinary(req.MAD); err != nil {
			return nil
		}
		s.mu.Lock()
		s.queries = append(s.queries, h)
		s.smKeys = append(s.smKeys, binary.BigEndian.Uint64(req.MAD[36:]))
		s.mu.Unlock()
		st, recs := respond(h)
		return madtest.SAResponse(req, st, recLen, recs...)
	}}
	x := madrpc.NewTransactor(madtest.New(func(req *mad.Packet) []mad.Packet {
		var h mad.Header
		if err := h.UnmarshalBinary(req.MAD); err != nil {
			return nil
		}
		if h.MgmtClass == mad.ClassSA {
			return resp.Handle(req)
		}
		if h.AttrID == mad.AttrLinearForwardingTable || h.AttrID == mad.AttrMulticastForwardingTable {
			s.mu.Lock()
			s.tableSMP++
			s.mu.Unlock()
		}
		return ff.Handle(req)
	}), madrpc.TransactorOptions{Timeout: 50 * time.Millisecond, Retries: 1, SA: &madrpc.SAAddress{SMLID: 1}})
	t.Cleanup(func() { x.Close() })
	return s, x
}

// lftRecord is the SA's record of a switch's LFT block 0 with ports
// (LIDs 0 up), the rest unrouted.
func lftRecord(t *testing.T, lid uint16, ports ...uint8) []byte {
	t.Helper()
	r := mad.LinearForwardingTableRecord{LID: lid}
	for i := range mad.LFTBlockSize {
		r.LinearForwardingTable.SetPort(i, 0xff)
		if i < len(ports) {
			r.LinearForwardingTable.SetPort(i, ports[i])
		}
	}
	b, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// outPorts are each switch's out ports of LIDs 1-10, -1 where not read.
func outPorts(tables *route.Tables) map[string][]int {
	got := map[string][]int{}
	for _, st := range tables.Switches {
		var ports []int
		for lid := rdma.LID(1); lid <= 10; lid++ {
			p, ok := st.OutPort(lid)
			if !ok {
				p = -1
			}
			ports = append(ports, p)
		}
		got[st.Switch.Desc] = ports
	}
	return got
}

// TestCollectViaSA: with ViaSA the SA's LinearForwardingTableRecords fill
// the tables in one SubnAdmGetTable sent with the SM_Key; a switch the SA
// has no record of is read by SMP; an SA that fails leaves SAError set and
// every table read by SMP.
func TestCollectViaSA(t *testing.T) {
	ff, _, fab := twoSwitches(t, nil)
	switches := fab.ByType(mad.NodeTypeSwitch)
	byDR := map[string][]int{
		"Switch1": {0, 3, 1, 1, 3, 3, 2, 2, 3, 3},
		"Switch2": {3, 0, 3, 3, 1, 1, 3, 3, 2, 2},
	}
	// The SA's Switch1 differs from what its SMPs say: LIDs 9 and 10 by
	// port 5, so the test sees which answered.
	fromSA := map[string][]int{
		"Switch1": {0, 3, 1, 1, 3, 3, 2, 2, 5, 5},
		"Switch2": byDR["Switch2"],
	}
	sw1 := lftRecord(t, 1, 0xff, 0, 3, 1, 1, 3, 3, 2, 2, 5, 5)
	sw2 := lftRecord(t, 2, 0xff, 3, 0, 3, 3, 1, 1, 3, 3, 2, 2)
	other := lftRecord(t, 99, 0xff, 1, 1, 1) // no switch discovered
	tests := []struct {
		name      string
		recLen    int
		status    mad.Status
		records   [][]byte
		want      map[string][]int
		wantSMPs  int
		wantSAErr bool
	}{
		{"all from the SA", 72, mad.StatusOK, [][]byte{sw1, sw2, other}, fromSA, 0, false},
		{"Switch2 by SMP", 72, mad.StatusOK, [][]byte{sw1}, fromSA, 1, false},
		{"SA error", 72, 0x0100, nil, byDR, 2, true},
		// Records cut to 8 bytes: the SA's answer is not used.
		{"short records", 8, mad.StatusOK, [][]byte{sw1, sw2}, byDR, 2, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, x := newSAFabric(t, ff, tc.recLen, func(mad.Header) (mad.Status, [][]byte) { return tc.status, tc.records })
			tables, err := route.Collect(context.Background(), x, switches, route.CollectOptions{ViaSA: true, SMKey: 0x5eed})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, outPorts(tables)); diff != "" {
				t.Errorf("unexpected out ports of LIDs 1-10 (-want +got):\n%s", diff)
			}
			var se *madrpc.StatusError
			if gotErr := tables.SAError != nil; gotErr != tc.wantSAErr || tc.status != mad.StatusOK && !errors.As(tables.SAError, &se) {
				t.Errorf("SAError %v, want an error: %v (a *madrpc.StatusError for status %#x)", tables.SAError, tc.wantSAErr, tc.status)
			}
			if s.tableSMP != tc.wantSMPs {
				t.Errorf("%d LFT SMPs, want %d", s.tableSMP, tc.wantSMPs)
			}
			if len(s.queries) != 1 || s.queries[0].Method != mad.MethodGetTable || s.queries[0].AttrID != mad.AttrLinearForwardingTableRecord || s.smKeys[0] != 0x5eed {
				t.Errorf("SA queries %+v with SM_Keys %x, want one SubnAdmGetTable(LFTRecord) with SM_Key 0x5eed", s.queries, s.smKeys)
			}
		})
	}
}

// TestCollectViaSAMulticast: the SA's MulticastForwardingTableRecords
// fill the MFTs, by block and port position.
func TestCollectViaSAMulticast(t *testing.T) {
	ff, _, fab := twoSwitches(t, nil)
	rec := func(lid uint16, mask uint16) []byte {
		r := mad.MulticastForwardingTableRecord{LID: lid}
		r.MulticastForwardingTable.SetPortMask(1, mask) // MLID 0xc001
		b, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	s, x := newSAFabric(t, ff, 72, func(mad.Header) (mad.Status, [][]byte) {
		return mad.StatusOK, [][]byte{rec(1, 0b10010), rec(2, 0b110)}
	})
	tables, err := route.Collect(context.Background(), x, fab.ByType(mad.NodeTypeSwitch), route.CollectOptions{Multicast: true, ViaSA: true, End: 0xc01f})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][][]int{}
	for _, st := range tables.Switches {
		got[st.Switch.Desc] = [][]int{st.Ports(0xc000), st.Ports(0xc001)}
	}
	// The records hold block 0 of position 0, all the range asked holds:
	// no SMP reads a block, and the SA's masks, not the switches', are seen.
	want := map[string][][]int{"Switch1": {nil, {1, 4}}, "Switch2": {nil, {1, 2}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected ports of MLIDs 0xc000 and 0xc001 (-want +got):\n%s", diff)
	}
	if tables.SAError != nil || s.tableSMP != 0 {
		t.Errorf("SAError %v, %d MFT SMPs; want none", tables.SAError, s.tableSMP)
	}
	if len(s.queries) != 1 || s.queries[0].AttrID != mad.AttrMulticastForwardingTableRecord {
		t.Errorf("SA queries %+v, want one of MFTRecords", s.queries)
	}
}
