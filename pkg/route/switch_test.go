package route_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/route"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func TestReadSwitch(t *testing.T) {
	_, x, _ := twoSwitches(t, nil)
	type result struct {
		Desc        string
		Ports       []int
		McastPorts  []int
		BlocksRead  int
		McastBlocks int
	}
	tests := []struct {
		name string
		path mad.Path
		o    route.CollectOptions
		want result
	}{
		// LIDs 1-10 by LID route; the switch at LID 2 is Switch2.
		{"by LID", mad.LIDPath(2), route.CollectOptions{}, result{Desc: "Switch2", Ports: []int{3, 0, 3, 3, 1, 1, 3, 3, 2, 2}, BlocksRead: 1}},
		// Hca1's port 1 is cabled to Switch1's port 1.
		{"by directed route", mad.Path{DR: []uint8{0, 1}}, route.CollectOptions{}, result{Desc: "Switch1", Ports: []int{0, 3, 1, 1, 3, 3, 2, 2, 3, 3}, BlocksRead: 1}},
		{"multicast", mad.LIDPath(1), route.CollectOptions{Multicast: true, End: 0xc01f}, result{Desc: "Switch1", McastPorts: []int{1, 2, 3}, McastBlocks: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := route.ReadSwitch(context.Background(), x, tc.path, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			got := result{Desc: st.Switch.Desc}
			if st.LFT != nil {
				got.BlocksRead = len(st.LFT.Blocks)
				for lid := rdma.LID(1); lid <= 10; lid++ {
					p, _ := st.OutPort(lid)
					got.Ports = append(got.Ports, p)
				}
			}
			if st.MFT != nil {
				got.McastBlocks = len(st.MFT.Blocks)
				got.McastPorts = st.Ports(0xc000)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected tables (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadSwitchErrors(t *testing.T) {
	ff, _, _ := twoSwitches(t, nil)
	// The switch at LID 1 answers everything but LFT block 0.
	x := madrpc.NewTransactor(madtest.New(func(req *mad.Packet) []mad.Packet {
		var h mad.Header
		if h.UnmarshalBinary(req.MAD) == nil && h.AttrID == mad.AttrLinearForwardingTable && h.AttrMod == 0 {
			return nil
		}
		return ff.Handle(req)
	}), madrpc.TransactorOptions{Timeout: 20 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { x.Close() })
	ctx := context.Background()

	_, err := route.ReadSwitch(ctx, x, mad.LIDPath(1), route.CollectOptions{})
	var re *route.ReadError
	var te *madrpc.TimeoutError
	if !errors.As(err, &re) || !errors.As(err, &te) || re.Attr != "LinearForwardingTable" || re.Modifier != 0 {
		t.Errorf("ReadSwitch of a switch whose LFT block 0 times out: %v, want a *ReadError of block 0 wrapping a *madrpc.TimeoutError", err)
	}

	_, err = route.ReadSwitch(ctx, x, mad.LIDPath(3), route.CollectOptions{})
	var nse *route.NotSwitchError
	if !errors.As(err, &nse) || nse.Type != mad.NodeTypeCA {
		t.Errorf("ReadSwitch of an HCA: %v, want a *NotSwitchError of a CA", err)
	}

	ff.Node("Switch2").Dead = true
	_, err = route.ReadSwitch(ctx, x, mad.LIDPath(2), route.CollectOptions{})
	if !errors.As(err, &te) {
		t.Errorf("ReadSwitch of a dead switch: %v, want a *madrpc.TimeoutError", err)
	}
}

// Read one switch's LFT by its LID and ask where each HCA's first LID
// goes.
func ExampleReadSwitch() {
	_, x, _ := twoSwitches(&testing.T{}, nil)
	st, err := route.ReadSwitch(context.Background(), x, mad.LIDPath(2), route.CollectOptions{})
	if err != nil {
		panic(err)
	}
	for _, lid := range []rdma.LID{3, 5, 7, 9} {
		port, _ := st.OutPort(lid)
		fmt.Printf("%s: LID %d out of port %d\n", st.Switch.Desc, lid, port)
	}
	// Output:
	// Switch2: LID 3 out of port 3
	// Switch2: LID 5 out of port 1
	// Switch2: LID 7 out of port 3
	// Switch2: LID 9 out of port 2
}

// TestReadErrorMessage: a block read by LID names the LID route, one by a
// discovery's directed route names the route.
func TestReadErrorMessage(t *testing.T) {
	_, _, fab := twoSwitches(t, nil)
	sw := fab.ByType(mad.NodeTypeSwitch)[0]
	byLID := &subnet.Node{GUID: 0x200001, Desc: "Switch2"}
	tests := []struct {
		err  *route.ReadError
		want string
	}{
		{&route.ReadError{Switch: byLID, At: mad.LIDPath(2), Attr: "LinearForwardingTable", Err: errors.New("timeout")},
			`switch 0x0000000000200001 "Switch2" (Lid 2): timeout`},
		{&route.ReadError{Switch: sw, At: mad.Path{DR: sw.Path}, Attr: "LinearForwardingTable", Err: errors.New("timeout")},
			fmt.Sprintf("switch %s %q (DR path %s): timeout", sw.GUID, sw.Desc, subnet.FormatPath(sw.Path))},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, tc.err.Error()); diff != "" {
			t.Errorf("unexpected message (-want +got):\n%s", diff)
		}
	}
}
