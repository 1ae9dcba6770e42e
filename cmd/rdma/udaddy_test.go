package rdma

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdmacm"
)

func TestUdaddyFlags(t *testing.T) {
	tests := []struct {
		args  []string
		want  udaddyOptions
		warn  string
		usage string
	}{
		{args: []string{}, want: udaddyOptions{Format: "name", PortSpace: "udp", Connections: 1, Count: 10, Size: 100, ps: rdmacm.PortSpaceUDP}},
		{args: []string{"-s", "192.0.2.1", "-b", "192.0.2.2", "-c", "4", "-C", "5", "-S", "1000", "-t", "0x48", "-f", "ip", "-P", "ipoib"},
			want: udaddyOptions{Server: "192.0.2.1", Bind: "192.0.2.2", Format: "ip", PortSpace: "ipoib", Connections: 4, Count: 5, Size: 1000,
				TOS: 0x48, SetTOS: true, numeric: true, ps: rdmacm.PortSpaceIPoIB}},
		{args: []string{"-p", "0x2"}, want: udaddyOptions{Format: "name", PortSpace: "udp", Connections: 1, Count: 10, Size: 100, ps: rdmacm.PortSpaceIPoIB}},
		{args: []string{"-P", "tcp", "-f", "x"}, want: udaddyOptions{Format: "x", PortSpace: "tcp", Connections: 1, Count: 10, Size: 100, ps: rdmacm.PortSpaceUDP},
			warn: "Warning: unknown address format\nWarning: unknown port space format\n"},
		{args: []string{"-p", "0x106"}, usage: `invalid -p port space "0x106": want 0x111 (UDP) or 0x2 (IPoIB)`},
		{args: []string{"-c", "-2"}, usage: `invalid -c connections "-2"`},
		{args: []string{"-S", "big"}, usage: `invalid -S message_size "big"`},
		{args: []string{"-t", "0x100"}, usage: `invalid -t type_of_service "0x100"`},
		{args: []string{"-f", "gid"}, want: udaddyOptions{Format: "gid", PortSpace: "udp", Connections: 1, Count: 10, Size: 100, numeric: true, gid: true, ps: rdmacm.PortSpaceUDP}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, _, errOut := cmdutil.NewTestFactory(nil)
			var got *udaddyOptions
			c := cmdutil.ToolCommand(f, cmdutil.Tool{Name: "udaddy", New: func(f *cmdutil.Factory) *cobra.Command {
				return newUdaddyCmd(f, func(o *udaddyOptions) error { got = o; return nil })
			}})
			c.SetArgs(tt.args)
			err := c.Execute()
			if tt.usage != "" {
				var u *cmdutil.UsageError
				if !errors.As(err, &u) || !strings.Contains(err.Error(), tt.usage) {
					t.Fatalf("got %v, want a usage error with %q", err, tt.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.IO, got.ctx, got.resolve = cmdutil.IOStreams{}, nil, nil
			if diff := cmp.Diff(&tt.want, got, cmp.AllowUnexported(udaddyOptions{}),
				cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".args" }, cmp.Ignore())); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warn, errOut.String()); diff != "" {
				t.Errorf("unexpected stderr (-want +got):\n%s", diff)
			}
		})
	}
}
