package smp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

func TestIbaddr(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		// The local port: the switch's, by LID 2.
		{nil, "GID fe80::20:0 LID start 0x2 end 0x2\n"},
		{[]string{"-g", "2"}, "GID fe80::20:0 \n"},
		{[]string{"-l", "0,1"}, "LID start 0x3 end 0x3\n"},
		{[]string{"-L", "0,1", "1"}, "LID start 3 end 3\n"},
		// --Lid (python-rdma's; -L is --Lid_show) asserts a LID target.
		{[]string{"--Lid", "-l", "2"}, "LID start 0x2 end 0x2\n"},
		{[]string{"--json", "-g", "0,1"}, "{\n  \"gid\": \"fe80::10:1\",\n  \"target\": \"DR path slid 65535; dlid 65535; 0,1\"\n}\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, _, err := runSMPTool(t, "ibaddr", tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIbaddrLidAssertion: --Lid refuses a target that is not a LID.
func TestIbaddrLidAssertion(t *testing.T) {
	for _, target := range []string{"0,1", "0x0002c90300a1b2c4"} {
		err := cmdtest.ParseToolArgs(t, "ibaddr", func(f *cmdutil.Factory) *cobra.Command {
			return newIbaddrCmd(f, func(*ibaddrOptions) error { return nil })
		}, []string{"--Lid", target})
		if cmdutil.ExitCode(err) != cmdutil.ExitUsage {
			t.Errorf("--Lid %s: %v (exit %d), want a usage error", target, err, cmdutil.ExitCode(err))
		}
	}
}
