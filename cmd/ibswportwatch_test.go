package cmd

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

func TestPerlNumber(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 15: "15", 0.5: "0.5", -2: "-2", 1.0 / 3: "0.333333333333333", 1e21: "1e+21", 4294967295: "4294967295"} {
		if got := perlNumber(v); got != want {
			t.Errorf("perlNumber(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestIbswportwatchArgs(t *testing.T) {
	type parsed struct {
		Pause        float64
		Cycles       int
		Bytes, GUID  bool
		Target, Port string
	}
	tests := []struct {
		args    []string
		want    parsed
		wantErr bool
	}{
		{args: []string{"12", "3"}, want: parsed{Pause: 10, Cycles: -1, Target: "12", Port: "3"}},
		{args: []string{"-p", "0.5", "-n", "4", "-b", "-G", "0x0002c903000e0b31", "1"}, want: parsed{Pause: 0.5, Cycles: 4, Bytes: true, GUID: true, Target: "0x0002c903000e0b31", Port: "1"}},
		{args: []string{"-p", "0", "12", "3"}, wantErr: true},
		{args: []string{"-p", "-1", "12", "3"}, wantErr: true},
		{args: []string{"-n", "-2", "12", "3"}, wantErr: true},
		{args: []string{"--json", "12", "3"}, wantErr: true},
		{args: []string{"12"}, wantErr: true},
		{args: []string{"12", "x"}, wantErr: true},
	}
	for _, tt := range tests {
		var got *ibswportwatchOptions
		err := parseToolArgs(t, "ibswportwatch", func(f *Factory) *cobra.Command {
			return newIbswportwatchCmd(f, "ibswportwatch", func(o *ibswportwatchOptions) error { got = o; return nil })
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
		p := parsed{got.Pause, got.Cycles, got.Bytes, got.GUID, got.Target, got.Port}
		if diff := cmp.Diff(tt.want, p); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.args, diff)
		}
	}
}
