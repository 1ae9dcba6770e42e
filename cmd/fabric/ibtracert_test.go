package fabric

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

func TestIbtracertMLIDArg(t *testing.T) {
	tests := []struct {
		args    []string
		want    int // the MLID parsed
		wantErr bool
	}{
		{args: []string{"2", "4"}},
		{args: []string{"-m", "0xc001", "2", "4"}, want: 0xc001},
		{args: []string{"--mlid", "49152", "2", "4"}, want: 0xc000},
		{args: []string{"-m", "0xffff", "2", "4"}, want: 0xffff},
		{args: []string{"-m", "0140000", "2", "4"}, wantErr: true}, // decimal 140000: too big
		{args: []string{"-m", "0xbfff", "2", "4"}, wantErr: true},
		{args: []string{"-m", "0x10000", "2", "4"}, wantErr: true},
		{args: []string{"-m", "c000", "2", "4"}, wantErr: true},
		{args: []string{"-m", "", "2", "4"}, wantErr: true},
	}
	for _, tt := range tests {
		var got *ibtracertOptions
		_, _, err := runWith(t, newIbtracertCmd, func(o *ibtracertOptions) error { got = o; return nil }, tt.args...)
		if tt.wantErr {
			var u *cmdutil.UsageError
			if !errors.As(err, &u) {
				t.Errorf("%q: error %v, want a usage error", tt.args, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got.MLID); diff != "" {
			t.Errorf("%q: MLID (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestIbtracertRun traces routes through the fake's forwarding tables.
func TestIbtracertRun(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "ca-to-ca", args: []string{"3", "9"}},
		{name: "brief", args: []string{"-n", "3", "5"}},
		{name: "switch-to-ca", args: []string{"2", "7"}},
		{name: "dr-source", args: []string{"0,1,3", "3"}},
		{name: "multicast", args: []string{"-m", "0xc000", "3", "9"}},
		{name: "multicast-brief", args: []string{"-n", "-m", "0xc000", "7", "5"}},
		{name: "no-destination", args: []string{"3", "40"}, wantErr: "can't reach the destination port Lid 40"},
		{name: "multicast-unjoined", args: []string{"-m", "0xc001", "3", "9"}, wantErr: "no multicast route of MLID 0xc001"},
	}
	ff := routeFake(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runWith(t, newIbtracertCmd, func(o *ibtracertOptions) error {
				o.Common.Open = cmdtest.NoPort(fakeTransactor(ff))
				return ibtracertRun(o)
			}, tt.args...)
			if !wantRunErr(t, err, errOut, tt.wantErr) {
				return
			}
			cmdtest.CheckSysfsGolden(t, filepath.Join("testdata", "ibtracert", tt.name+".golden"), out)
		})
	}
}
