package mad_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

func TestCounterSource(t *testing.T) {
	none := mad.PMACapabilities{}
	waits := mad.PMACapabilities{Mask: mad.PMAXmitWait | mad.PMAQP1Dropped}
	noIETF := mad.PMACapabilities{Mask: mad.PMAExtendedWidthNoIETF}
	wide := mad.PMACapabilities{Mask: mad.PMAExtendedWidth}
	additional := mad.PMACapabilities{Mask: mad.PMAExtendedWidth, Mask2: mad.PMAAdditionalPortCounters}
	tests := []struct {
		caps mad.PMACapabilities
		name string
		want mad.CounterSource
	}{
		{none, "PortXmitData", mad.FromPortCounters},
		{none, "PortUnicastXmitPkts", mad.NoCounter},
		{none, "SymbolErrorCounter", mad.FromPortCounters},
		{none, "PortXmitWait", mad.NoCounter},
		{none, "QP1Dropped", mad.NoCounter},
		{waits, "PortXmitWait", mad.FromPortCounters},
		{waits, "QP1Dropped", mad.FromPortCounters},
		{noIETF, "PortRcvPkts", mad.FromPortCountersExtended},
		{noIETF, "PortMulticastRcvPkts", mad.NoCounter},
		{noIETF, "VL15Dropped", mad.FromPortCounters},
		{wide, "PortMulticastRcvPkts", mad.FromPortCountersExtended},
		{wide, "PortXmitWait", mad.NoCounter},
		{additional, "LinkDownedCounter", mad.FromPortCountersExtended},
		{additional, "PortXmitWait", mad.FromPortCountersExtended},
		// AdditionalPortCounters without PortCountersExtended says nothing.
		{mad.PMACapabilities{Mask2: mad.PMAAdditionalPortCounters}, "PortRcvErrors", mad.FromPortCounters},
		{additional, "CounterSelect", mad.NoCounter},
		{additional, "NoSuchCounter", mad.NoCounter},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.caps.CounterSource(tt.name)); diff != "" {
			t.Errorf("%v/%v CounterSource(%s) (-want +got):\n%s", tt.caps.Mask, tt.caps.Mask2, tt.name, diff)
		}
	}
}

func TestCounterAttributes(t *testing.T) {
	tests := []struct {
		caps  mad.PMACapabilities
		names []string
		want  [2]bool
	}{
		{mad.PMACapabilities{}, nil, [2]bool{true, false}},
		{mad.PMACapabilities{Mask: mad.PMAExtendedWidth}, nil, [2]bool{true, true}},
		{mad.PMACapabilities{Mask: mad.PMAExtendedWidth}, mad.PortDataCounters, [2]bool{false, true}},
		{mad.PMACapabilities{Mask: mad.PMAExtendedWidth, Mask2: mad.PMAAdditionalPortCounters}, nil, [2]bool{false, true}},
		{mad.PMACapabilities{}, []string{"PortUnicastRcvPkts"}, [2]bool{false, false}},
	}
	for _, tt := range tests {
		n, w := tt.caps.CounterAttributes(tt.names...)
		if diff := cmp.Diff(tt.want, [2]bool{n, w}); diff != "" {
			t.Errorf("%v/%v CounterAttributes(%v) [PortCounters PortCountersExtended] (-want +got):\n%s", tt.caps.Mask, tt.caps.Mask2, tt.names, diff)
		}
	}
}

func TestExtendedFields(t *testing.T) {
	names := func(caps mad.PMACapabilities) []string {
		var out []string
		for _, f := range caps.ExtendedFields() {
			out = append(out, f.Name)
		}
		return out
	}
	base := []string{"PortSelect", "CounterSelect", "PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"}
	ietf := []string{"PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts"}
	if diff := cmp.Diff(base, names(mad.PMACapabilities{Mask: mad.PMAExtendedWidthNoIETF})); diff != "" {
		t.Errorf("no IETF: unexpected fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(append(append([]string{}, base...), ietf...), names(mad.PMACapabilities{Mask: mad.PMAExtendedWidth})); diff != "" {
		t.Errorf("extended width: unexpected fields (-want +got):\n%s", diff)
	}
	all := names(mad.PMACapabilities{Mask: mad.PMAExtendedWidth, Mask2: mad.PMAAdditionalPortCounters})
	if want := len(new(mad.PortCountersExtended).Layout().Fields); len(all) != want {
		t.Errorf("additional counters: %d fields, want all %d: %v", len(all), want, all)
	}
}

// counterFake is a PMA with the capabilities given whose counters all read
// 7; it counts the requests of each attribute.
type counterFake struct {
	caps  mad.PMACapabilities
	asked map[mad.AttrID]int
}

func (f *counterFake) handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	h.UnmarshalBinary(req.MAD)
	f.asked[h.AttrID]++
	var data []byte
	switch h.AttrID {
	case mad.AttrClassPortInfo:
		data, _ = (&mad.ClassPortInfo{CapabilityMask: uint16(f.caps.Mask), CapabilityMask2: uint32(f.caps.Mask2)}).AppendBinary(nil)
	case mad.AttrPortCounters:
		data, _ = (&mad.PortCounters{PortSelect: req.MAD[mad.SMPDataOffset+1], SymbolErrorCounter: 7, PortXmitData: 7, PortXmitWait: 7}).AppendBinary(nil)
	case mad.AttrPortCountersExtended:
		data, _ = (&mad.PortCountersExtended{PortSelect: req.MAD[mad.SMPDataOffset+1], SymbolErrorCounter: 7, PortXmitData: 7, PortXmitWait: 7}).AppendBinary(nil)
	}
	return []mad.Packet{madtest.Reply(req, 0, mad.SMPDataOffset, data)}
}

func TestReadCounters(t *testing.T) {
	type value struct {
		V     uint64
		Width int
		OK    bool
	}
	tests := []struct {
		name  string
		caps  mad.PMACapabilities
		asked map[mad.AttrID]int
		want  map[string]value
	}{
		{"PortCounters only", mad.PMACapabilities{},
			map[mad.AttrID]int{mad.AttrClassPortInfo: 1, mad.AttrPortCounters: 1},
			map[string]value{"PortXmitData": {7, 32, true}, "SymbolErrorCounter": {7, 16, true}, "PortXmitWait": {}}},
		{"both", mad.PMACapabilities{Mask: mad.PMAExtendedWidth | mad.PMAXmitWait},
			map[mad.AttrID]int{mad.AttrClassPortInfo: 1, mad.AttrPortCounters: 1, mad.AttrPortCountersExtended: 1},
			map[string]value{"PortXmitData": {7, 64, true}, "SymbolErrorCounter": {7, 16, true}, "PortXmitWait": {7, 32, true}}},
		{"extended only", mad.PMACapabilities{Mask: mad.PMAExtendedWidth, Mask2: mad.PMAAdditionalPortCounters},
			map[mad.AttrID]int{mad.AttrClassPortInfo: 1, mad.AttrPortCountersExtended: 1},
			map[string]value{"PortXmitData": {7, 64, true}, "SymbolErrorCounter": {7, 64, true}, "PortXmitWait": {7, 64, true}}},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &counterFake{caps: tt.caps, asked: map[mad.AttrID]int{}}
			x := madrpc.NewTransactor(madtest.New(f.handle), madrpc.TransactorOptions{Timeout: time.Second})
			defer x.Close()
			pma := madrpc.NewPMA(x, mad.LIDPath(2))
			caps, err := pma.Capabilities(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			s, err := pma.ReadCounters(ctx, caps, 1)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]value{}
			for name := range tt.want {
				v, w, ok := s.Value(name)
				got[name] = value{v, w, ok}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected values (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.asked, f.asked); diff != "" {
				t.Errorf("unexpected requests (-want +got):\n%s", diff)
			}
		})
	}
}

// A PMA's ClassPortInfo decides where each counter is read from.
func ExamplePMACapabilities_CounterSource() {
	caps := mad.PMACapabilities{Mask: mad.PMAExtendedWidthNoIETF | mad.PMAXmitWait}
	for _, name := range []string{"PortXmitData", "PortUnicastXmitPkts", "SymbolErrorCounter", "PortXmitWait"} {
		fmt.Printf("%s: %v\n", name, caps.CounterSource(name))
	}
	// Output:
	// PortXmitData: PortCountersExtended
	// PortUnicastXmitPkts: none
	// SymbolErrorCounter: PortCounters
	// PortXmitWait: PortCounters
}

func TestPortCounterNamesIsTheConcatenation(t *testing.T) {
	want := slices.Concat(mad.PortDataCounters, mad.PortExtendedDataCounters, mad.PortErrorCounters, []string{"PortXmitWait", "QP1Dropped"})
	if !slices.Equal(mad.PortCounterNames, want) {
		t.Errorf("PortCounterNames = %v, want %v", mad.PortCounterNames, want)
	}
}
