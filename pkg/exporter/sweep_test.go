package exporter

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestReadPort(t *testing.T) {
	all := func(v uint64) (out [numCounters]uint64) {
		for i := range out {
			out[i] = v
		}
		return out
	}
	bit := func(names ...string) (m uint32) {
		for _, n := range names {
			for i, c := range counters {
				if c.field == n {
					m |= 1 << i
				}
			}
		}
		return m
	}
	everything := uint32(1)<<numCounters - 1
	ietf := bit("PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts")
	tests := []struct {
		name string
		pma  fakePMA
		want PortReading
	}{
		{
			name: "PortCounters only, no XmitWait or QP1Dropped",
			pma:  fakePMA{pc: map[int]mad.PortCounters{3: {SymbolErrorCounter: 7, PortXmitData: 100}}},
			want: func() PortReading {
				r := PortReading{Port: 3, Present: everything &^ ietf &^ bit("PortXmitWait", "QP1Dropped")}
				r.Values[0], r.Values[8] = 100, 7
				return r
			}(),
		},
		{
			name: "32-bit counters at their largest value are saturated",
			pma: fakePMA{caps: mad.PMACapabilities{Mask: mad.PMAXmitWait},
				pc: map[int]mad.PortCounters{3: {PortXmitData: 0xffffffff, LinkDownedCounter: 0xff, LocalLinkIntegrityErrors: 0xf, PortXmitWait: 0xffffffff}}},
			want: func() PortReading {
				r := PortReading{Port: 3, Present: everything &^ ietf &^ bit("QP1Dropped"),
					Saturated: bit("PortXmitData", "LinkDownedCounter", "LocalLinkIntegrityErrors", "PortXmitWait")}
				r.Values[0], r.Values[10], r.Values[17], r.Values[20] = 0xffffffff, 0xff, 0xf, 0xffffffff
				return r
			}(),
		},
		{
			name: "extended data counters, narrow error counters",
			pma: fakePMA{caps: mad.PMACapabilities{Mask: mad.PMAExtendedWidth | mad.PMAXmitWait | mad.PMAQP1Dropped},
				pc:  map[int]mad.PortCounters{3: {SymbolErrorCounter: 0xffff, PortXmitData: 1}},
				pce: map[int]mad.PortCountersExtended{3: {PortXmitData: 1 << 40, PortMulticastRcvPkts: 9, SymbolErrorCounter: 99}}},
			want: func() PortReading {
				r := PortReading{Port: 3, Present: everything, Saturated: bit("SymbolErrorCounter"), Extended: true}
				r.Values[0], r.Values[7], r.Values[8] = 1<<40, 9, 0xffff
				return r
			}(),
		},
		{
			name: "NoIETF: no unicast or multicast counters",
			pma: fakePMA{caps: mad.PMACapabilities{Mask: mad.PMAExtendedWidthNoIETF},
				pce: map[int]mad.PortCountersExtended{3: {PortRcvPkts: 5}}},
			want: func() PortReading {
				r := PortReading{Port: 3, Present: everything &^ ietf &^ bit("PortXmitWait", "QP1Dropped"), Extended: true}
				r.Values[3] = 5
				return r
			}(),
		},
		{
			name: "additional counters: all 64 bits, never saturated",
			pma: fakePMA{caps: mad.PMACapabilities{Mask: mad.PMAExtendedWidth, Mask2: mad.PMAAdditionalPortCounters},
				pce: map[int]mad.PortCountersExtended{3: {
					PortXmitData: 1, PortRcvData: 1, PortXmitPkts: 1, PortRcvPkts: 1, PortUnicastXmitPkts: 1, PortUnicastRcvPkts: 1,
					PortMulticastXmitPkts: 1, PortMulticastRcvPkts: 1, SymbolErrorCounter: 1, LinkErrorRecoveryCounter: 1,
					LinkDownedCounter: 1, PortRcvErrors: 1, PortRcvRemotePhysicalErrors: 1, PortRcvSwitchRelayErrors: 1,
					PortXmitDiscards: 1, PortXmitConstraintErrors: 1, PortRcvConstraintErrors: 1, LocalLinkIntegrityErrors: 1,
					ExcessiveBufferOverrunErrors: 1, VL15Dropped: 1, PortXmitWait: 1, QP1Dropped: 0xffff}}},
			want: func() PortReading {
				r := PortReading{Port: 3, Present: everything, Extended: true, Values: all(1)}
				r.Values[21] = 0xffff
				return r
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fab := &fakeFabric{pmas: map[rdma.LID]*fakePMA{7: &tt.pma}}
			x := newFakeTransactor(fab, time.Second)
			defer x.Close()
			got, err := readPort(context.Background(), x, mad.LIDPath(7), tt.pma.caps, 3)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected reading (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSweep(t *testing.T) {
	caps := mad.PMACapabilities{Mask: mad.PMAExtendedWidth}
	pce := map[int]mad.PortCountersExtended{1: {PortXmitData: 10}, 2: {PortXmitData: 20}, 3: {PortXmitData: 30}}
	tests := []struct {
		name     string
		pmas     map[rdma.LID]*fakePMA
		deadline time.Duration
		// want are the devices' results: ports read, error, timeout.
		want []sweepWant
	}{
		{
			name: "all answer",
			pmas: map[rdma.LID]*fakePMA{1: {caps: caps, pce: pce}, 2: {caps: caps, pce: pce}},
			want: []sweepWant{{Ports: []int{1, 2, 3}}, {Ports: []int{1, 2}}},
		},
		{
			name: "a dead switch is an error, the other is read",
			pmas: map[rdma.LID]*fakePMA{1: {caps: caps, pce: pce, dead: true}, 2: {caps: caps, pce: pce}},
			want: []sweepWant{{Err: true}, {Ports: []int{1, 2}}},
		},
		{
			name:     "a slow switch is a timeout at the scrape's deadline",
			pmas:     map[rdma.LID]*fakePMA{1: {caps: caps, pce: pce}, 2: {caps: caps, pce: pce, delay: 300 * time.Millisecond}},
			deadline: 100 * time.Millisecond,
			want:     []sweepWant{{Ports: []int{1, 2, 3}}, {Err: true, Timeout: true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fab := &fakeFabric{pmas: tt.pmas}
			x := newFakeTransactor(fab, 50*time.Millisecond)
			defer x.Close()
			devices := []*Device{fakeSwitch(0x100, 1, 1, 2, 3), fakeSwitch(0x200, 2, 1, 2)}
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			s := &Sweeper{X: x}
			var got []sweepWant
			for _, r := range s.Sweep(ctx, devices) {
				w := sweepWant{Err: r.Err != nil, Timeout: r.Timeout}
				for _, p := range r.Ports {
					if !p.Read {
						continue
					}
					w.Ports = append(w.Ports, p.Port)
					if p.Values[0] != uint64(10*p.Port) {
						t.Errorf("port %d: PortXmitData %d, want %d", p.Port, p.Values[0], 10*p.Port)
					}
				}
				got = append(got, w)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected results (-want +got):\n%s", diff)
			}
		})
	}
}

type sweepWant struct {
	Ports        []int
	Err, Timeout bool
}

// TestSweepShared checks that scrapes at the same time share one sweep:
// the PMA is asked once per port, whatever the number of scrapes.
func TestSweepShared(t *testing.T) {
	caps := mad.PMACapabilities{Mask: mad.PMAExtendedWidth, Mask2: mad.PMAAdditionalPortCounters}
	fab := &fakeFabric{pmas: map[rdma.LID]*fakePMA{1: {caps: caps}}, wait: make(chan struct{})}
	x := newFakeTransactor(fab, 5*time.Second)
	defer x.Close()
	devices := []*Device{fakeSwitch(0x100, 1, 1, 2, 3)}
	s := &Sweeper{X: x}
	var wg sync.WaitGroup
	results := make([][]*DeviceResult, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.Sweep(context.Background(), devices)
		}()
	}
	// Every scrape has joined before the PMA answers (the first one's
	// ClassPortInfo is held).
	for fab.gets.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	close(fab.wait)
	wg.Wait()
	for i, r := range results {
		if r[0].Err != nil || len(r[0].Ports) != 3 {
			t.Errorf("scrape %d: %d ports, %v", i, len(r[0].Ports), r[0].Err)
		}
	}
	// ClassPortInfo, then one PortCountersExtended per port.
	if got := fab.gets.Load(); got != 4 {
		t.Errorf("%d PerfMgt Gets for 4 scrapes of 3 ports, want 4 (one sweep)", got)
	}
	// A later scrape sweeps again; the capabilities are kept.
	s.Sweep(context.Background(), devices)
	if got := fab.gets.Load(); got != 7 {
		t.Errorf("%d PerfMgt Gets after a second sweep, want 7", got)
	}
}

func TestSweepCancelledJoiner(t *testing.T) {
	// A scrape whose own time runs out returns with what it has; the
	// sweep goes on for the others.
	caps := mad.PMACapabilities{Mask: mad.PMAExtendedWidth}
	fab := &fakeFabric{pmas: map[rdma.LID]*fakePMA{1: {caps: caps, delay: 200 * time.Millisecond}}}
	x := newFakeTransactor(fab, 5*time.Second)
	defer x.Close()
	devices := []*Device{fakeSwitch(0x100, 1, 1)}
	s := &Sweeper{X: x}
	done := make(chan []*DeviceResult)
	go func() { done <- s.Sweep(context.Background(), devices) }()
	for fab.gets.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	short := s.Sweep(ctx, devices)
	if !short[0].Timeout || !errors.Is(short[0].Err, context.DeadlineExceeded) {
		t.Errorf("short scrape: %+v, want a timeout", short[0])
	}
	if long := <-done; long[0].Err != nil || len(long[0].Ports) != 1 {
		t.Errorf("long scrape: %+v, want the port read", long[0])
	}
}
