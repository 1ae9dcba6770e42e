package cmdutil

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTableRender(t *testing.T) {
	tests := []struct {
		name string
		tty  bool
		want string
	}{
		{"terminal", true, "SRC     PACKETS  NOTE\n" +
			"a       1        x y\n" +
			"longer  22\n"},
		{"piped", false, "a\t1\tx\ty\n" +
			"longer\t22\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			p := NewTable(IOStreams{Out: &out, OutIsTTY: tt.tty}, "Src", "Packets", "Note")
			p.AddRow("a", "1", "x\ty")
			p.AddRow("longer", "22")
			if err := p.Render(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("unexpected table (-want +got):\n%s", diff)
			}
		})
	}
}
