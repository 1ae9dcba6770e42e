package cmd

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrintNode(t *testing.T) {
	topo := `Switch	8 "S-0000000000200001"		# "Switch2" base port 0 lid 3 lmc 0
[3]	"S-0000000000200000"[3]		# "Switch1" lid 1 4xSDR
[1]	"H-0000000000100003"[1](100004) 		# "Hca2" lid 4 4xSDR
Switch	8 "S-0000000000200000"		# "Switch1" base port 0 lid 1 lmc 0
[1]	"H-0000000000100000"[1](100001) 		# "Hca1" lid 2 4xSDR
Ca	2 "H-0000000000100003"		# "Hca2"
[1](100004) 	"S-0000000000200001"[1]		# lid 4 lmc 0 "Switch2" lid 3 4xSDR
Ca	2 "H-0000000000100000"		# "Hca1"
[1](100001) 	"S-0000000000200000"[1]		# lid 2 lmc 0 "Switch1" lid 1 4xSDR
`
	lines := splitLines(topo)
	for _, c := range []struct {
		kind   int
		target string
		want   []string
		found  int
	}{
		// Ports sorted, printed when the next switch starts.
		{1, "Switch2", []string{lines[0], lines[2], lines[1]}, 1},
		// The last switch's ports are never printed.
		{1, "Switch1", []string{lines[3]}, 1},
		{1, "0x0000000000200000", []string{lines[3]}, 1},
		// The last CA's ports are, at the end.
		{0, "Hca1", []string{lines[7], lines[8]}, 1},
		{0, "Hca.", []string{lines[5], lines[6], lines[7], lines[8]}, 2},
		{2, "Hca1", nil, 0},
	} {
		k := nodePrintKinds[c.kind]
		got, found := printNode([]byte(topo), k, c.target, regexp.MustCompile(`[\s"]`+c.target+`[\s"]`))
		var want []string
		for _, l := range c.want {
			want = append(want, l+"\n")
		}
		if diff := cmp.Diff(want, got); diff != "" || found != c.found {
			t.Errorf("%s %s: found %d, want %d; unexpected lines (-want +got):\n%s", k.name, c.target, found, c.found, diff)
		}
	}
}
