package rdma

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func TestMckeyFlags(t *testing.T) {
	tests := []struct {
		args  []string
		want  mckeyOptions
		usage string
	}{
		{args: []string{"-m", "239.1.2.3"}, want: mckeyOptions{Group: "239.1.2.3", Connections: 1, Count: 10, Size: 100, ps: rdmacm.PortSpaceUDP}},
		{args: []string{"-m", "239.1.2.3", "-s", "-b", "192.0.2.1", "-c", "2", "-C", "3", "-S", "50", "-p", "0x2", "-o", "-l"},
			want: mckeyOptions{Group: "239.1.2.3", Sender: true, Bind: "192.0.2.1", Connections: 2, Count: 3, Size: 50, SendOnly: true, NoLoopback: true, ps: rdmacm.PortSpaceIPoIB}},
		{args: []string{}, usage: "-m multicast_address is required"},
		{args: []string{"-M", "ff0e::1", "-b", "192.0.2.1"}, want: mckeyOptions{Unmapped: netip.MustParseAddr("ff0e::1"), Bind: "192.0.2.1", Connections: 1, Count: 10, Size: 100, ps: rdmacm.PortSpaceUDP}},
		{args: []string{"-M", "239.1.2.3"}, usage: `invalid -M unmapped_multicast_address "239.1.2.3": want a GID`},
		{args: []string{"-m", "239.1.2.3", "-p", "0x106"}, usage: `invalid -p port space "0x106"`},
		{args: []string{"-m", "239.1.2.3", "-c", "0"}, usage: `invalid -c connections "0"`},
		{args: []string{"-m", "239.1.2.3", "-C", "x"}, usage: `invalid -C message_count "x"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, _, _ := cmdutil.NewTestFactory(nil)
			var got *mckeyOptions
			c := cmdutil.ToolCommand(f, cmdutil.Tool{Name: "mckey", New: func(f *cmdutil.Factory) *cobra.Command {
				return newMckeyCmd(f, func(o *mckeyOptions) error { got = o; return nil })
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
			if diff := cmp.Diff(&tt.want, got, cmp.AllowUnexported(mckeyOptions{}), cmp.Comparer(func(a, b netip.Addr) bool { return a == b }),
				cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".args" }, cmp.Ignore())); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMckeyLeaveDecides: mckey returns the status of leaving its groups
// (-1 for one never joined) after a failed join, but a failed lookup,
// bind or address resolution request at once.
func TestMckeyLeaveDecides(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&ucmaFailure{status: -2, err: fmt.Errorf("x")}, false},
		{&ucmaFailure{status: -22, err: fmt.Errorf("too big")}, true},
		{&rdmacm.Error{Op: "bind", Err: syscall.EADDRNOTAVAIL}, false},
		{&rdmacm.Error{Op: "resolve address", Err: syscall.ENETUNREACH}, false},
		{&rdmacm.Error{Op: "resolve address", Event: &rdmacm.Event{Type: rdmacm.EventAddrError, Status: -110}}, true},
		{&rdmacm.Error{Op: "join multicast", Event: &rdmacm.Event{Type: rdmacm.EventMulticastError, Status: -22}}, true},
		{fmt.Errorf("unable to create QP: %w", syscall.EOPNOTSUPP), true},
		{&verbs.PortDownError{Device: "rxecm1", Port: 1, Event: verbs.EventPortErr}, false},
	}
	for _, tt := range tests {
		if got := mckeyLeaveDecides(tt.err); got != tt.want {
			t.Errorf("%v: leave decides %v, want %v", tt.err, got, tt.want)
		}
	}
}
