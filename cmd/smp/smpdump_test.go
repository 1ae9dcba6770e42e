package smp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

func TestSmpdump(t *testing.T) {
	tests := []struct {
		args     []string
		want     string
		wantCode int
		wantErr  string
	}{
		// A DR reply's status has the D bit, which smpdump prints as
		// infiniband-diags does.
		{[]string{"-s", "0,1", "0x10"}, "Hca1 HCA-1\nSMP status: 0x8000\n", 0, ""},
		{[]string{"2", "0x20"}, `0000 0000 0020 0000 0000 0000 0000 0077
0000 0007 1300 0000 0000 0000 0000 0000
0000 0000 0000 0000 0000 0000 0000 0000
0000 0000 0000 0000 0000 0000 0000 0000
`, 0, ""},
		// An attribute the node does not have: the data and the status,
		// with a DR SMP's D bit.
		{[]string{"-D", "0", "0x99", "3"}, strings.Repeat("0000 0000 0000 0000 0000 0000 0000 0000\n", 4) + "SMP status: 0x800c\n", 0, ""},
		{[]string{"2", "0x10000"}, "", cmdutil.ExitUsage, `invalid attribute ID "0x10000"`},
		// -G/--Guid (python-rdma's) asserts a port GUID target.
		{[]string{"-G", "2", "0x10"}, "", cmdutil.ExitUsage, `"2"`},
		{[]string{"--Guid", "0,1", "0x10"}, "", cmdutil.ExitUsage, `"0,1"`},
		{[]string{"2", "0x10", "x"}, "", cmdutil.ExitUsage, `invalid attribute modifier "x"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if tt.wantErr != "" {
				err := cmdtest.ParseToolArgs(t, "smpdump", func(f *cmdutil.Factory) *cobra.Command {
					return newSmpdumpCmd(f, func(*smpdumpOptions) error { return nil })
				}, tt.args)
				if cmdutil.ExitCode(err) != tt.wantCode || err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v (exit %d), want exit %d and %q", err, cmdutil.ExitCode(err), tt.wantCode, tt.wantErr)
				}
				return
			}
			got, _, err := runSMPTool(t, "smpdump", tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}
