package fabric

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// TestIbtracertReverseArgs: python-rdma's forms, one address (from this
// port, DR path 0) and -r (each pair the other way, ports-file pairs too).
func TestIbtracertReverseArgs(t *testing.T) {
	pairs := filepath.Join(t.TempDir(), "pairs")
	if err := os.WriteFile(pairs, []byte("5 6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args    []string
		want    [][2]string
		wantErr bool
	}{
		{args: []string{"2", "4"}, want: [][2]string{{"2", "4"}}},
		{args: []string{"-r", "2", "4"}, want: [][2]string{{"4", "2"}}},
		{args: []string{"4"}, want: [][2]string{{"0", "4"}}},
		{args: []string{"--reverse", "4"}, want: [][2]string{{"4", "0"}}},
		{args: []string{"-r", "--ports-file", pairs, "2", "4"}, want: [][2]string{{"4", "2"}, {"6", "5"}}},
		{args: []string{}, wantErr: true},
		{args: []string{"-r"}, wantErr: true},
		{args: []string{"1", "2", "3"}, wantErr: true},
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
		var have [][2]string
		for _, p := range got.Pairs {
			have = append(have, [2]string{p[0].String(), p[1].String()})
		}
		if diff := cmp.Diff(tt.want, have); diff != "" {
			t.Errorf("%q: pairs (-want +got):\n%s", tt.args, diff)
		}
	}
}
