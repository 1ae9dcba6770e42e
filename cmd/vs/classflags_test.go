package vs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
)

func TestVendorClassFlags(t *testing.T) {
	tests := []struct {
		name      string
		flags     []string
		args      []string
		wantServe bool
		wantOUI   uint32
		wantErr   string
	}{
		{"defaults", nil, []string{"12"}, false, mad.OUIOpenIB, ""},
		{"-o hex", []string{"-o", "0x2c9"}, []string{"12"}, false, 0x2c9, ""},
		{"-S", []string{"-S"}, nil, true, mad.OUIOpenIB, ""},
		{"-S with a destination", []string{"-S"}, []string{"12"}, false, mad.OUIOpenIB, `-S serves on the local port: no destination ("12")`},
		{"bad -o", []string{"-o", "0x1000000"}, nil, false, 0, "invalid OUI"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v vendorClassFlags
			c := &cobra.Command{Use: "zz"}
			v.add(c)
			if err := c.ParseFlags(tt.flags); err != nil {
				t.Fatal(err)
			}
			serve, err := v.finish(tt.args)
			if tt.wantErr != "" {
				if err == nil || cmdutil.ExitCode(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want a usage error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]any{tt.wantServe, tt.wantOUI}, []any{serve, v.OUI}); diff != "" {
				t.Errorf("unexpected serve, OUI (-want +got):\n%s", diff)
			}
		})
	}
}
