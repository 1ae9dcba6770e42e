package verbs

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSplitSGEs checks python-rdma's rdma_bw split of a message into
// --num-sge entries: blocks of length/n+1 bytes, the last the rest.
func TestSplitSGEs(t *testing.T) {
	tests := []struct {
		length uint32
		n      int
		want   []uint32
	}{
		{1024, 1, nil},
		{1024, 0, nil},
		{1024, 4, []uint32{257, 257, 257, 253}},
		{1000, 3, []uint32{334, 334, 332}},
		{2, 4, []uint32{1, 1}}, // shorter than n: fewer entries
		{0, 4, nil},
		{65536, 2, []uint32{32769, 32767}},
	}
	for _, tt := range tests {
		got := splitSGEs(sendWork{addr: 0x1000, length: tt.length}, tt.n)
		var lens []uint32
		next := uint64(0x1000)
		for _, e := range got {
			if e.addr != next {
				t.Errorf("%d in %d: entry at %#x, want %#x (contiguous)", tt.length, tt.n, e.addr, next)
			}
			next += uint64(e.length)
			lens = append(lens, e.length)
		}
		if diff := cmp.Diff(tt.want, lens); diff != "" {
			t.Errorf("%d bytes in %d: lengths (-want +got):\n%s", tt.length, tt.n, diff)
		}
	}
}

// TestStreamSGEs: Stream hands the driver the split request, and refuses
// more entries than the QP takes.
func TestStreamSGEs(t *testing.T) {
	r := newRig(t)
	r.f.caps = QPCaps{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 2, MaxRecvSGE: 1, MaxInlineData: 64}
	r.qp = must(r.pd.CreateQP(QPConfig{SendCQ: r.cq, RecvCQ: r.cq, Caps: QPCaps{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 2, MaxRecvSGE: 1}}))
	r.connect()
	if _, err := r.qp.Stream(context.Background(), Stream{WR: r.write(), Count: 2, Depth: 2, SignalEvery: 1, SGEs: 2}); err != nil {
		t.Fatal(err)
	}
	base := r.mr.Addr() + 32
	if diff := cmp.Diff([]streamSGE{{base, 9}, {base + 9, 7}}, r.f.sges, cmp.AllowUnexported(streamSGE{})); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "with 3 SGEs: the QP takes up to 2") {
			t.Errorf("3 SGEs on a QP of 2: panic %v", p)
		}
	}()
	r.qp.Stream(context.Background(), Stream{WR: r.write(), Count: 2, Depth: 2, SignalEvery: 1, SGEs: 3})
}
