package trace

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// TestDecodeMadLRH: -l takes the packet from its LRH on, as python-rdma's
// decode_mad -l does, and decodes the MAD it carries as without -l.
func TestDecodeMadLRH(t *testing.T) {
	madHex := switch2NodeInfo + strings.Repeat("00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00\n", 7)
	const (
		lrh  = "f0 02 00 02 00 48 00 03\n"             // VL15, LNH IBA local, DLID 2, 72 words, SLID 3
		bth  = "64 00 ff ff 00 00 00 00 00 00 00 07\n" // UD SEND only to QP0, PSN 7
		deth = "00 00 00 00 00 00 00 00\n"             // Q_Key 0, from QP0
		icrc = "12 34 56 78\n"
	)
	run := func(args []string, in string) (int, string, string) {
		f, out, errOut := cmdutil.NewTestFactory(nil)
		f.IO.In = strings.NewReader(in)
		code := cmdutil.RunTool(append([]string{"decode_mad"}, args...), f)
		return code, out.String(), errOut.String()
	}
	_, want, _ := run(nil, madHex)
	for _, c := range []struct {
		args []string
		in   string
	}{
		{[]string{"-l"}, lrh + bth + deth + madHex + icrc},
		{[]string{"--lrh"}, lrh + bth + deth + madHex}, // pasted without the ICRC
		{[]string{"-l", "--umad"}, strings.Repeat("00", 64) + lrh + bth + deth + madHex + icrc},
	} {
		args := c.args
		code, got, errOut := run(args, c.in)
		if code != 0 {
			t.Fatalf("decode_mad %v: exit %d, %s", args, code, errOut)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("decode_mad %v (-want +got):\n%s", args, diff)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"f0 02 00 02", "the packet does not decode"},
		{lrh + "64 00 ff ff 00 00 00 05 00 00 00 07\n" + "00 00 00 00 00 00 00 09\n" + madHex + icrc, "the packet carries no MAD"}, // QP 9 to QP 5
	} {
		if code, _, errOut := run([]string{"-l"}, c.in); code != cmdutil.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("decode_mad -l %.20q: exit %d, %q; want a usage error %q", c.in, code, errOut, c.want)
		}
	}
}
