package mad_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

func TestPMACapabilityString(t *testing.T) {
	tests := []struct {
		c    mad.PMACapability
		want string
	}{
		{0, "0x0"},
		{mad.PMAAllPortSelect, "AllPortSelect"},
		{mad.PMAAllPortSelect | mad.PMAXmitWait | 1, "AllPortSelect|XmitWait|0x1"},
		{mad.PMAExtendedWidth | mad.PMAExtendedWidthNoIETF | mad.PMAQP1Dropped, "ExtendedWidth|ExtendedWidthNoIETF|QP1Dropped"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.c.String()); diff != "" {
			t.Errorf("%#x: unexpected String (-want +got):\n%s", uint16(tt.c), diff)
		}
	}
	if diff := cmp.Diff("AdditionalPortCounters|0x4", (mad.PMAAdditionalPortCounters | 4).String()); diff != "" {
		t.Errorf("unexpected CapabilityMask2 String (-want +got):\n%s", diff)
	}
}

func TestPMACapabilities(t *testing.T) {
	c := mad.CapabilitiesOf(&mad.ClassPortInfo{CapabilityMask: 0x1200, CapabilityMask2: 2})
	got := []bool{c.Has(mad.PMAXmitWait), c.Has(mad.PMAAllPortSelect), c.ExtendedCounters(), c.Has2(mad.PMAAdditionalPortCounters)}
	if diff := cmp.Diff([]bool{true, false, true, true}, got); diff != "" {
		t.Errorf("XmitWait, AllPortSelect, ExtendedCounters, AdditionalPortCounters (-want +got):\n%s", diff)
	}
	pc := mad.PortCounters{PortXmitWait: 9}
	c.Hide(&pc)
	mad.PMACapabilities{}.Hide(&pc)
	if pc.PortXmitWait != 0 {
		t.Errorf("PortXmitWait %d after Hide without XmitWait, want 0", pc.PortXmitWait)
	}
}

// TestResetData checks the reset masks land where libibmad's
// performance_reset_via puts them.
func TestResetData(t *testing.T) {
	tests := []struct {
		name string
		l    *mad.Layout
		port int
		mask uint64
		want map[int]byte // byte offset: value; others zero
	}{
		{"all counters", (&mad.PortCounters{}).Layout(), 1, 0, map[int]byte{1: 1, 2: 0xff, 3: 0xff, 18: 0xff}},
		{"CounterSelect2", (&mad.PortCounters{}).Layout(), 2, 0x3ffff, map[int]byte{1: 2, 2: 0xff, 3: 0xff, 18: 0x03}},
		{"extended", (&mad.PortCountersExtended{}).Layout(), 255, 0x0fff1234, map[int]byte{1: 255, 2: 0x12, 3: 0x34, 6: 0x0f, 7: 0xff}},
		// Above bit 15 the mask goes where PortCounters has
		// CounterSelect2, a counter of this attribute.
		{"SL counters", (&mad.PortXmitDataSL{}).Layout(), 3, 0x10003, map[int]byte{1: 3, 3: 0x03, 18: 0x01}},
		{"extended speeds", (&mad.PortExtendedSpeedsCounters{}).Layout(), 1, 0x8000000000000001, map[int]byte{1: 1, 8: 0x80, 15: 0x01}},
		{"extended speeds, all", (&mad.PortExtendedSpeedsCountersRSFEC{}).Layout(), 1, 0,
			map[int]byte{1: 1, 8: 0xff, 9: 0xff, 10: 0xff, 11: 0xff, 12: 0xff, 13: 0xff, 14: 0xff, 15: 0xff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mad.ResetData(tt.l, tt.port, tt.mask)
			want := make([]byte, len(got))
			for off, v := range tt.want {
				want[off] = v
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unexpected data (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAddCounters checks the sum saturates at each counter's width, as
// infiniband-diags' aggregate_* do.
func TestAddCounters(t *testing.T) {
	var sum mad.PortCounters
	steps := []struct {
		add, want mad.PortCounters
	}{
		{mad.PortCounters{PortSelect: 1, LinkDownedCounter: 200, LocalLinkIntegrityErrors: 9, PortXmitData: 0xfffffff0},
			mad.PortCounters{PortSelect: 1, LinkDownedCounter: 200, LocalLinkIntegrityErrors: 9, PortXmitData: 0xfffffff0}},
		{mad.PortCounters{PortSelect: 2, LinkDownedCounter: 50, LocalLinkIntegrityErrors: 5, PortXmitData: 0x0f},
			mad.PortCounters{PortSelect: 2, LinkDownedCounter: 250, LocalLinkIntegrityErrors: 14, PortXmitData: 0xffffffff}},
		{mad.PortCounters{PortSelect: 3, CounterSelect: 7, LinkDownedCounter: 10, LocalLinkIntegrityErrors: 5, PortXmitData: 1},
			mad.PortCounters{PortSelect: 3, CounterSelect: 7, LinkDownedCounter: 255, LocalLinkIntegrityErrors: 15, PortXmitData: 0xffffffff}},
	}
	for i, s := range steps {
		if err := mad.AddCounters(&sum, &s.add); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(s.want, sum); diff != "" {
			t.Errorf("sum after port %d (-want +got):\n%s", i+1, diff)
		}
	}
	ext := mad.PortCountersExtended{PortXmitData: ^uint64(0) - 1}
	if err := mad.AddCounters(&ext, &mad.PortCountersExtended{PortXmitData: 5}); err != nil || ext.PortXmitData != ^uint64(0) {
		t.Errorf("64-bit sum %#x, %v; want it saturated", ext.PortXmitData, err)
	}
	if err := mad.AddCounters(&sum, &ext); err == nil {
		t.Error("adding PortCountersExtended to PortCounters: no error")
	}
}

// FuzzAddCounters checks that adding counters to a zero sum gives them
// back, and that a sum never falls below either side.
func FuzzAddCounters(f *testing.F) {
	f.Add(make([]byte, 184), make([]byte, 184))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var pa, pb mad.PortCountersExtended
		if pa.UnmarshalBinary(a) != nil || pb.UnmarshalBinary(b) != nil {
			return
		}
		var sum mad.PortCountersExtended
		if err := mad.AddCounters(&sum, &pa); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(pa, sum); diff != "" {
			t.Fatalf("zero plus a (-a +sum):\n%s", diff)
		}
		if err := mad.AddCounters(&sum, &pb); err != nil {
			t.Fatal(err)
		}
		if sum.SymbolErrorCounter < pa.SymbolErrorCounter || sum.SymbolErrorCounter < pb.SymbolErrorCounter ||
			sum.PortRcvPkts < pa.PortRcvPkts || sum.PortRcvPkts < pb.PortRcvPkts {
			t.Fatalf("sum %+v below a %+v or b %+v", sum, pa, pb)
		}
	})
}

func TestSelectPort(t *testing.T) {
	pc := mad.PortCounters{SymbolErrorCounter: 3}
	if err := mad.SelectPort(&pc, 7); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(mad.PortCounters{PortSelect: 7, SymbolErrorCounter: 3}, pc); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRSFECActive(t *testing.T) {
	tests := []struct {
		pie  mad.PortInfoExtended
		want bool
	}{
		{mad.PortInfoExtended{CapabilityMask: 1, FECModeActive: 2}, true},
		{mad.PortInfoExtended{CapabilityMask: 1, FECModeActive: 4}, true},
		{mad.PortInfoExtended{CapabilityMask: 1, FECModeActive: 1}, false},
		{mad.PortInfoExtended{FECModeActive: 2}, false},
	}
	for _, tt := range tests {
		if got := tt.pie.RSFECActive(); got != tt.want {
			t.Errorf("%+v: RSFECActive %v, want %v", tt.pie, got, tt.want)
		}
	}
}

// pmaFake answers as a 4-port switch with enhanced port 0 whose PMA has
// AllPortSelect, and keeps the PortSelect and data of each PerfMgt
// request.
type pmaFake struct {
	mu   sync.Mutex
	reqs []pmaRequest
}

type pmaRequest struct {
	Method mad.Method
	Attr   mad.AttrID
	Port   byte
}

func (f *pmaFake) handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	h.UnmarshalBinary(req.MAD)
	port := req.MAD[mad.SMPDataOffset+1]
	var data []byte
	perf := h.MgmtClass == mad.ClassPerf
	switch {
	case !perf && h.AttrID == mad.AttrNodeInfo:
		data, _ = (&mad.NodeInfo{NodeType: 2, NumPorts: 4}).AppendBinary(nil)
	case !perf && h.AttrID == mad.AttrSwitchInfo:
		data, _ = (&mad.SwitchInfo{EnhancedPort0: 1}).AppendBinary(nil)
	case perf && h.AttrID == mad.AttrClassPortInfo:
		data, _ = (&mad.ClassPortInfo{CapabilityMask: uint16(mad.PMAAllPortSelect)}).AppendBinary(nil)
	case perf && h.AttrID == mad.AttrPortCounters:
		data, _ = (&mad.PortCounters{PortSelect: port, SymbolErrorCounter: 4}).AppendBinary(nil)
	}
	if perf {
		f.mu.Lock()
		f.reqs = append(f.reqs, pmaRequest{h.Method, h.AttrID, port})
		f.mu.Unlock()
	}
	return []mad.Packet{madtest.Reply(req, 0, mad.SMPDataOffset, data)}
}

func TestPMA(t *testing.T) {
	ctx := context.Background()
	for _, dryRun := range []bool{false, true} {
		fake := &pmaFake{}
		opts := madrpc.TransactorOptions{Timeout: time.Second}
		if dryRun {
			opts.DryRun = func(context.Context, *madrpc.Plan) error { return nil }
		}
		x := madrpc.NewTransactor(madtest.New(fake.handle), opts)
		p := madrpc.NewPMA(x, mad.LIDPath(4))
		caps, err := p.Capabilities(ctx, 2)
		if err != nil || !caps.Has(mad.PMAAllPortSelect) {
			t.Fatalf("Capabilities: %v, %v", caps, err)
		}
		var pc mad.PortCounters
		if _, err := p.Get(ctx, &pc, 3); err != nil || pc != (mad.PortCounters{PortSelect: 3, SymbolErrorCounter: 4}) {
			t.Errorf("Get: %+v, %v", pc, err)
		}
		planned, err := p.Reset(ctx, pc.Layout(), mad.AllPortSelect, 0xfff)
		if err != nil || planned != dryRun {
			t.Errorf("Reset: planned %v, %v; want %v", planned, err, dryRun)
		}
		want := []pmaRequest{{mad.MethodGet, mad.AttrClassPortInfo, 2}, {mad.MethodGet, mad.AttrPortCounters, 3}}
		if !dryRun {
			want = append(want, pmaRequest{mad.MethodSet, mad.AttrPortCounters, 255})
		}
		if diff := cmp.Diff(want, fake.reqs); diff != "" {
			t.Errorf("dry run %v: unexpected requests (-want +got):\n%s", dryRun, diff)
		}
		ports, err := madrpc.PortNumbers(ctx, p.Q)
		if diff := cmp.Diff([]int{0, 1, 2, 3, 4}, ports); diff != "" || err != nil {
			t.Errorf("PortNumbers: %v; (-want +got):\n%s", err, diff)
		}
		x.Close()
	}
}

// pieFake answers NodeInfo, PortInfo and PortInfoExtended as a node of
// the type given whose ports have the capabilities given, and keeps the
// PortInfo modifiers asked.
type pieFake struct {
	nodeType      mad.NodeType
	capMask       uint32
	capMask2      uint16
	mu            sync.Mutex
	portInfoAsked []uint32
}

func (f *pieFake) handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	h.UnmarshalBinary(req.MAD)
	var data []byte
	switch h.AttrID {
	case mad.AttrNodeInfo:
		data, _ = (&mad.NodeInfo{NodeType: f.nodeType, NumPorts: 2}).AppendBinary(nil)
	case mad.AttrPortInfo:
		f.mu.Lock()
		f.portInfoAsked = append(f.portInfoAsked, h.AttrMod)
		f.mu.Unlock()
		data, _ = (&mad.PortInfo{CapabilityMask: f.capMask, CapabilityMask2: f.capMask2}).AppendBinary(nil)
	case mad.AttrPortInfoExtended:
		data, _ = (&mad.PortInfoExtended{CapabilityMask: 1, FECModeActive: 2}).AppendBinary(nil)
	}
	return []mad.Packet{madtest.Reply(req, 0, mad.SMPDataOffset, data)}
}

func TestQuerierPortInfoExtended(t *testing.T) {
	tests := []struct {
		name    string
		fake    *pieFake
		wantErr string
		asked   []uint32
	}{
		{"CA", &pieFake{nodeType: 1, capMask: 1 << 15, capMask2: 2}, "", []uint32{2}},
		{"switch asks port 0", &pieFake{nodeType: 2, capMask: 1 << 15, capMask2: 2}, "", []uint32{0}},
		{"no CapabilityMask2", &pieFake{nodeType: 1, capMask2: 2}, "port info extended not supported: the port has no CapabilityMask2", []uint32{2}},
		{"not indicated", &pieFake{nodeType: 1, capMask: 1 << 15, capMask2: 4},
			"port info extended not supported: CapabilityMask2 0x4 does not indicate PortInfoExtended", []uint32{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := madrpc.NewTransactor(madtest.New(tt.fake.handle), madrpc.TransactorOptions{Timeout: time.Second})
			defer x.Close()
			pie, data, err := madrpc.NewQuerier(x, mad.LIDPath(3)).PortInfoExtended(context.Background(), 2)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, mad.ErrNoPortInfoExtended) {
					t.Errorf("error %v, want %q", err, tt.wantErr)
				}
			} else if err != nil || !pie.RSFECActive() || len(data) < pie.Layout().Size {
				t.Errorf("%+v, %d bytes, %v; want RS-FEC active", pie, len(data), err)
			}
			if diff := cmp.Diff(tt.asked, tt.fake.portInfoAsked); diff != "" {
				t.Errorf("unexpected PortInfo modifiers (-want +got):\n%s", diff)
			}
		})
	}
}
