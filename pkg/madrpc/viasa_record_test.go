package madrpc

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/mad"
)

// TestViaSARecords checks what the generated layouts give each attribute
// --sa carries: the record asked for, the template's selecting bytes and
// component mask for LID 0x0102 and an attribute modifier, and the
// attribute's place in the record (IBA 15.2.5's record layouts).
func TestViaSARecords(t *testing.T) {
	type want struct {
		Record  mad.AttrID
		Name    string
		Tmpl    []byte // the template's first bytes; the rest is zero
		Mask    uint64
		Off, N  int
		TmplLen int
	}
	tests := []struct {
		attr mad.AttrID
		mod  uint32
		want want
	}{
		{mad.AttrNodeInfo, 0, want{0x11, "NodeRecord", []byte{1, 2}, 1, 4, 40, 108}},
		{mad.AttrNodeDescription, 0, want{0x11, "NodeRecord", []byte{1, 2}, 1, 44, 64, 108}},
		{mad.AttrPortInfo, 0, want{0x12, "PortInfoRecord", []byte{1, 2}, 1, 4, 64, 68}},
		{mad.AttrPortInfo, 3, want{0x12, "PortInfoRecord", []byte{1, 2, 3}, 1 | 1<<1, 4, 64, 68}},
		{mad.AttrSwitchInfo, 0, want{0x14, "SwitchInfoRecord", []byte{1, 2}, 1, 4, 20, 24}},
		{mad.AttrGUIDInfo, 5, want{0x30, "GUIDInfoRecord", []byte{1, 2, 5}, 1 | 1<<1, 8, 64, 72}},
		{mad.AttrPKeyTable, 0x00030201, want{0x33, "PKeyTableRecord", []byte{1, 2, 2, 1, 3}, 1 | 1<<1 | 1<<2, 8, 64, 72}},
		{mad.AttrPKeyTable, 0x0201, want{0x33, "PKeyTableRecord", []byte{1, 2, 2, 1}, 1 | 1<<1, 8, 64, 72}},
		{mad.AttrSLtoVLMappingTable, 0x0403, want{0x13, "SLtoVLMappingTableRecord", []byte{1, 2, 4, 3}, 1 | 1<<1 | 1<<2, 8, 8, 16}},
		{mad.AttrVLArbitrationTable, 0x00020005, want{0x36, "VLArbitrationTableRecord", []byte{1, 2, 5, 2}, 1 | 1<<1 | 1<<2, 8, 64, 72}},
		{mad.AttrLinearForwardingTable, 0x0123, want{0x15, "LFTRecord", []byte{1, 2, 1, 0x23}, 1 | 1<<1, 8, 64, 72}},
		{mad.AttrMulticastForwardingTable, 0x20000105, want{0x17, "MFTRecord", []byte{1, 2, 0x21, 0x05}, 1 | 1<<1 | 1<<3, 8, 64, 72}},
		{mad.AttrSMInfo, 0, want{0x18, "SMInfoRecord", []byte{1, 2}, 1, 4, 21, 28}},
	}
	for _, tt := range tests {
		m, ok := viaSAFor(tt.attr)
		if !ok {
			t.Fatalf("attribute %#04x: no record", uint16(tt.attr))
		}
		rec, mask, err := m.template(0x0102, tt.mod)
		if err != nil {
			t.Fatal(err)
		}
		off, n, err := m.embedded(smpLayout(tt.attr))
		if err != nil {
			t.Fatal(err)
		}
		got := want{m.record.ID, m.recordName(), rec[:len(tt.want.Tmpl)], mask, off, n, len(rec)}
		for _, b := range rec[len(tt.want.Tmpl):] {
			if b != 0 {
				t.Errorf("attribute %#04x: template %x, want zero past %d bytes", uint16(tt.attr), rec, len(tt.want.Tmpl))
				break
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("attribute %#04x mod %#x (-want +got):\n%s", uint16(tt.attr), tt.mod, diff)
		}
	}
	if len(tests) != len(viaSA)+2 {
		t.Errorf("%d attributes tested, %d carried", len(tests)-2, len(viaSA))
	}
}
