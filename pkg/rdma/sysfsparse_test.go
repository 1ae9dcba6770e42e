package rdma

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSysfsUint(t *testing.T) {
	tests := []struct {
		in      string
		want    uint64
		wantErr bool
	}{
		{"4: ACTIVE", 4, false},
		{"5: LinkUp", 5, false},
		{"0x5", 5, false},
		{"0xffff", 0xffff, false},
		{"0XaB", 0xab, false},
		{"2.5 Gb/sec (1X SDR)", 2, false},
		{"100 Gb/sec (4X EDR)", 100, false},
		{"0x04010000", 0x04010000, false},
		{"010", 8, false}, // strtoul base 0: octal, as libibumad reads it
		{"08", 0, false},  // octal 0, then a digit that is not octal
		{"0x", 0, false},  // "0", then x
		{"0xg", 0, false},
		{"  \t\n12", 12, false},
		{"+7", 7, false},
		{"-1", math.MaxUint64, false},
		{"99999999999999999999999", math.MaxUint64, false},
		{"-99999999999999999999999", math.MaxUint64, false},
		{"18446744073709551615", math.MaxUint64, false},
		{"", 0, true},
		{"ACTIVE", 0, true},
		{"-", 0, true},
		{" x1", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseSysfsUint(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseSysfsUint(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseSysfsUint(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestParseSysfsGUID(t *testing.T) {
	tests := []struct {
		in      string
		want    GUID
		wantErr bool
	}{
		{"0c42:a103:00a1:b2c4", 0x0c42a10300a1b2c4, false},
		{"0008 f105 0001 0000", 0x0008f10500010000, false},
		{"1:2:3:4", 0x0001000200030004, false},
		{"12345:0:0:0", 0x2345000000000000, false}, // cut to 16 bits, as strtoul & 0xffff
		{"0x12:0:0:0x1", 0x0012000000000001, false},
		{"1:2:3:4:5", 0x0001000200030004, false}, // the rest is ignored
		{"1:2:3", 0, true},
		{"1::3:4", 0, true}, // an empty field has no digit
		{"zz:0:0:0", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseSysfsGUID(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseSysfsGUID(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseSysfsGUID(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseSysfsGID(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"fe80:0000:0000:0000:0c42:a103:00a1:b2c4", "fe80::c42:a103:a1:b2c4", false},
		{"0000:0000:0000:0000:0000:ffff:c0a8:0a05", "::ffff:192.168.10.5", false},
		{"0000:0000:0000:0000:0000:0000:0000:0000", "::", false},
		{"fe80::1", "", true}, // the compressed form is not what sysfs writes
		{"1:2:3:4:5:6:7", "", true},
	}
	for _, tt := range tests {
		got, err := ParseSysfsGID(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseSysfsGID(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && got.String() != tt.want {
			t.Errorf("ParseSysfsGID(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestCString(t *testing.T) {
	tests := []struct {
		in      string
		bufSize int
		want    string
	}{
		{"MT4123\n", 40, "MT4123"},
		{"\n", 20, ""},
		{"", 20, ""},
		{"no newline", 0, "no newline"},
		{"a\nb\n", 0, "a\nb"}, // cut at the last newline
		{"a\nb", 0, "a"},
		{"abc\x00def\n", 0, "abc"},
		{"1.2.3 (build 20240101 long)\n", 20, "1.2.3 (build 202401"},
		{"0123456789012345678\n", 20, "0123456789012345678"},
		{"01234567890123456789\n", 20, "0123456789012345678"},
		{"ab\n0123456789012345678901\n", 20, "ab"},
	}
	for _, tt := range tests {
		if got := CString([]byte(tt.in), tt.bufSize); got != tt.want {
			t.Errorf("CString(%q, %d) = %q, want %q", tt.in, tt.bufSize, got, tt.want)
		}
	}
}

func TestEnumStrings(t *testing.T) {
	got := []string{
		NodeTypeCA.String(), NodeTypeSwitch.String(), NodeTypeRouter.String(), NodeTypeRNIC.String(),
		NodeTypeUnspecified.String(), NodeType(0).String(), NodeType(99).String(),
		PortStateDown.String(), PortStateInit.String(), PortStateArmed.String(), PortStateActive.String(),
		PortState(0).String(), PortState(5).String(), PortState(42).String(),
		PhysPortStateNoChange.String(), PhysPortStatePolling.String(), PhysPortStateLinkUp.String(),
		PhysPortStatePhyTest.String(), PhysPortState(8).String(), PhysPortState(math.MaxUint32).String(),
	}
	want := []string{
		"CA", "Switch", "Router", "iWARP RNIC",
		"unspecified", "NodeType(0)", "NodeType(99)",
		"Down", "Initializing", "Armed", "Active",
		"NoChange", "ActiveDefer", "PortState(42)",
		"No state change", "Polling", "LinkUp",
		"PhyTest", "PhysPortState(8)", "PhysPortState(4294967295)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected names (-want +got):\n%s", diff)
	}
	for nt, ib := range map[NodeType]bool{0: false, 1: true, 2: true, 3: true, 4: false, 7: false} {
		if nt.IsIB() != ib {
			t.Errorf("NodeType(%d).IsIB() = %v, want %v", nt, !ib, ib)
		}
	}
}

func TestFDR10(t *testing.T) {
	tests := []struct {
		rate string
		want bool
	}{
		{"40 Gb/sec (4X FDR10)", true},
		{"10 Gb/sec (1X fdr10)", true},
		{"56 Gb/sec (4X FDR)", false},
		{"40 Gb/sec (4X QDR)", false},
		{"FDR)", false}, // ')' too early to look back five characters
		{"(FDR10)", true},
		{"", false},
		// ibstat reads the rate into 32 bytes: a ')' past byte 31 is not seen.
		{"40 Gb/sec (4X padded to a long FDR10)", false},
	}
	for _, tt := range tests {
		p := &Port{Rate: tt.rate}
		if got := p.FDR10(); got != tt.want {
			t.Errorf("Port{Rate: %q}.FDR10() = %v, want %v", tt.rate, got, tt.want)
		}
	}
}
