package endport

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDRPath(t *testing.T) {
	max := "0" + strings.Repeat(",255", 63)
	maxPath := append(DRPath{0}, []uint8(strings.Repeat("\xff", 63))...)
	tests := []struct {
		in   string
		want DRPath
		hops int
		str  string
	}{
		{"0", DRPath{0}, 0, "0"},
		{"000", DRPath{0}, 0, "0"},
		{"0,1", DRPath{0, 1}, 1, "0,1"},
		{"0,1,3", DRPath{0, 1, 3}, 2, "0,1,3"},
		{"0,0,0", DRPath{0, 0, 0}, 2, "0,0,0"},
		{"0,010,0255", DRPath{0, 10, 255}, 2, "0,10,255"}, // never octal
		{"0,", DRPath{0}, 0, "0"},                         // python-rdma's trailing comma
		{"0,1,", DRPath{0, 1}, 1, "0,1"},
		{"0,1,3,", DRPath{0, 1, 3}, 2, "0,1,3"},
		{max + ",", maxPath, 63, max},
		{max, maxPath, 63, max},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDRPath(tt.in)
			if err != nil {
				t.Fatalf("ParseDRPath(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected path (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.hops, got.Hops()); diff != "" {
				t.Errorf("unexpected Hops (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.str, got.String()); diff != "" {
				t.Errorf("unexpected String (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDRPathErrors(t *testing.T) {
	const form = "want port numbers 0 to 255 separated by commas, starting with 0, such as 0,1,3"
	tests := []struct{ in, err string }{
		{"", `invalid DR path "": empty; ` + form},
		{"0 ", `invalid DR path "0 ": contains whitespace; ` + form},
		{"0,\t1", `invalid DR path "0,\t1": contains whitespace; ` + form},
		{"1", `invalid DR path "1": must start with 0, the local port (did you mean 0,1?)`},
		{"1,2", `invalid DR path "1,2": must start with 0, the local port (did you mean 0,1,2?)`},
		{",", `invalid DR path ",": no port numbers; ` + form},
		{"0,1,,", `invalid DR path "0,1,,": empty entry 2; ` + form},
		{"0,,", `invalid DR path "0,,": empty entry 1; ` + form},
		{",0", `invalid DR path ",0": empty entry 0; ` + form},
		{"1,2,", `invalid DR path "1,2,": must start with 0, the local port (did you mean 0,1,2?)`},
		{"0,1, ", `invalid DR path "0,1, ": contains whitespace; ` + form},
		{"0,,1", `invalid DR path "0,,1": empty entry 1; ` + form},
		{"0,256", `invalid DR path "0,256": entry 1 is 256; a port number is 0 to 255`},
		{"0,a", `invalid DR path "0,a": entry 1 "a" is not a decimal port number`},
		{"0;1", `invalid DR path "0;1": entry 0 "0;1" is not a decimal port number`},
		{"0" + strings.Repeat(",1", 64), `invalid DR path "0` + strings.Repeat(",1", 64) + `": 64 hops; at most 63 fit in an SMP`},
		{"0" + strings.Repeat(",1", 64) + ",", `invalid DR path "0` + strings.Repeat(",1", 64) + `,": 64 hops; at most 63 fit in an SMP`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDRPath(tt.in)
			if diff := cmp.Diff(tt.err, errText(err)); diff != "" {
				t.Errorf("ParseDRPath(%q) = %v: unexpected error (-want +got):\n%s", tt.in, got, diff)
			}
		})
	}
}

func TestDRPathJSON(t *testing.T) {
	type doc struct {
		Path DRPath `json:"path"`
	}
	b, err := json.Marshal(doc{DRPath{0, 1, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"path":"0,1,3"}`, string(b)); diff != "" {
		t.Errorf("unexpected JSON (-want +got):\n%s", diff)
	}
	var back doc
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(DRPath{0, 1, 3}, back.Path); diff != "" {
		t.Errorf("unexpected path (-want +got):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`{"path":"1,2"}`), &back); err == nil {
		t.Errorf("unmarshaling 1,2: no error")
	}
}
