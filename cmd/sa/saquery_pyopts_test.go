package sa

import (
	"context"
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

// getSA is fakeSA answering SubnAdmGet of a NodeRecord too: the record
// of the LID the template selects, or ERR_NO_RECORDS.
type getSA struct{ *fakeSA }

func (s getSA) handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	h.UnmarshalBinary(req.MAD)
	if h.Method != mad.MethodGet || h.AttrID != mad.AttrNodeRecord {
		return s.fakeSA.handle(req)
	}
	s.reqs = append(s.reqs, req)
	var want mad.NodeRecord
	want.UnmarshalBinary(req.MAD[56:])
	for _, r := range [][]byte{nodeRec(2, 1, 0x100000, "Hca1"), nodeRec(3, 1, 0x100003, "Hca2")} {
		var nr mad.NodeRecord
		nr.UnmarshalBinary(r)
		if nr.LID == want.LID {
			return []mad.Packet{madtest.Reply(req, 0, 56, r)}
		}
	}
	return []mad.Packet{madtest.Reply(req, 0x0300, 56, nil)}
}

// runSaqueryOn is runSaquery against any handler.
func runSaqueryOn(t *testing.T, h madtest.Handler, args ...string) (string, error) {
	t.Helper()
	var o *saqueryOptions
	err := cmdtest.ParseToolArgs(t, "saquery", func(f *cmdutil.Factory) *cobra.Command {
		return newSaqueryCmd(f, func(opts *saqueryOptions) error { o = opts; return nil })
	}, args)
	if err != nil {
		return "", err
	}
	o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
		opts := o.Common.TransactorOptions()
		opts.Timeout = 50 * time.Millisecond
		opts.SA = &madrpc.SAAddress{SMLID: 1}
		return madrpc.NewTransactor(madtest.New(h), opts), &rdma.Port{Number: 1, LID: 2, SMLID: 1}, nil
	}
	o.Common.Ctx = context.Background()
	var out strings.Builder
	o.IO.Out = &out
	err = saqueryRun(o)
	return out.String(), err
}

// TestSaqueryGet: python-rdma's --get asks SubnAdmGet for the one record
// a record query selects, and prints it as the GetTable's would be; it
// goes with record queries only.
func TestSaqueryGet(t *testing.T) {
	table, err := runSaquery(t, newFakeSA(), "NR", "2")
	if err != nil {
		t.Fatal(err)
	}
	sa := getSA{newFakeSA()}
	got, err := runSaqueryOn(t, sa.handle, "--get", "NR", "2")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(table, got); diff != "" {
		t.Errorf("--get NR 2 differs from NR 2 (-want +got):\n%s", diff)
	}
	if len(sa.reqs) != 1 || mad.Method(sa.reqs[0].MAD[3]) != mad.MethodGet {
		t.Errorf("sent %d requests, first method %v; want one SubnAdmGet", len(sa.reqs), mad.Method(sa.reqs[0].MAD[3]))
	}
	// The SA's ERR_NO_RECORDS is a failure, as for any Get.
	if _, err := runSaqueryOn(t, getSA{newFakeSA()}.handle, "--get", "NR", "9"); err == nil || !strings.Contains(err.Error(), "ERR_NO_RECORDS") {
		t.Errorf("--get NR 9: error %v, want ERR_NO_RECORDS", err)
	}
	for _, args := range [][]string{{"--get", "-s"}, {"--get", "-N"}, {"--get", "-g"}, {"--get", "MPR", "::1", "::2"}} {
		_, err := saqueryOpts(t, newFakeSA(), args...)
		cmdtest.CheckParseErr(t, err, "--get asks for one record of a record query")
	}
}

// TestSaqueryPythonRdmaSpellings: -f is -F (python-rdma's spelling of
// the flow label), --no-defaults leaves out the NumbPath of 127
// --src-to-dst selects, and --sa/--sa-path parse as every tool's.
func TestSaqueryPythonRdmaSpellings(t *testing.T) {
	sent := func(args ...string) (mad.SAHeader, mad.PathRecord) {
		t.Helper()
		sa := newFakeSA()
		if _, err := runSaquery(t, sa, args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		req := sa.reqs[len(sa.reqs)-1]
		var h mad.SAHeader
		var pr mad.PathRecord
		h.UnmarshalBinary(req.MAD)
		pr.UnmarshalBinary(req.MAD[56:])
		return h, pr
	}
	type path struct {
		Mask       uint64
		Flow       uint32
		Numb       uint8
		SLID, DLID uint16
	}
	get := func(args ...string) path {
		h, pr := sent(args...)
		return path{Mask: h.ComponentMask, Flow: pr.FlowLabel, Numb: pr.NumbPath, SLID: uint16(pr.SLID), DLID: uint16(pr.DLID)}
	}
	if diff := cmp.Diff(get("-p", "-F", "5"), get("-p", "-f", "5")); diff != "" {
		t.Errorf("-f differs from -F (-F +f):\n%s", diff)
	}
	with, without := get("--src-to-dst", "2:3"), get("--no-defaults", "--src-to-dst", "2:3")
	numbBit := uint64(1) << 12 // PathRecord's NumbPath component
	if with.Mask&numbBit == 0 || with.Numb != 0x7f {
		t.Errorf("--src-to-dst: mask %#x NumbPath %d; want NumbPath 127 selected", with.Mask, with.Numb)
	}
	if without.Mask&numbBit != 0 || without.Numb != 0 || without.SLID != 2 || without.DLID != 3 {
		t.Errorf("--no-defaults --src-to-dst 2:3: %+v; want SLID 2, DLID 3, NumbPath not selected", without)
	}
	if n := get("--no-defaults", "-n", "3", "--src-to-dst", "2:3"); n.Numb != 3 || n.Mask&numbBit == 0 {
		t.Errorf("--no-defaults -n 3 --src-to-dst: %+v; want NumbPath 3 selected", n)
	}
	o, err := saqueryOpts(t, newFakeSA(), "--sa-path", "IBPath(DLID=5, SL=1)", "NR")
	if err != nil {
		t.Fatal(err)
	}
	if !o.Common.ViaSA || o.Common.SAPathArg != "IBPath(DLID=5, SL=1)" {
		t.Errorf("--sa-path: ViaSA %v, SAPathArg %q", o.Common.ViaSA, o.Common.SAPathArg)
	}
	_, err = saqueryOpts(t, newFakeSA(), "--sa-path", "0,1", "NR")
	cmdtest.CheckParseErr(t, err, "is a directed route")
}
