package trace

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/madtext"
)

// TestDecodeMadVerbose: python-rdma's -v/--verbosity puts the headers in
// front of the MAD first (the umad header with --umad, the LRH, BTH and
// DETH with -l), -vv also the input in hex; the MAD's own dump follows
// unchanged.
func TestDecodeMadVerbose(t *testing.T) {
	madHex := switch2NodeInfo + strings.Repeat("00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00\n", 7)
	const (
		lrh  = "f0 02 00 02 00 48 00 03\n"
		bth  = "64 00 ff ff 00 00 00 00 00 00 00 07\n"
		deth = "00 00 00 00 00 00 00 00\n"
		// A umad header as the kernel fills it for a received MAD:
		// status 0, QPN 1, Q_Key 0x80010000, LID 5, SL 2, P_Key index 3
		// (host order).
		umadHdr = "00000000 00000000 00000000 00000000 00000140" +
			"00000001 80010000 0005 02 00 00 00 00 00" + "00000000000000000000000000000000" + "00000000" + "0300 000000000000"
	)
	run := func(args []string, in string) (int, string, string) {
		f, out, errOut := cmdutil.NewTestFactory(nil)
		f.IO.In = strings.NewReader(in)
		code := cmdutil.RunTool(append([]string{"decode_mad"}, args...), f)
		return code, out.String(), errOut.String()
	}
	_, plain, _ := run(nil, madHex)
	d := func(label, value string) string { return string(madtext.AppendDotted(nil, label)) + value + "\n" }
	tests := []struct {
		args  []string
		in    string
		heads []string // in this order, before the plain dump
	}{
		{[]string{"-v"}, madHex, nil},
		{[]string{"--verbosity", "--umad"}, umadHdr + madHex, []string{"# umad header\n", d("qpn", "1"), d("qkey", "0x80010000"), d("lid", "5"), d("sl", "2"), d("pkey_index", "3")}},
		{[]string{"-v", "-l"}, lrh + bth + deth + madHex, []string{"# LRH\n", d("VL", "15"), d("DLID", "2"), d("SLID", "3"), "# BTH\n", d("P_Key", "0xffff"), d("PSN", "7"), "# DETH\n", d("SrcQP", "0")}},
		{[]string{"-vv", "-o", "2"}, "ab cd " + madHex, []string{"# input: 256 bytes\n"}},
		{[]string{"-v", "--verbosity"}, madHex, []string{"# input: 256 bytes\n"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, got, errOut := run(tt.args, tt.in)
			if code != 0 {
				t.Fatalf("exit %d, %s", code, errOut)
			}
			head, ok := strings.CutSuffix(got, plain)
			if !ok {
				t.Fatalf("output does not end with the plain dump (-plain +got):\n%s", cmp.Diff(plain, got))
			}
			at := 0
			for _, h := range tt.heads {
				i := strings.Index(head[at:], h)
				if i < 0 {
					t.Fatalf("headers lack %q after byte %d:\n%s", h, at, head)
				}
				at += i + len(h)
			}
			if tt.heads == nil && head != "" {
				t.Errorf("headers %q, want none", head)
			}
		})
	}
	if code, _, errOut := run([]string{"-v", "--json"}, madHex); code != cmdutil.ExitUsage || !strings.Contains(errOut, "give one") {
		t.Errorf("-v --json: exit %d, %q; want a usage error", code, errOut)
	}
}
