package perf

import (
	"bytes"
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

// TestPerfqueryPythonSets: python-rdma's counter-set spellings pick the
// attribute infiniband-diags' flag does, and print what it prints.
func TestPerfqueryPythonSets(t *testing.T) {
	for _, tt := range []struct{ py, diags string }{
		{"-F", "--flowctlcounters"},
		{"--flow", "--flowctlcounters"},
		{"--vl-xmit-errs", "--vlxmitflowctlerrors"},
		{"--vl-xmit-wait", "--vlxmitcounters"},
		{"--vl-congestion", "--swportvlcong"},
	} {
		t.Run(tt.py, func(t *testing.T) {
			want, _, err := runPerfquery(t, &perfFake{}, tt.diags, "5", "1")
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := runPerfquery(t, &perfFake{}, tt.py, "5", "1")
			if err != nil {
				t.Fatal(err)
			}
			if want == "" || !strings.HasPrefix(want, "# ") {
				t.Fatalf("%s printed %q, want a counter dump", tt.diags, want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPerfqueryDirect: --Direct (python-rdma's; -D is --xmtdisc) takes a
// DR target and follows it through the SA's LinkRecords to the LID it
// ends at, without --sa, as python-rdma's get_gmp_path does; a LID is not
// a DR path.
func TestPerfqueryDirect(t *testing.T) {
	// The SA knows one link: LID 2 (the local port) port 1 to LID 5.
	sa := &madtest.RMPPResponder{HdrLen: 56, Respond: func(req *mad.Packet) []byte {
		if binary.BigEndian.Uint16(req.MAD[16:]) == uint16(mad.AttrLinkRecord) &&
			binary.BigEndian.Uint16(req.MAD[56:]) == 2 && req.MAD[58] == 1 {
			return madtest.SAResponse(req, 0, 8, []byte{0, 2, 1, 1, 0, 5})
		}
		return madtest.SAResponse(req, 0, 8)
	}}
	fake := &perfFake{caps: mad.PMAXmitWait}
	handle := func(req *mad.Packet) []mad.Packet {
		if mad.Class(req.MAD[1]) == mad.ClassSA {
			return sa.Handle(req)
		}
		return fake.handle(req)
	}
	run := func(args ...string) (string, error) {
		o := cmdtest.ParsedOptions(t, "perfquery", newPerfqueryCmd, args)
		var stdout bytes.Buffer
		o.IO.Out = &stdout
		o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
			opts := o.Common.TransactorOptions()
			opts.Timeout = time.Second
			opts.SA = &madrpc.SAAddress{SMLID: 1, LID: 2}
			return madrpc.NewTransactor(madtest.New(handle), opts), &rdma.Port{Number: 1, LID: 2}, nil
		}
		err := perfqueryRun(o)
		return stdout.String(), err
	}
	want, err := run("5", "1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := run("--Direct", "0,1", "1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("--Direct 0,1 1: unexpected output (-want +got):\n%s", diff)
	}
	if _, err := run("0,1", "1"); err == nil {
		t.Errorf("0,1 1 without --Direct or --sa: no error, want one (infiniband-diags' perfquery takes no DR path)")
	}
	err = cmdtest.ParseToolArgs(t, "perfquery", func(f *cmdutil.Factory) *cobra.Command {
		return newPerfqueryCmd(f, func(*perfqueryOptions) error { return nil })
	}, []string{"--Direct", "5", "1"})
	if err == nil {
		t.Errorf("--Direct 5 1: no error, want a usage error (5 is a LID)")
	}
}
