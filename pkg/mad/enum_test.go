package mad

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClassString(t *testing.T) {
	tests := []struct {
		c    Class
		want string
	}{
		{ClassSMI, "SMI"},
		{ClassSMIDirect, "SMI-DR"},
		{ClassSA, "SA"},
		{ClassPerf, "PerfMgt"},
		{ClassBM, "BM"},
		{ClassDevMgt, "DevMgt"},
		{ClassCM, "CM"},
		{ClassSNMP, "SNMP"},
		{ClassCC, "CC"},
		{0x0a, "Vendor1(0x0a)"},
		{0x32, "Vendor2(0x32)"},
		{0x02, "Class(0x02)"},
		{0xff, "Class(0xff)"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("Class(%#x).String() = %q, want %q", uint8(tt.c), got, tt.want)
		}
	}
}

func TestClassQP(t *testing.T) {
	got := map[Class]uint32{}
	for _, c := range []Class{ClassSMI, ClassSMIDirect, ClassSA, ClassPerf, ClassCC, 0x0a, 0x32} {
		got[c] = c.QP()
	}
	want := map[Class]uint32{ClassSMI: 0, ClassSMIDirect: 0, ClassSA: 1, ClassPerf: 1, ClassCC: 1, 0x0a: 1, 0x32: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected QPs (-want +got):\n%s", diff)
	}
}

func TestMethodString(t *testing.T) {
	tests := []struct {
		m        Method
		want     string
		response bool
	}{
		{MethodGet, "Get", false},
		{MethodSet, "Set", false},
		{MethodSend, "Send", false},
		{MethodTrap, "Trap", false},
		{MethodReport, "Report", false},
		{MethodTrapRepress, "TrapRepress", false},
		{MethodGetTable, "GetTable", false},
		{MethodGetTraceTable, "GetTraceTable", false},
		{MethodGetMulti, "GetMulti", false},
		{MethodDelete, "Delete", false},
		{MethodGetResp, "GetResp", true},
		{MethodReportResp, "ReportResp", true},
		{MethodGetTableResp, "GetTableResp", true},
		{MethodGetTraceTableResp, "GetTraceTableResp", true},
		{MethodGetMultiResp, "GetMultiResp", true},
		{MethodDeleteResp, "DeleteResp", true},
		{0x42, "Method(0x42)", false},
		{0xc2, "Method(0xc2)", true},
	}
	for _, tt := range tests {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("Method(%#x).String() = %q, want %q", uint8(tt.m), got, tt.want)
		}
		if got := tt.m.IsResponse(); got != tt.response {
			t.Errorf("Method(%#x).IsResponse() = %v, want %v", uint8(tt.m), got, tt.response)
		}
	}
}

func TestStatusString(t *testing.T) {
	tests := []struct {
		s    Status
		want string
	}{
		{StatusOK, "ok"},
		{DirectionBit, "ok"},
		{StatusBusy, "busy"},
		{StatusRedirect, "redirect required"},
		{StatusBadVersion, "bad version"},
		{StatusMethodUnsupported, "method unsupported"},
		{StatusMethodAttrUnsupported, "method/attribute combination unsupported"},
		{StatusInvalidField, "invalid attribute or modifier value"},
		{0x0010, "reserved code 4"},
		{DirectionBit | StatusInvalidField, "invalid attribute or modifier value"},
		{0x0301, "busy; class-specific 0x0300"},
		{0x0020, "reserved bits 0x0020"},
	}
	for _, tt := range tests {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("Status(%#04x).String() = %q, want %q", uint16(tt.s), got, tt.want)
		}
	}
}

// TestGeneratedEnums checks the generated enums' String against the
// dumper's texts and that JSON keeps them numbers.
func TestGeneratedEnums(t *testing.T) {
	got := []string{
		NodeTypeCA.String(), NodeTypeSwitch.String(), NodeType(7).String(),
		PortStateActive.String(), PhysPortStateLinkUp.String(), LinkDownDefStatePolling.String(),
		LinkWidth4X.String(), LinkWidthEnabled(LinkWidth1X | LinkWidth4X).String(),
		LinkSpeedQDR.String(), LinkSpeedExtEDR.String(), MTU4096.String(), VLCapVL0To7.String(),
	}
	want := []string{
		"Channel Adapter", "Switch", "?(7)?",
		"Active", "LinkUp", "Polling",
		"4X", "1X or 4X",
		"10.0 Gbps", "25.78125 Gbps", "4096", "VL0-7",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected enum texts (-want +got):\n%s", diff)
	}
	set := LinkWidthSupported(LinkWidth1X | LinkWidth12X)
	if !set.Has(LinkWidth12X) || set.Has(LinkWidth4X) {
		t.Errorf("LinkWidthSupported(%d).Has: wrong members", uint8(set))
	}
	b, err := json.Marshal(PortInfo{LinkState: PortStateActive, NeighborMTU: MTU2048})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"linkState":4`, `"neighborMTU":4`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("PortInfo JSON %s lacks %s", b, want)
		}
	}
}

func TestNodeTypeAbbrev(t *testing.T) {
	var got []string
	for _, nt := range []NodeType{0, NodeTypeCA, NodeTypeSwitch, NodeTypeRouter, 4} {
		got = append(got, nt.Abbrev())
	}
	if diff := cmp.Diff([]string{"", "CA", "Switch", "Router", ""}, got); diff != "" {
		t.Errorf("unexpected abbreviations (-want +got):\n%s", diff)
	}
}

// TestPortCapBits checks the capability bit constants against the names
// the dumper prints for them.
func TestPortCapBits(t *testing.T) {
	got := map[string]uint32{}
	for _, bit := range []uint32{PortCapIsSM, PortCapIsSMDisabled, PortCapIsExtendedSpeedsSupported, PortCapIsCapabilityMask2Supported} {
		got[portCapNames[bitIndex(bit)]] = bit
	}
	got[portCap2Names[bitIndex(PortCap2IsPortInfoExtendedSupported)]] = PortCap2IsPortInfoExtendedSupported
	want := map[string]uint32{"IsSM": 1 << 1, "IsSMdisabled": 1 << 10, "IsExtendedSpeedsSupported": 1 << 14,
		"IsCapabilityMask2Supported": 1 << 15, "IsPortInfoExtendedSupported": 1 << 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected capability bits (-want +got):\n%s", diff)
	}
}
