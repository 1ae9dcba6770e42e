package vs

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// viaSALink answers SA queries as an SA that knows one link, LID 2 (the
// local port) port 1 to LID 3, and hands every other MAD to next.
func viaSALink(next madtest.Handler) (madtest.Handler, *madrpc.SAAddress) {
	sa := &madtest.RMPPResponder{HdrLen: 56, Respond: func(req *mad.Packet) []byte {
		if binary.BigEndian.Uint16(req.MAD[16:]) == uint16(mad.AttrLinkRecord) &&
			binary.BigEndian.Uint16(req.MAD[56:]) == 2 && req.MAD[58] == 1 {
			return madtest.SAResponse(req, 0, 8, []byte{0, 2, 1, 1, 0, 3})
		}
		return madtest.SAResponse(req, 0, 8)
	}}
	return func(req *mad.Packet) []mad.Packet {
		if mad.Class(req.MAD[1]) == mad.ClassSA {
			return sa.Handle(req)
		}
		return next(req)
	}, &madrpc.SAAddress{SMLID: 1, LID: 2}
}

// TestDirectTarget: -D/--Direct (python-rdma's) takes a DR target, which
// ibping and ibsysstat follow through the SA's LinkRecords to the LID it
// ends at, as python-rdma's get_gmp_path does; without -D or --sa a DR
// target is refused, and with -D a LID is.
func TestDirectTarget(t *testing.T) {
	open := func(o *cmdutil.CommonOptions, h madtest.Handler) func() (*madrpc.Transactor, *rdma.Port, error) {
		return func() (*madrpc.Transactor, *rdma.Port, error) {
			h, sa := viaSALink(h)
			opts := o.TransactorOptions()
			opts.Timeout = time.Second
			opts.SA = sa
			return madrpc.NewTransactor(madtest.New(h), opts), &rdma.Port{Number: 1, LID: 2}, nil
		}
	}
	sysstat := func(args ...string) (string, error) {
		o := cmdtest.ParsedOptions(t, "ibsysstat", newIbsysstatCmd, args)
		var out strings.Builder
		o.IO.Out = &out
		o.Common.Open = open(&o.Common, openIBServer(mad.ClassOpenIBSysstat, "node1.example"))
		o.Common.Ctx = context.Background()
		err := ibsysstatRun(o)
		return out.String(), err
	}
	ping := func(args ...string) (string, error) {
		o := cmdtest.ParsedOptions(t, "ibping", newIbpingCmd, args)
		var out strings.Builder
		o.IO.Out = &out
		o.Common.Open = open(&o.Common, openIBServer(mad.ClassOpenIBPing, "h"))
		o.Common.Ctx = context.Background()
		err := ibpingRun(o)
		return out.String(), err
	}
	for _, args := range [][]string{{"-D", "0,1", "host"}, {"--Direct", "0,1,", "host"}} {
		got, err := sysstat(args...)
		if err != nil {
			t.Fatalf("ibsysstat %q: %v", args, err)
		}
		if diff := cmp.Diff("node1.example\n", got); diff != "" {
			t.Errorf("ibsysstat %q: unexpected output (-want +got):\n%s", args, diff)
		}
	}
	got, err := ping("-D", "-c", "1", "0,1")
	if err != nil {
		t.Fatalf("ibping -D -c 1 0,1: %v", err)
	}
	if want := "Pong from h (Lid 3): time "; !strings.HasPrefix(got, want) {
		t.Errorf("ibping -D -c 1 0,1: output %q, want it to start %q", got, want)
	}
	if _, err := sysstat("0,1", "host"); err == nil {
		t.Errorf("ibsysstat 0,1 host: no error, want one (a DR target needs -D or --sa)")
	}
	for _, tool := range []string{"ibsysstat", "ibping"} {
		newCmd := map[string]func(*cmdutil.Factory) *cobra.Command{
			"ibsysstat": func(f *cmdutil.Factory) *cobra.Command {
				return newIbsysstatCmd(f, func(*ibsysstatOptions) error { return nil })
			},
			"ibping": func(f *cmdutil.Factory) *cobra.Command {
				return newIbpingCmd(f, func(*ibpingOptions) error { return nil })
			},
		}[tool]
		err := cmdtest.ParseToolArgs(t, tool, newCmd, []string{"-D", "3"})
		if cmdutil.ExitCode(err) != cmdutil.ExitUsage {
			t.Errorf("%s -D 3: %v (exit %d), want a usage error (3 is a LID)", tool, err, cmdutil.ExitCode(err))
		}
	}
}
