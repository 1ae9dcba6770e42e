package mad

import "testing"

// TestNamedFormats checks the named formats against libibmad's dump.c
// behaviour, including its text for values outside the spec.
func TestNamedFormats(t *testing.T) {
	tests := []struct {
		f    Format
		v    uint32
		want string
	}{
		{FormatNodeType, 2, "Switch"},
		{FormatNodeType, 7, "?(7)?"},
		{FormatLinkWidth, 2, "4X"},
		{FormatLinkWidth, 16, "2X"},
		{FormatLinkWidth, 3, "undefined (3)"},
		{FormatLinkWidthEnabled, 3, "1X or 4X"},
		{FormatLinkWidthEnabled, 0, "undefined (0)"},
		{FormatLinkWidthEnabled, 0x22, "4X or undefined (34)"},
		{FormatLinkWidthSupported, 3, "1X or 4X"},
		{FormatLinkWidthSupported, 2, "4X (IBA extension)"},
		{FormatLinkWidthSupported, 0, "undefined (0) (IBA extension)"},
		{FormatLinkWidthSupported, 0x40, "undefined (64)"},
		{FormatLinkSpeed, 4, "10.0 Gbps"},
		{FormatLinkSpeed, 0, "Extended speed"},
		{FormatLinkSpeed, 3, "undefined (3)"},
		{FormatLinkSpeedSupported, 7, "2.5 Gbps or 5.0 Gbps or 10.0 Gbps"},
		{FormatLinkSpeedEnabled, 5, "2.5 Gbps or 10.0 Gbps"},
		{FormatLinkSpeedEnabled, 2, "5.0 Gbps (IBA extension)"},
		{FormatLinkSpeedEnabled, 0, "undefined (0) (IBA extension)"},
		{FormatLinkSpeedEnabled, 8, "undefined (8)"},
		{FormatLinkSpeedEnabled, 9, "2.5 Gbps or undefined (9)"},
		{FormatLinkSpeedExt, 0, "No Extended Speed"},
		{FormatLinkSpeedExt, 2, "25.78125 Gbps"},
		{FormatLinkSpeedExt, 3, "undefined (3)"},
		{FormatLinkSpeedExtSupported, 0, "0"},
		{FormatLinkSpeedExtSupported, 3, "14.0625 Gbps or 25.78125 Gbps"},
		{FormatLinkSpeedExtSupported, 16, "undefined (16)"},
		{FormatLinkSpeedExtEnabled, 30, "Extended link speeds disabled"},
		{FormatLinkSpeedExtEnabled, 17, "14.0625 Gbps or undefined (17)"},
		{FormatPortState, 4, "Active"},
		{FormatPortState, 9, "?(9)"},
		{FormatPhysPortState, 5, "LinkUp"},
		{FormatPhysPortState, 8, "?(8)"},
		{FormatLinkDownDefState, 2, "Polling"},
		{FormatMTU, 4, "2048"},
		{FormatMTU, 0, "?(0)"},
		{FormatVLCap, 4, "VL0-7"},
		{FormatOperVLs, 0, "No change"},
		{FormatOperVLs, 6, "?(6)"},
		{FormatPortCapMask, 0, "0x0"},
		{FormatPortCapMask, 0x0250084a, "0x250084a\n\t\t\t\tIsSM\n\t\t\t\tIsTrapSupported\n\t\t\t\tIsSLMappingSupported\n\t\t\t\tIsSystemImageGUIDsupported\n\t\t\t\tIsVendorClassSupported\n\t\t\t\tIsCapabilityMaskNoticeSupported\n\t\t\t\tIsClientRegistrationSupported"},
		{FormatPortCapMask2, 0x3, "0x3\n\t\t\t\tIsSetNodeDescriptionSupported\n\t\t\t\tIsPortInfoExtendedSupported"},
	}
	for _, tt := range tests {
		if got := string(appendNamed(nil, tt.f, tt.v)); got != tt.want {
			t.Errorf("format %d of %d = %q, want %q", tt.f, tt.v, got, tt.want)
		}
		if got := tt.f.Text(tt.v); got != tt.want {
			t.Errorf("Format(%d).Text(%d) = %q, want %q", tt.f, tt.v, got, tt.want)
		}
	}
}

func TestHexFormats(t *testing.T) {
	data := []byte{0xab, 0xcd, 0xef, 0x01, 0x02, 0x03, 0x04, 0x05}
	tests := []struct {
		f    Field
		want string
	}{
		{Field{Width: 4, Format: FormatHex}, "0x0a"},
		{Field{Width: 24, Format: FormatHex}, "0xabcdef"},
		{Field{Width: 27, DumpOffset: 5, Format: FormatHex}, "0x03cdef01"},
		{Field{Width: 64, Format: FormatHex}, "0xabcdef0102030405"},
		{Field{Width: 64, Format: FormatRHex}, "abcdef0102030405"},
		{Field{Width: 16, DumpOffset: 16, Format: FormatUint}, "61185"},
		{Field{Width: 32, DumpOffset: 32, Format: FormatArray}, "02030405"},
	}
	for _, tt := range tests {
		if got := string(tt.f.AppendValue(nil, data)); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.f, got, tt.want)
		}
	}
}
