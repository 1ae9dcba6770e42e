package rdma

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBwReportLine(t *testing.T) {
	tests := []struct {
		name  string
		st    bwStats
		peer  *bwStats
		gbits bool
		want  string
	}{
		{"MB/sec", bwStats{Size: 65536, Iters: 5000, Elapsed: time.Second, PeakPerMsg: 100000}, nil, false,
			" 65536      5000             625.00             312.50 \t\t   0.005000\n"},
		{"Gb/sec", bwStats{Size: 65536, Iters: 5000, Elapsed: time.Second}, nil, true,
			" 65536      5000             0.00               2.62   \t\t   0.005000\n"},
		{"small Gb/sec in six decimals", bwStats{Size: 2, Iters: 1000, Elapsed: time.Second}, nil, true,
			" 2          1000           0.000000            0.000016            0.001000\n"},
		{"bidirectional adds the peer", bwStats{Size: 1 << 20, Iters: 100, Elapsed: time.Second}, &bwStats{Size: 1 << 20, Iters: 300, Elapsed: 2 * time.Second}, false,
			" 1048576    100              0.00               250.00 \t\t   0.000250\n"},
		{"nothing timed", bwStats{Size: 8, Iters: 0}, nil, false, " 8          0                0.00               0.00   \t\t   0.000000\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(appendResult(nil, tt.st.result(tt.peer, tt.gbits)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected line (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPeakPerMsg(t *testing.T) {
	ms := time.Millisecond
	// Four messages, completions signalled at 1 and 3: the first two took
	// 10 ms each, the last two 2 ms each.
	posted := []time.Duration{0, 1 * ms, 20 * ms, 21 * ms}
	completed := []time.Duration{0, 20 * ms, 0, 24 * ms}
	got := peakPerMsg(posted, completed, []int{1, 3})
	if want := float64(24*ms-20*ms) / 2; got != want {
		t.Errorf("peak %v ns a message, want %v", got, want)
	}
	if got := peakPerMsg(nil, nil, nil); got != 0 {
		t.Errorf("peak of nothing %v", got)
	}
}

func TestBwDestAndHex(t *testing.T) {
	d := &bwDest{LID: 0, QPN: 0x11, PSN: 0xabcdef, RKey: 0x1234, Addr: 0x7f0000001000, GID: [16]byte{0: 254, 1: 128, 15: 7}}
	got := string(appendDest(nil, "local", d, true, false))
	want := " local address: LID 0000 QPN 0x0011 PSN 0xabcdef RKey 0x001234 VAddr 0x007f0000001000\n" +
		" GID: 254:128:00:00:00:00:00:00:00:00:00:00:00:00:00:07\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected address lines (-want +got):\n%s", diff)
	}
	if got := string(appendDest(nil, "remote", d, false, false)); strings.Contains(got, "GID") {
		t.Errorf("a GID line without a GID index: %q", got)
	}
	// ib_write_bw -R's line in the test VM: its exchange's SEND format.
	cm := &bwDest{QPN: 0x12, PSN: 0xe30820, RKey: 0x362, Addr: 0x562caf293000}
	if diff := cmp.Diff(" local address: LID 0000 QPN 0x0012 PSN 0xe30820\n", string(appendDest(nil, "local", cm, false, true))); diff != "" {
		t.Errorf("unexpected rdma_cm address line (-want +got):\n%s", diff)
	}
}

func TestBwChecksum(t *testing.T) {
	if got, want := checksum([]byte("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Errorf("checksum %s, want %s", got, want)
	}
}
