package rdma

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

func TestRdmaPairFlags(t *testing.T) {
	tests := []struct {
		server bool
		args   []string
		want   rdmaPairOptions
	}{
		{true, []string{}, rdmaPairOptions{Server: true, Addr: "0.0.0.0", Port: "7471"}},
		{false, []string{}, rdmaPairOptions{Addr: "127.0.0.1", Port: "7471"}},
		{false, []string{"-s", "192.0.2.1", "-p", "7000"}, rdmaPairOptions{Addr: "192.0.2.1", Port: "7000"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, _, _ := cmdutil.NewTestFactory(nil)
			var got *rdmaPairOptions
			c := cmdutil.ToolCommand(f, cmdutil.Tool{Name: "rdma_pair", New: func(f *cmdutil.Factory) *cobra.Command {
				return newRdmaPairCmd(f, tt.server, func(o *rdmaPairOptions) error { got = o; return nil })
			}})
			c.SetArgs(tt.args)
			if err := c.Execute(); err != nil {
				t.Fatal(err)
			}
			got.IO, got.ctx, got.resolve = cmdutil.IOStreams{}, nil, nil
			if diff := cmp.Diff(&tt.want, got, cmp.AllowUnexported(rdmaPairOptions{})); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
		})
	}
	f, _, _ := cmdutil.NewTestFactory(nil)
	c := cmdutil.ToolCommand(f, cmdutil.Tool{Name: "rdma_client", New: func(f *cmdutil.Factory) *cobra.Command { return newRdmaPairCmd(f, false, nil) }})
	c.SetArgs([]string{"extra"})
	if err := c.Execute(); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Errorf("an argument: %v, want a usage error", err)
	}
}
