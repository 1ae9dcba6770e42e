package fabric

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
)

// TestIbrouteRun dumps the fake switches' tables: the text is pinned by
// golden files, the errors by their text.
func TestIbrouteRun(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "unicast", args: []string{"1"}},
		{name: "all", args: []string{"-a", "2"}},
		{name: "brief", args: []string{"-n", "1"}},
		{name: "range", args: []string{"1", "3", "6"}},
		{name: "dr", args: []string{"-D", "0,1"}},
		{name: "multicast", args: []string{"-M", "1"}},
		{name: "multicast-brief", args: []string{"-M", "-n", "2"}},
		{name: "multicast-all-range", args: []string{"-M", "-a", "1", "0xc000", "0xc003"}},
		{name: "not-switch", args: []string{"3"}, wantErr: "Lid 3 is not a switch (NodeType 1)"},
		{name: "unreachable", args: []string{"40"}, wantErr: "Lid 40"},
	}
	ff := routeFake(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runWith(t, newIbrouteCmd, func(o *ibrouteOptions) error {
				o.Common.Open = cmdtest.NoPort(fakeTransactor(ff))
				return ibrouteRun(o)
			}, tt.args...)
			if !wantRunErr(t, err, errOut, tt.wantErr) {
				return
			}
			cmdtest.CheckSysfsGolden(t, filepath.Join("testdata", "ibroute", tt.name+".golden"), out)
		})
	}
}

func TestIbrouteArgs(t *testing.T) {
	tests := []struct {
		args       []string
		start, end int
		wantErr    string
	}{
		{args: []string{"4"}},
		{args: []string{"4", "0x10"}, start: 0x10},
		{args: []string{"4", "16", "0x20"}, start: 16, end: 0x20},
		{args: []string{"4", "0x10000"}, wantErr: "invalid LID"},
		{args: []string{"4", "x"}, wantErr: "invalid LID"},
	}
	for _, tt := range tests {
		var got *ibrouteOptions
		_, _, err := runWith(t, newIbrouteCmd, func(o *ibrouteOptions) error { got = o; return nil }, tt.args...)
		if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
			continue
		}
		if diff := cmp.Diff([2]int{tt.start, tt.end}, [2]int{got.StartLID, got.EndLID}); diff != "" {
			t.Errorf("%q: LID range (-want +got):\n%s", tt.args, diff)
		}
	}
}
