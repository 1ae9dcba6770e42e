package rdma

import (
	"context"
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

func TestUcmatoseFlags(t *testing.T) {
	tests := []struct {
		args  []string
		want  ucmatoseOptions
		warn  string // what stderr says
		usage string // a usage error containing this
	}{
		{args: []string{}, want: ucmatoseOptions{Format: "name", PortSpace: "tcp", Connections: 1, Count: 10, Size: 100, Port: "7471", ps: rdmacm.PortSpaceTCP}},
		{args: []string{"-s", "192.0.2.1", "-b", "192.0.2.2", "-c", "4", "-C", "0", "-S", "1000", "-p", "7000", "-m", "-t", "0x48", "-a", "14", "-f", "ipv6", "-P", "IB"},
			want: ucmatoseOptions{Server: "192.0.2.1", Bind: "192.0.2.2", Format: "ipv6", PortSpace: "IB", Connections: 4, Count: 0, Size: 1000,
				Port: "7000", Migrate: true, TOS: 0x48, SetTOS: true, AckTimeout: 14, SetAck: true, numeric: true, ps: rdmacm.PortSpaceIB}},
		{args: []string{"-f", "hostname", "-P", "udp"}, want: ucmatoseOptions{Format: "hostname", PortSpace: "udp", Connections: 1, Count: 10, Size: 100, Port: "7471", ps: rdmacm.PortSpaceTCP},
			warn: "Warning: unknown address format\nWarning: unknown port space format\n"},
		{args: []string{"-c", "0"}, usage: `invalid -c connections "0"`},
		{args: []string{"-C", "x"}, usage: `invalid -C message_count "x"`},
		{args: []string{"-S", "-1"}, usage: `invalid -S message_size "-1"`},
		{args: []string{"-t", "256"}, usage: `invalid -t type_of_service "256"`},
		{args: []string{"-a", "32"}, usage: "invalid -a ack_timeout 32: at most 31"},
		{args: []string{"-f", "GID"}, want: ucmatoseOptions{Format: "GID", PortSpace: "tcp", Connections: 1, Count: 10, Size: 100, Port: "7471", numeric: true, gid: true, ps: rdmacm.PortSpaceTCP}},
		{args: []string{"extra"}, usage: "extra"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, _, errOut := cmdutil.NewTestFactory(nil)
			var got *ucmatoseOptions
			c := cmdutil.ToolCommand(f, cmdutil.Tool{Name: "ucmatose", New: func(f *cmdutil.Factory) *cobra.Command {
				return newUcmatoseCmd(f, func(o *ucmatoseOptions) error { got = o; return nil })
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
			if diff := cmp.Diff(&tt.want, got, cmp.AllowUnexported(ucmatoseOptions{}),
				cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".args" }, cmp.Ignore())); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warn, errOut.String()); diff != "" {
				t.Errorf("unexpected stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUcmatoseLookup: addresses and ports resolve as cmatose's
// getaddrinfo does, and a failure carries its code.
func TestUcmatoseLookup(t *testing.T) {
	resolve := func(_ context.Context, host string) (netip.Addr, error) {
		if host == "host1" {
			return netip.MustParseAddr("192.0.2.7"), nil
		}
		return netip.Addr{}, fmt.Errorf("no such host")
	}
	tests := []struct {
		host, port string
		numeric    bool
		want       string
		status     int
	}{
		{"192.0.2.1", "7471", false, "192.0.2.1:7471", 0},
		{"", "7471", false, "[::]:7471", 0},
		{"::0", "9", false, "[::]:9", 0},
		{"host1", "7000", false, "192.0.2.7:7000", 0},
		{"host1", "7000", true, "", -2},
		{"nosuchhost", "7000", false, "", -2},
		{"192.0.2.1", "no-such-service", false, "", -8},
	}
	for _, tt := range tests {
		ut := &ucmaTest{o: &ucmatoseOptions{numeric: tt.numeric, resolve: resolve, ctx: context.Background()}}
		got, err := ut.lookup(tt.host, tt.port)
		if tt.status != 0 {
			if st := ucmaStatus(err); st != tt.status {
				t.Errorf("%s port %s: status %d (%v), want %d", tt.host, tt.port, st, err, tt.status)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("%s port %s: %v, %v; want %s", tt.host, tt.port, got, err, tt.want)
		}
	}
}

// TestUcmatoseExit: cmatose's return status is its exit code: an error
// event's status (a rejection's reason on InfiniBand and RoCE, a
// negative errno's low byte), getaddrinfo's code, -1 for a failed call;
// the error line names what failed.
func TestUcmatoseExit(t *testing.T) {
	rejected := &rdmacm.Error{Op: "connect", Addr: netip.MustParseAddrPort("192.0.2.1:7999"),
		Event: &rdmacm.Event{Type: rdmacm.EventRejected, Status: 8}, Err: syscall.ECONNREFUSED}
	refused := &rdmacm.Error{Op: "connect", Addr: netip.MustParseAddrPort("192.0.2.1:7999"),
		Event: &rdmacm.Event{Type: rdmacm.EventRejected, Status: -111}, Err: syscall.ECONNREFUSED}
	tests := []struct {
		name    string
		err     error
		status  int
		code    int
		summary string
	}{
		{"done", nil, 0, 0, ""},
		{"rejected on RoCE", fmt.Errorf("connection 0: %w", rejected), 8, 8,
			"connection 0: rdma_cm: connect 192.0.2.1:7999: RDMA_CM_EVENT_REJECTED, error 8 (invalid service ID)"},
		{"refused on iWARP", refused, -111, 145, "rdma_cm: connect 192.0.2.1:7999: RDMA_CM_EVENT_REJECTED, error -111 (connection refused)"},
		{"a call failed", &rdmacm.Error{Op: "resolve address", Err: syscall.ENETUNREACH}, -1, 255, "rdma_cm: resolve address: network is unreachable"},
		{"lookup", &ucmaFailure{status: -2, err: fmt.Errorf("x: Name or service not known")}, -2, 254, "x: Name or service not known"},
		{"port down", &verbs.PortDownError{Device: "rxecm0", Port: 1, Event: verbs.EventPortErr}, 3, 3,
			"port 1 of rxecm0 went down (IBV_EVENT_PORT_ERR)"},
		{"port down after a failed receive", fmt.Errorf("%w; rxecm0 CQ 2: ...", &verbs.PortDownError{Device: "rxecm0", Port: 1, Event: verbs.EventPortErr}), 3, 3,
			"port 1 of rxecm0 went down (IBV_EVENT_PORT_ERR); rxecm0 CQ 2: ..."},
	}
	for _, tt := range tests {
		status := 0
		if tt.err != nil {
			status = ucmaStatus(tt.err)
		}
		err := ucmaExit(status, tt.err)
		got := []any{status, cmdutil.ExitCode(err), ""}
		if err != nil {
			got[2] = err.Error()
		}
		if diff := cmp.Diff([]any{tt.status, tt.code, tt.summary}, got); diff != "" {
			t.Errorf("%s: unexpected status, exit code, message (-want +got):\n%s", tt.name, diff)
		}
	}
}
