package madtext_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madtext"
)

func TestPortInfoAppendDump(t *testing.T) {
	pi := mad.PortInfo{MKey: 0x1122, LID: 12, LinkState: 4}
	tests := []struct {
		name     string
		indent   string
		showKeys bool
		want     []string // lines that must be there
	}{
		{"keys hidden", "", false, []string{"Mkey:............................<not displayed>", "Lid:.............................12", "LinkState:.......................Active"}},
		{"keys shown", "", true, []string{"Mkey:............................0x0000000000001122"}},
		{"indented", "\t\t", false, []string{"\t\tLid:.............................12"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(madtext.AppendPortInfo(nil, &pi, tt.indent, tt.showKeys))
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if len(lines) != len(pi.Layout().Fields) {
				t.Errorf("%d lines, want one per field (%d)", len(lines), len(pi.Layout().Fields))
			}
			var missing []string
			for _, w := range tt.want {
				if !strings.Contains(got, w+"\n") {
					missing = append(missing, w)
				}
			}
			if diff := cmp.Diff([]string(nil), missing); diff != "" {
				t.Errorf("lines missing from\n%s(-want +got):\n%s", got, diff)
			}
		})
	}
}
