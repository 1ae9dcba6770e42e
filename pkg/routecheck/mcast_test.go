package routecheck

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ring3 is a ring of three switches (GUIDs 0x201..0x203, LIDs 1..3), port
// 1 of each linked to port 2 of the next, a CA (LIDs 4..6) on each port 3,
// every LID routed by the shortest path; mfts are each switch's ports of
// MLID 0xc001.
func ring3(t *testing.T, mfts [3][]int) *Fabric {
	t.Helper()
	f := New(0)
	for i := 0; i < 3; i++ {
		f.AddNode(uint64(0x201+i), uint64(0x201+i), Switch, 8)
		f.AddNode(uint64(0x101+i), uint64(0x101+i), CA, 1)
	}
	for i := 0; i < 3; i++ {
		next := (i + 1) % 3
		must(t, f.Connect(Endpoint{Node: uint64(0x201 + i), Port: 1, LID: 1 + i}, Endpoint{Node: uint64(0x201 + next), Port: 2, LID: 1 + next}))
		must(t, f.Connect(Endpoint{Node: uint64(0x201 + i), Port: 3, LID: 1 + i}, Endpoint{Node: uint64(0x101 + i), Port: 1, LID: 4 + i}))
	}
	for i := 0; i < 3; i++ {
		sw := f.Node(uint64(0x201 + i))
		for j := 0; j < 3; j++ {
			port := uint8(0) // to itself
			switch (j - i + 3) % 3 {
			case 1:
				port = 1 // the next switch
			case 2:
				port = 2 // the previous one
			}
			must(t, f.SetLFT(sw, 1+j, port))
			if j == i {
				port = 3
			}
			must(t, f.SetLFT(sw, 4+j, port))
		}
		if len(mfts[i]) > 0 {
			must(t, f.SetMFT(sw, 0xc001, mfts[i]...))
		}
	}
	return f
}

func TestMulticastTrees(t *testing.T) {
	tests := []struct {
		name string
		mfts [3][]int
		want []MulticastIssue
		text string // a line of the report
	}{
		{"chain", [3][]int{{1, 3}, {2, 1, 3}, {2, 3}}, nil, "-I- Multicast Group:0xC001 has:3 switches and:3 HCAs"},
		{"loop", [3][]int{{1, 2, 3}, {1, 2, 3}, {1, 2, 3}},
			// S1 reaches S2 and S3; S2 reaches S3, which then reaches S2
			// and S1, all visited
			[]MulticastIssue{{Kind: "loop", Error: true, Node: "S0000000000000202/U1", Port: 1, PrevPort: 2}, {Kind: "loop", Error: true, Node: "S0000000000000201/U1", Port: 2}},
			"-E- Found a loop on MLID:0xC001 got to node:S0000000000000202/U1 through port:1 previoulsy visited through port:2"},
		{"cut", [3][]int{{3}, {2, 3}, {3}},
			[]MulticastIssue{
				{Kind: "disconnected-switch", Error: true, Node: "S0000000000000202/U1", HCAs: []string{"S0000000000000102/U1"}},
				{Kind: "disconnected-switch", Error: true, Node: "S0000000000000203/U1", HCAs: []string{"S0000000000000103/U1"}},
			},
			"-E- Disconnected HCA:S0000000000000102/U1"},
		// S2's entry does not point back to S1: the tree stops there
		{"one-sided", [3][]int{{1, 3}, {3}, {3, 2}},
			[]MulticastIssue{
				{Kind: "non-symmetric", Node: "S0000000000000202/U1", Port: 2, From: "S0000000000000201/U1", FromPort: 1},
				{Kind: "disconnected-switch", Error: true, Node: "S0000000000000202/U1", HCAs: []string{"S0000000000000102/U1"}},
				{Kind: "disconnected-switch", Error: true, Node: "S0000000000000203/U1", HCAs: []string{"S0000000000000103/U1"}},
			},
			"-W- Found a non symmetric MFT on MLID:0xC001"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Check(ring3(t, tc.mfts), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []MulticastIssue
			for _, g := range rep.Multicast.Groups {
				got = append(got, g.Issues...)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected issues (-want +got):\n%s", diff)
			}
			var b bytes.Buffer
			if err := rep.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tc.text) {
				t.Errorf("report lacks %q:\n%s", tc.text, b.String())
			}
		})
	}
}

// TestMulticastUpDown walks a chain tree S1-S2-S3 from its leaves under
// two roots: from S2 every walk goes up then down; from S1, S3's walk goes
// sideways (down) to S2, then up to S1.
func TestMulticastUpDown(t *testing.T) {
	chain := [3][]int{{1, 3}, {2, 1, 3}, {2, 3}}
	tests := []struct {
		root uint64
		want []MulticastIssue
		text string
	}{
		{0x202, nil, "-I- No credit loops found traversing:3 leaf switches for Multicast LID:0xC001"},
		{0x201, []MulticastIssue{{Kind: "non-updown", Error: true, From: "S0000000000000202/U1", FromPort: 2, FromRank: 1,
			Node: "S0000000000000201/U1", Port: 1, ToRank: 0, Turn: "S0000000000000203/U1"}},
			"-E- Non Up/Down on MLID:0xC001 turning UP from:S0000000000000202/U1/P2(1) to node:S0000000000000201/U1/P1(0) previoulsy turned down:S0000000000000203/U1"},
	}
	for _, tc := range tests {
		rep, err := Check(ring3(t, chain), Options{UpDown: true, Roots: []uint64{tc.root}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.UpDown == nil || len(rep.UpDown.Multicast) != 1 {
			t.Fatalf("root 0x%x: no multicast Up/Down check: %+v", tc.root, rep.UpDown)
		}
		if diff := cmp.Diff(tc.want, rep.UpDown.Multicast[0].Issues); diff != "" {
			t.Errorf("root 0x%x: unexpected issues (-want +got):\n%s", tc.root, diff)
		}
		var b bytes.Buffer
		if err := rep.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.text) {
			t.Errorf("root 0x%x: report lacks %q:\n%s", tc.root, tc.text, b.String())
		}
	}
}
