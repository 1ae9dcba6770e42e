package madtext

import (
	"strings"
	"testing"

	"github.com/ibtool/ibtool/pkg/mad"
)

func TestFieldName(t *testing.T) {
	for label, want := range map[string]string{
		"BaseVers": "BaseVersion", "LocalPort": "LocalPortNum", "RespTimeVal": "RespTimeValue",
		"PortXmitData": "PortXmitData", "SystemGuid": "SystemImageGUID",
	} {
		if got, ok := FieldName(label); !ok || got != want {
			t.Errorf("FieldName(%q) = %q, %v; want %q", label, got, ok, want)
		}
	}
	if n, ok := FieldName("NoSuchLabel"); ok {
		t.Errorf("FieldName(NoSuchLabel) = %q", n)
	}
	// A label names one field name across the whole table.
	seen := map[string]string{}
	for _, l := range mad.Layouts {
		for _, f := range l.Fields {
			name := f.Name[strings.LastIndexByte(f.Name, '.')+1:]
			if f.Label == "" {
				continue
			}
			if prev, ok := seen[f.Label]; ok && prev != name {
				t.Errorf("label %q stands for %s and %s", f.Label, prev, name)
			}
			seen[f.Label] = name
		}
	}
}
