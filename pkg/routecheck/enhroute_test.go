package routecheck

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// chassisTopo is a chassis of a leaf A (switch 0) and two spines B1, B2
// (1, 2), all of one system; a leaf D (3) of its own below both spines,
// and a switch Z (4) with no host on A's port 4. Host HA (1000) is on A's
// port 1, HD (1001) on D's port 1.
//
//	HA-1[A]2-1[B1]2-2[D]1-HD
//	     3-1[B2]2-3
//	     4-1[Z]
func chassisTopo() *topoWriter {
	w := newTopoWriter(5, 2)
	w.system = map[int]int{1: 0, 2: 0}
	w.link(0, 1, 1000, 1)
	w.link(0, 2, 1, 1)
	w.link(0, 3, 2, 1)
	w.link(0, 4, 4, 1)
	w.link(1, 2, 3, 2)
	w.link(2, 2, 3, 3)
	w.link(3, 1, 1001, 1)
	return w
}

// TestDesignEnhanced routes chassisTopo with ibdm's enhanced LMC routing.
// At A, HD's LIDs can leave by B1 or B2, both in A's own system: the
// first LID takes the least subscribed port (by system: none recorded
// yet), the second the spine not used yet (by node), the others the least
// subscribed (by subscription). At D, HA's LIDs go out to the chassis,
// another system, each time. Counted by hand per switch for LMC 2:
// A 8 by system, 2 by node, 10 by subscription; B1 and B2 14 and 6 each
// (their routes into A stay in their system); D 20 by system; Z 24 by
// system; and Z's LIDs: 4 by system at A and D, 1 by system and 3 by
// subscription at B1 and B2 (with LMC 1: A 8, 2 and 2; B1, B2 9 and 3
// by subscription each; D, Z 12 by system). No CA's LID leaves A by port
// 4.
func TestDesignEnhanced(t *testing.T) {
	unused := []string{"S0000000000200000/U1/P4"}
	tests := []struct {
		name string
		o    DesignOptions
		want *EnhancedRouting
		// LFT entries of A for HD's LIDs, of D for HA's, of A for D's
		lftAtoHD, lftDtoHA, lftAtoD []uint8
	}{
		{"LMC 2", DesignOptions{LMC: 2, Enhanced: true},
			&EnhancedRouting{BySystem: 90, ByNode: 2, BySubscription: 28, UnusedPorts: unused},
			// D's LIDs count no subscription: the last two go by port 2
			[]uint8{2, 3, 2, 3}, []uint8{2, 3, 2, 3}, []uint8{2, 3, 2, 2}},
		{"LMC 1", DesignOptions{LMC: 1, Enhanced: true},
			&EnhancedRouting{BySystem: 50, ByNode: 2, BySubscription: 8, UnusedPorts: unused},
			[]uint8{2, 3}, []uint8{2, 3}, []uint8{2, 3}},
		// one LID a port: every choice by system; HD's LID comes before
		// D's, so A sends D's out of port 3; no CA's LID takes A's and
		// D's port 3
		{"LMC 0", DesignOptions{Enhanced: true},
			&EnhancedRouting{BySystem: 30, UnusedPorts: []string{"S0000000000200000/U1/P3", "S0000000000200000/U1/P4", "S0000000000200003/U1/P3"}},
			[]uint8{2}, []uint8{2}, []uint8{3}},
		{"not enhanced", DesignOptions{LMC: 1}, nil,
			[]uint8{2, 3}, []uint8{2, 3}, []uint8{2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := chassisTopo()
			topo := readTopo(t, w)
			tc.o.SMNode, tc.o.SMPort = topo.FromNode, 1
			f, res, err := Design(topo, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, res.Enhanced); diff != "" {
				t.Errorf("unexpected enhanced routing (-want +got):\n%s", diff)
			}
			lfts := func(sw, dst int, port int) []uint8 {
				var out []uint8
				base := f.Node(w.guid(dst)).Port(port).BaseLID
				for l := 0; l < 1<<tc.o.LMC; l++ {
					out = append(out, f.Node(w.guid(sw)).LFT(base+l))
				}
				return out
			}
			got := [][]uint8{lfts(0, 1001, 1), lfts(3, 1000, 1), lfts(0, 3, 1)}
			if diff := cmp.Diff([][]uint8{tc.lftAtoHD, tc.lftDtoHA, tc.lftAtoD}, got); diff != "" {
				t.Errorf("unexpected LFT entries (-want +got):\n%s", diff)
			}
		})
	}
}
