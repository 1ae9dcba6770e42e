package mad

import (
	"testing"
)

func TestResetMask(t *testing.T) {
	var (
		pc       = (&PortCounters{}).Layout()
		pce      = (&PortCountersExtended{}).Layout()
		none     = PMACapabilities{}
		both     = PMACapabilities{Mask: PMAXmitWait | PMAQP1Dropped}
		withWait = PMACapabilities{Mask: PMAXmitWait}
		errWait  = append(append([]string(nil), PortErrorCounters...), "PortXmitWait")
	)
	tests := []struct {
		name  string
		caps  PMACapabilities
		l     *Layout
		names []string
		want  uint64
	}{
		{"PortCounters' error counters", none, pc, PortErrorCounters, 0xfff},
		{"PortXmitWait with the capability", withWait, pc, errWait, 0x10fff},
		{"PortXmitWait without it", none, pc, errWait, 0xfff},
		{"QP1Dropped with it", both, pc, []string{"QP1Dropped"}, 1 << 17},
		{"data counters", none, pc, PortDataCounters, 0xf000},
		{"every counter; unicast ones are not PortCounters'", both, pc, PortCounterNames, 0x3ffff},
		{"extended data counters", none, pce, PortDataCounters, 0x0f},
		{"extended data with unicast and multicast", none, pce, append(append([]string(nil), PortDataCounters...), PortExtendedDataCounters...), 0xff},
		{"extended error counters and PortXmitWait", withWait, pce, errWait, 0x1fff0000},
		{"extended QP1Dropped", both, pce, []string{"QP1Dropped"}, 1 << 29},
		{"PortXmitDiscardDetails: a bit a counter", none, (&PortXmitDiscardDetails{}).Layout(),
			[]string{"PortInactiveDiscards", "PortNeighborMTUDiscards", "PortSwLifetimeLimitDiscards", "PortSwHOQLifetimeLimitDiscards"}, 0xf},
		{"PortRcvErrorDetails: one counter", none, (&PortRcvErrorDetails{}).Layout(), []string{"PortLoopingErrors"}, 1 << 5},
		{"no such counter", both, pc, []string{"PortSelect", "CounterSelect2", "Nothing"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.caps.ResetMask(tt.l, tt.names...); got != tt.want {
				t.Errorf("ResetMask(%s, %v) = %#x, want %#x", tt.l.Name, tt.names, got, tt.want)
			}
		})
	}
}
