package cmd

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
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
		err := parseToolArgs(t, "ibtracert", func(f *Factory) *cobra.Command {
			return newIbtracertCmd(f, func(o *ibtracertOptions) error { got = o; return nil })
		}, tt.args)
		if tt.wantErr {
			var u *UsageError
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
