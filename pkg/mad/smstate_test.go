package mad

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestSMStateString(t *testing.T) {
	tests := []struct {
		s    SMState
		want string
	}{
		{SMStateNotActive, "SMINFO_NOTACT"},
		{SMStateDiscovering, "SMINFO_DISCOVER"},
		{SMStateStandby, "SMINFO_STANDBY"},
		{SMStateMaster, "SMINFO_MASTER"},
		{4, "???"},
		{15, "???"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.s.String()); diff != "" {
			t.Errorf("SMState(%d).String() (-want +got):\n%s", uint8(tt.s), diff)
		}
	}
}

func TestLIDRanges(t *testing.T) {
	tests := []struct {
		lid                rdma.LID
		unicast, multicast bool
	}{
		{0, false, false},
		{1, true, false},
		{0xbfff, true, false},
		{0xc000, false, true},
		{0xfffe, false, true},
		{PermissiveLID, false, false},
	}
	for _, tt := range tests {
		got := [2]bool{IsUnicastLID(tt.lid), IsMulticastLID(tt.lid)}
		if diff := cmp.Diff([2]bool{tt.unicast, tt.multicast}, got); diff != "" {
			t.Errorf("LID %#x: [unicast multicast] (-want +got):\n%s", uint16(tt.lid), diff)
		}
	}
}
