package route_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/route"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// hopLine is a hop as a test compares it: the node, the port entered,
// the port left by before it.
func hopLine(h route.Hop) string {
	return fmt.Sprintf("[%d] -> %s[%d] lid %d", h.OutPort, h.Desc, h.Port(), h.PortInfo.LID)
}

func TestUnicast(t *testing.T) {
	tests := []struct {
		name     string
		hurt     func(*subnettest.Fabric)
		to       rdma.LID
		wantHops []string
		wantTo   string
		wantErr  any
	}{
		{name: "to an HCA", to: 9,
			wantHops: []string{"[1] -> Switch1[1] lid 1", "[3] -> Switch2[3] lid 2", "[2] -> Hca4[1] lid 9"}, wantTo: "Hca4"},
		{name: "to a switch", to: 2,
			wantHops: []string{"[1] -> Switch1[1] lid 1", "[3] -> Switch2[3] lid 2"}, wantTo: "Switch2"},
		{name: "black hole", to: 9, hurt: func(f *subnettest.Fabric) { f.Node("Switch2").LFT[9] = 0xff },
			wantHops: []string{"[1] -> Switch1[1] lid 1"}, wantErr: new(*route.BlackHoleError)},
		{name: "loop", to: 9, hurt: func(f *subnettest.Fabric) { f.Node("Switch2").LFT[9] = 3 },
			wantErr: new(*route.LoopError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, x, _ := twoSwitches(t, tt.hurt)
			tr, err := (&route.Tracer{X: x}).Unicast(context.Background(), mad.DRPath(0), tt.to)
			if tt.wantErr != nil {
				if !errors.As(err, tt.wantErr) {
					t.Fatalf("error %v (%T), want a %T", err, err, tt.wantErr)
				}
				if tt.wantHops == nil {
					return
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range tr.Hops {
				got = append(got, hopLine(h))
			}
			if diff := cmp.Diff(tt.wantHops, got); diff != "" {
				t.Errorf("unexpected hops (-want +got):\n%s", diff)
			}
			if tr.From == nil || tr.From.Desc != "Hca1" {
				t.Errorf("From %+v, want Hca1", tr.From)
			}
			gotTo := ""
			if tr.To != nil {
				gotTo = tr.To.Desc
			}
			if gotTo != tt.wantTo {
				t.Errorf("To %q, want %q", gotTo, tt.wantTo)
			}
		})
	}
}

func TestMulticast(t *testing.T) {
	_, x, _ := twoSwitches(t, nil)
	ctx := context.Background()
	tracer := &route.Tracer{X: x}
	dst, err := tracer.Node(ctx, mad.LIDPath(9))
	if err != nil {
		t.Fatal(err)
	}
	mt, err := tracer.Multicast(ctx, mad.DRPath(0), 0xc000, dst.Info.PortGUID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range mt.End.Route() {
		got = append(got, fmt.Sprintf("[%d] -> %s[%d] target %v", h.FromPort, h.Desc, h.UpPort, h.Target))
	}
	want := []string{"[0] -> Hca1[0] target false", "[1] -> Switch1[1] target false", "[3] -> Switch2[3] target false", "[2] -> Hca4[1] target true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected route (-want +got):\n%s", diff)
	}
	_, err = tracer.Multicast(ctx, mad.DRPath(0), 0xc005, dst.Info.PortGUID)
	var nr *route.NoMcastRouteError
	if !errors.As(err, &nr) || nr.MLID != 0xc005 {
		t.Errorf("MLID 0xc005: error %v, want a *NoMcastRouteError", err)
	}
}

// Trace the route from the local port (a directed route of no hops) to
// LID 9.
func ExampleTracer_Unicast() {
	_, x, _ := twoSwitches(&testing.T{}, nil)
	tr, err := (&route.Tracer{X: x}).Unicast(context.Background(), mad.DRPath(0), 9)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("From %s port %d\n", tr.From.Desc, tr.From.Port())
	for _, h := range tr.Hops {
		fmt.Printf("[%d] -> %s port %d\n", h.OutPort, h.Desc, h.Port())
	}
	// Output:
	// From Hca1 port 1
	// [1] -> Switch1 port 1
	// [3] -> Switch2 port 3
	// [2] -> Hca4 port 1
}
