package route_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/route"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// twoSwitches is ibsim's two-switch example on the in-memory fabric with
// its forwarding tables filled (every LID by a shortest path; MLID 0xc000
// joined by ports 1, 2 and 3 of each switch), seen from Hca1, and the
// fabric discovered on it. The LIDs are Switch1 1, Switch2 2, Hca1 3-4,
// Hca2 5-6, Hca3 7-8, Hca4 9-10.
func twoSwitches(t testing.TB, hurt func(*subnettest.Fabric)) (*subnettest.Fabric, *madrpc.Transactor, *subnet.Fabric) {
	t.Helper()
	data, err := os.ReadFile("../../internal/simfabric/testdata/net.2sw2path4hca")
	if err != nil {
		t.Fatal(err)
	}
	ff, err := subnettest.FromNet(string(data), "Hca1")
	if err != nil {
		t.Fatal(err)
	}
	ff.Route()
	ff.Node("Switch1").Join(0xc000, 1, 2, 3)
	ff.Node("Switch2").Join(0xc000, 1, 2, 3)
	if hurt != nil {
		hurt(ff)
	}
	x := madrpc.NewTransactor(ff.Transport(), madrpc.TransactorOptions{Timeout: 20 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { x.Close() })
	fab, err := subnet.Discover(context.Background(), x, subnet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ff, x, fab
}

func TestCollectUnicast(t *testing.T) {
	_, x, fab := twoSwitches(t, nil)
	tables, err := route.Collect(context.Background(), x, fab.ByType(mad.NodeTypeSwitch), route.CollectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int{}
	for _, st := range tables.Switches {
		if len(st.Errs) > 0 {
			t.Errorf("%s: %v", st.Switch.Desc, st.Errs)
		}
		var ports []int
		for lid := rdma.LID(1); lid <= 10; lid++ {
			p, ok := st.OutPort(lid)
			if !ok {
				p = -1
			}
			ports = append(ports, p)
		}
		got[st.Switch.Desc] = ports
	}
	// Each switch's own LID leaves by port 0; the HCAs' two LIDs each by
	// the port towards them.
	want := map[string][]int{
		"Switch1": {0, 3, 1, 1, 3, 3, 2, 2, 3, 3},
		"Switch2": {3, 0, 3, 3, 1, 1, 3, 3, 2, 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected out ports of LIDs 1-10 (-want +got):\n%s", diff)
	}
}

func TestCollectMulticast(t *testing.T) {
	_, x, fab := twoSwitches(t, nil)
	tables, err := route.Collect(context.Background(), x, fab.ByType(mad.NodeTypeSwitch), route.CollectOptions{Multicast: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][][]int{}
	for _, st := range tables.Switches {
		got[st.Switch.Desc] = [][]int{st.Ports(0xc000), st.Ports(0xc001), st.Ports(5)}
	}
	want := map[string][][]int{"Switch1": {{1, 2, 3}, nil, nil}, "Switch2": {{1, 2, 3}, nil, nil}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected ports of MLIDs 0xc000, 0xc001 and LID 5 (-want +got):\n%s", diff)
	}
}

func TestCollectReadError(t *testing.T) {
	ff, x, fab := twoSwitches(t, nil)
	ff.Node("Switch2").Dead = true
	tables, err := route.Collect(context.Background(), x, fab.ByType(mad.NodeTypeSwitch), route.CollectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range tables.Switches {
		switch st.Switch.Desc {
		case "Switch1":
			if len(st.Errs) != 0 {
				t.Errorf("Switch1: unexpected errors %v", st.Errs)
			}
		case "Switch2":
			var re *route.ReadError
			var te *madrpc.TimeoutError
			if len(st.Errs) == 0 || !errors.As(st.Errs[0], &re) || !errors.As(st.Errs[0], &te) || re.Attr != "LinearForwardingTable" {
				t.Errorf("Switch2: errors %v, want a *ReadError of LinearForwardingTable wrapping a *mad.TimeoutError", st.Errs)
			}
			if _, ok := st.OutPort(3); ok {
				t.Errorf("Switch2: OutPort(3) found in a table not read")
			}
		}
	}
}

func TestLFTRange(t *testing.T) {
	tests := []struct {
		start, end, top int
		want            [3]any
	}{
		{0, 0, 10, [3]any{0, 10, false}},
		{2, 5, 10, [3]any{2, 5, false}},
		{0, 20, 10, [3]any{0, 10, false}},
		{0, 0, 0xc000, [3]any{0, 0xbfff, true}},
	}
	for _, tt := range tests {
		s, e, tr := route.LFTRange(tt.start, tt.end, tt.top)
		if diff := cmp.Diff(tt.want, [3]any{s, e, tr}); diff != "" {
			t.Errorf("LFTRange(%d, %d, %d) (-want +got):\n%s", tt.start, tt.end, tt.top, diff)
		}
	}
	if f, l := route.LFTBlocks(0, 64); f != 0 || l != 0 {
		t.Errorf("LFTBlocks(0, 64) = %d, %d; want 0, 0 (an end at a multiple of 64 leaves its block out)", f, l)
	}
}

func TestMFTRange(t *testing.T) {
	type result struct {
		S, E int
		W    route.MFTRangeWarnings
	}
	tests := []struct {
		start, end, capacity, top int
		all                       bool
		want                      result
	}{
		{0, 0, 0x200, 0xc010, false, result{0xc000, 0xc010, route.MFTRangeWarnings{}}},
		{0, 0, 0x200, 0xc010, true, result{0xc000, 0xc1ff, route.MFTRangeWarnings{}}},
		{5, 0, 0x200, 0, false, result{0xc000, 0xc1ff, route.MFTRangeWarnings{IllegalStart: true}}},
		{0, 0, 0x200, 5, false, result{0xc000, 0xc1ff, route.MFTRangeWarnings{IllegalTop: true}}},
		{0, 0, 0x4000, 0, false, result{0xc000, 0xfffe, route.MFTRangeWarnings{IllegalEnd: true, End: 0xffff}}},
	}
	for _, tt := range tests {
		s, e, w := route.MFTRange(tt.start, tt.end, tt.capacity, tt.top, tt.all)
		if diff := cmp.Diff(tt.want, result{s, e, w}); diff != "" {
			t.Errorf("MFTRange(%#x, %#x, %#x, %#x, %v) (-want +got):\n%s", tt.start, tt.end, tt.capacity, tt.top, tt.all, diff)
		}
	}
}
