package mad_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madtext"
)

// TestAppendMADDump decodes whole MADs: a PMA GetResp of PortCounters, an
// attribute ibtool has no layout of (hex dump of the class data) and MADs
// too short for their header or attribute.
func TestAppendMADDump(t *testing.T) {
	pma := make([]byte, mad.Size)
	(&mad.Header{BaseVersion: 1, MgmtClass: mad.ClassPerf, ClassVersion: 1, Method: mad.MethodGetResp, TID: 9, AttrID: mad.AttrPortCounters}).MarshalTo(pma)
	pma[mad.SMPDataOffset+1] = 3 // PortSelect
	got, err := madtext.AppendMADDump(nil, pma)
	if err != nil {
		t.Fatal(err)
	}
	want := `BaseVersion:.....................1
MgmtClass:.......................0x04 (PerfMgt)
ClassVersion:....................1
Method:..........................0x81 (GetResp)
Status:..........................0x0000
TransactionID:...................0x0000000000000009
AttributeID:.....................0x0012
AttributeModifier:...............0x00000000
# PortCounters
`
	if diff := cmp.Diff(want, string(got)[:min(len(want), len(got))]); diff != "" {
		t.Errorf("PortCounters (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(got), "\nPortSelect:") || !strings.Contains(string(got), ".3\n") {
		t.Errorf("PortCounters: no PortSelect 3 in\n%s", got)
	}

	unknown := make([]byte, mad.Size)
	(&mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSMI, ClassVersion: 1, Method: mad.MethodGetResp, AttrID: 0xff77}).MarshalTo(unknown)
	if got, err := madtext.AppendMADDump(nil, unknown); err != nil || !strings.Contains(string(got), "# attribute 0xff77 of class SMI: not one ibtool decodes; its data:\n0000 0000") {
		t.Errorf("unknown attribute: %v\n%s", err, got)
	}
	for _, m := range [][]byte{pma[:10], pma[:mad.SMPDataOffset+4]} {
		if _, err := madtext.AppendMADDump(nil, m); err == nil {
			t.Errorf("%d bytes: no error", len(m))
		}
	}
}

func FuzzAppendMADDump(f *testing.F) {
	m := make([]byte, mad.Size)
	(&mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSMI, ClassVersion: 1, Method: mad.MethodGetResp, AttrID: mad.AttrNodeInfo}).MarshalTo(m)
	f.Add(m)
	f.Add(m[:30])
	f.Fuzz(func(t *testing.T, m []byte) {
		_, _ = madtext.AppendMADDump(nil, m)
	})
}
