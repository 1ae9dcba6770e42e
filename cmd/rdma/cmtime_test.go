package rdma

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func TestCmtimeFlags(t *testing.T) {
	tests := []struct {
		args  []string
		want  cmtimeOptions
		usage string
	}{
		{args: []string{}, want: cmtimeOptions{Connections: 100, Port: "7471", Retries: 2, Timeout: 2 * time.Second}},
		{args: []string{"-s", "192.0.2.1", "-b", "192.0.2.2", "-c", "5", "-p", "7000", "-r", "0", "-t", "500"},
			want: cmtimeOptions{Server: "192.0.2.1", Bind: "192.0.2.2", Connections: 5, Port: "7000", Retries: 0, Timeout: 500 * time.Millisecond}},
		{args: []string{"-c", "0"}, usage: `invalid -c connections "0"`},
		{args: []string{"-r", "8"}, usage: `invalid -r retries "8": want a decimal number from 0 to 7`},
		{args: []string{"-t", "x"}, usage: `invalid -t timeout_ms "x"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, _, _ := cmdutil.NewTestFactory(nil)
			var got *cmtimeOptions
			c := cmdutil.ToolCommand(f, cmdutil.Tool{Name: "cmtime", New: func(f *cmdutil.Factory) *cobra.Command {
				return newCmtimeCmd(f, func(o *cmtimeOptions) error { got = o; return nil })
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
			if diff := cmp.Diff(&tt.want, got, cmp.AllowUnexported(cmtimeOptions{}),
				cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".args" }, cmp.Ignore())); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCmtimeTable: cmtime's table, its layout byte for byte (an
// rdmacm-utils cmtime -c 2 client's header and row format), from spans
// of two connections; a step no connection finished shows cmtime's
// untouched minimum (999999999. in a C float: 1000000000, which fills
// the column), and the bind row only with -b.
func TestCmtimeTable(t *testing.T) {
	t0 := time.Unix(1000, 0)
	span := func(from, to time.Duration) cmSpan { return cmSpan{t0.Add(from), t0.Add(to)} }
	var ts cmTimes
	ts.nodes = make([][cmStepCount]cmSpan, 2)
	ts.steps[cmStepCreateID] = span(0, 30*time.Microsecond)
	ts.nodes[0][cmStepCreateID] = span(0, 10*time.Microsecond)
	ts.nodes[1][cmStepCreateID] = span(10*time.Microsecond, 30*time.Microsecond)
	ts.steps[cmStepConnect] = span(0, 3500*time.Microsecond)
	ts.nodes[0][cmStepConnect] = span(0, 3500*time.Microsecond)
	ts.nodes[1][cmStepConnect] = span(0, 1250*time.Microsecond)
	ts.steps[cmStepResolveAddr] = cmSpan{start: t0} // started, never ended
	var b bytes.Buffer
	ts.writeTable(&b, false)
	want := `step              total ms     max ms     min us  us / conn
create id    :        0.03       0.02      10.00      15.00
resolve addr :        0.00       0.001000000000.00       0.00
resolve route:        0.00       0.001000000000.00       0.00
create qp    :        0.00       0.001000000000.00       0.00
connect      :        3.50       3.50    1250.00    1750.00
disconnect   :        0.00       0.001000000000.00       0.00
destroy      :        0.00       0.001000000000.00       0.00
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("unexpected table (-want +got):\n%s", diff)
	}
	b.Reset()
	ts.writeTable(&b, true)
	if !strings.Contains(b.String(), "\nbind addr    :        0.00") {
		t.Errorf("no bind row with -b:\n%s", b.String())
	}
}

// TestSyncStatus: librdmacm's synchronous calls fail with -1 whatever
// event failed them (exit 255), an address lookup with its code, a
// port gone down with 3.
func TestSyncStatus(t *testing.T) {
	rejected := &rdmacm.Error{Op: "connect", Event: &rdmacm.Event{Type: rdmacm.EventRejected, Status: 8}, Err: syscall.ECONNREFUSED}
	for _, tt := range []struct {
		err  error
		want int
	}{
		{rejected, -1},
		{fmt.Errorf("rdma_connect: %w", rejected), -1},
		{&ucmaFailure{status: -2, err: fmt.Errorf("x")}, -2},
		{&verbs.PortDownError{Device: "rxecm0", Port: 1, Event: verbs.EventPortErr}, 3},
		{fmt.Errorf("%w; rxecm0 CQ 1: ...", &verbs.PortDownError{Device: "rxecm0", Port: 1, Event: verbs.EventPortErr}), 3},
	} {
		if got := syncStatus(tt.err); got != tt.want {
			t.Errorf("%v: status %d, want %d", tt.err, got, tt.want)
		}
	}
}
