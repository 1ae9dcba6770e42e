package rdma

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/perftest"
)

// TestPTResult checks a peer's report as a line of rdma_bw's table.
func TestPTResult(t *testing.T) {
	r := perftest.Report{Size: 65536, Iters: 5000, Peak: 43.82, Average: 41.39, MsgRate: 0.000662}
	if diff := cmp.Diff(" 65536      5000             43.82              41.39  \t\t   0.000662\n", string(appendResult(nil, ptResult(r, false)))); diff != "" {
		t.Errorf("unexpected line (-want +got):\n%s", diff)
	}
	line := ptResult(perftest.Report{Size: 1 << 40, Iters: 3, Average: 0.05}, true)
	if line.Size != math.MaxInt32 || line.Unit != "Gb/sec" || !line.accurate {
		t.Errorf("a huge size in Gb/sec: %+v", line)
	}
	if back := ptReportOf(ptResult(r, false)); back != r {
		t.Errorf("report %+v back as %+v", r, back)
	}
}

// TestBwReportRdmaCM checks the settings lines perftest prints
// differently over rdma_cm: rdma_cm QPs, the exchange, and the -R
// server's wait.
func TestBwReportRdmaCM(t *testing.T) {
	tests := []struct {
		name       string
		server     string
		rdmaCM, cm bool
		want       string
	}{
		{"TCP", "h", false, false, " rdma_cm QPs\t : OFF\n Data ex. method : Ethernet\n" + resultLine},
		{"-z", "h", false, true, " rdma_cm QPs\t : OFF\n Data ex. method : rdma_cm\n" + resultLine},
		{"-R client", "h", true, false, " rdma_cm QPs\t : ON\n Data ex. method : rdma_cm\n" + resultLine},
		{"-R server", "", true, false, " rdma_cm QPs\t : ON\n Data ex. method : rdma_cm\n" + resultLine +
			" Waiting for client rdma_cm QP to connect\n Please run the same command with the IB/RoCE interface IP\n" + resultLine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			o := &rdmaBwOptions{Server: tt.server, RDMACM: tt.rdmaCM, CommCM: tt.cm}
			o.IO.Out = &out
			r := &bwReport{o: o, p: bwParams{TxDepth: 128, CQMod: 1}, s: &bwSession{gidIndex: -1, inline: 220}, device: "rxe0"}
			if err := r.begin(); err != nil {
				t.Fatal(err)
			}
			s := out.String()
			from := strings.Index(s, " rdma_cm QPs")
			to := strings.Index(s, " local address")
			if from < 0 || to < from {
				t.Fatalf("no settings lines in\n%s", s)
			}
			if diff := cmp.Diff(tt.want, s[from:to]); diff != "" {
				t.Errorf("unexpected settings (-want +got):\n%s", diff)
			}
		})
	}
}
