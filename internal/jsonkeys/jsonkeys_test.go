package jsonkeys

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPaths(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"flat", `{"b":1,"a":"x"}`, []string{"a", "b"}},
		{"nested", `{"r":{"x":1,"l":[{"y":2},{"z":null}]}}`, []string{"r.l[].y", "r.l[].z", "r.x"}},
		{"empty containers", `{"a":[],"o":{}}`, []string{"a[]", "o{}"}},
		{"top array", `[1,2]`, []string{"[]"}},
		{"scalar", `3`, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Paths([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected paths (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{`{"a":`, `{} {}`, ``} {
		if _, err := Paths([]byte(bad)); err == nil {
			t.Errorf("Paths(%q): no error", bad)
		}
	}
}

func TestLeaves(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"a":{"b":1,"c":[{"d":true},{"e":null}]},"empty":[],"none":{}}`), &doc); err != nil {
		t.Fatal(err)
	}
	want := []string{"a.b", "a.c[].d", "a.c[].e"}
	if diff := cmp.Diff(want, Leaves(doc)); diff != "" {
		t.Errorf("unexpected leaves (-want +got):\n%s", diff)
	}
}
