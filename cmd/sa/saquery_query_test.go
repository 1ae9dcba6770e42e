package sa

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStrtoulPrefix(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"12", 12, true}, {"12abc", 12, true}, {"0x1f", 31, true}, {"0X1Fz", 31, true},
		{"010", 8, true}, {"0", 0, true}, {"09", 0, true}, {"", 0, false}, {"x", 0, false}, {"0x", 0, false},
	}
	for _, tt := range tests {
		n, ok := strtoulPrefix(tt.in)
		if diff := cmp.Diff([]any{tt.want, tt.ok}, []any{n, ok}); diff != "" {
			t.Errorf("strtoulPrefix(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestSaqueryLIDAndPorts: "lid/a/b" specs, the LID also a node
// description the NodeRecords give.
func TestSaqueryLIDAndPorts(t *testing.T) {
	tests := []struct {
		in      string
		want    []int64
		wantErr string
	}{
		{"3", []int64{3, -1, -1}, ""},
		{"3/1", []int64{3, 1, -1}, ""},
		{"3//0x10", []int64{3, -1, 16}, ""},
		{"Hca2/2/7", []int64{3, 2, 7}, ""},
		{"0x2", []int64{2, -1, -1}, ""},
		{"", nil, `Invalid lid specified: ""`},
		{"70000", nil, `Invalid lid specified: "70000"`},
		{"Nosuch/1", nil, `failed to find lid for "Nosuch": no NodeRecord has that description`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got []int64
			var gotErr string
			o, err := saqueryOpts(t, newFakeSA())
			if err != nil {
				t.Fatal(err)
			}
			x, _, err := o.Common.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			q := &saQuerier{ctx: context.Background(), x: x, o: o}
			lid, a, b, err := q.lidAndPorts(tt.in)
			if err != nil {
				gotErr = err.Error()
			} else {
				got = []int64{int64(lid), a, b}
			}
			if diff := cmp.Diff([]any{tt.want, tt.wantErr}, []any{got, gotErr}); diff != "" {
				t.Errorf("lidAndPorts(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}
