package simfabric

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// treeShape is what a fat tree should look like.
type treeShape struct {
	Hosts, Leaves, Spines, Aggs, Cores int
}

func TestFatTree(t *testing.T) {
	tests := []struct {
		spec FatTreeSpec
		want treeShape
	}{
		// Two levels: one leaf per Radix/2 hosts; as few spines as keep every
		// spine within Radix ports, with bundled links.
		{FatTreeSpec{Levels: 2, Hosts: 1, Radix: 36}, treeShape{Hosts: 1, Leaves: 1, Spines: 1}},
		{FatTreeSpec{Levels: 2, Hosts: 18, Radix: 36}, treeShape{Hosts: 18, Leaves: 1, Spines: 1}},
		{FatTreeSpec{Levels: 2, Hosts: 19, Radix: 36}, treeShape{Hosts: 19, Leaves: 2, Spines: 1}},
		{FatTreeSpec{Levels: 2, Hosts: 200, Radix: 36}, treeShape{Hosts: 200, Leaves: 12, Spines: 6}},
		{FatTreeSpec{Levels: 2, Hosts: 648, Radix: 36}, treeShape{Hosts: 648, Leaves: 36, Spines: 18}},
		{FatTreeSpec{Levels: 2, Hosts: 8, Radix: 4, HostPorts: 2}, treeShape{Hosts: 8, Leaves: 4, Spines: 2}},
		{FatTreeSpec{Levels: 2, Hosts: 7, Radix: 8}, treeShape{Hosts: 7, Leaves: 2, Spines: 1}},
		// Three levels: pods of Radix/2 leaves and Radix/2 aggregation
		// switches; Radix/2 core groups.
		{FatTreeSpec{Levels: 3, Hosts: 1, Radix: 36}, treeShape{Hosts: 1, Leaves: 1, Aggs: 18, Cores: 18}},
		{FatTreeSpec{Levels: 3, Hosts: 1000, Radix: 36}, treeShape{Hosts: 1000, Leaves: 56, Aggs: 72, Cores: 36}},
		{FatTreeSpec{Levels: 3, Hosts: 4000, Radix: 36}, treeShape{Hosts: 4000, Leaves: 223, Aggs: 234, Cores: 162}},
		{FatTreeSpec{Levels: 3, Hosts: 11664, Radix: 36}, treeShape{Hosts: 11664, Leaves: 648, Aggs: 648, Cores: 324}},
		{FatTreeSpec{Levels: 3, Hosts: 16, Radix: 4}, treeShape{Hosts: 16, Leaves: 8, Aggs: 8, Cores: 4}},
		{FatTreeSpec{Levels: 3, Hosts: 5, Radix: 4}, treeShape{Hosts: 5, Leaves: 3, Aggs: 4, Cores: 2}},
		{FatTreeSpec{Levels: 3, Hosts: 27648, Radix: 48}, treeShape{Hosts: 27648, Leaves: 1152, Aggs: 1152, Cores: 576}},
	}
	for _, tt := range tests {
		s := tt.spec
		t.Run(fmt.Sprintf("L%d-H%d-R%d", s.Levels, s.Hosts, s.Radix), func(t *testing.T) {
			if testing.Short() && s.Hosts > 5000 {
				t.Skip("big tree")
			}
			text, err := FatTree(s)
			if err != nil {
				t.Fatal(err)
			}
			net, err := ParseNet("fattree", text)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, shapeOf(net)); diff != "" {
				t.Errorf("unexpected shape (-want +got):\n%s", diff)
			}
			checkLinks(t, net)
			checkConnected(t, net)
			checkRadix(t, net, s)
			if _, err := net.Counts().IbsimLimits(); err != nil {
				t.Error(err)
			}
			again, _ := FatTree(s)
			if !bytes.Equal(text, again) {
				t.Error("two calls gave different net files")
			}
		})
	}
}

func shapeOf(net *Net) treeShape {
	var s treeShape
	for _, n := range net.Nodes {
		switch {
		case n.Type == NodeCA:
			s.Hosts++
		case strings.Contains(n.ID, "-leaf-"):
			s.Leaves++
		case strings.Contains(n.ID, "-spine-"):
			s.Spines++
		case strings.Contains(n.ID, "-agg-"):
			s.Aggs++
		case strings.Contains(n.ID, "-core-"):
			s.Cores++
		}
	}
	return s
}

// checkLinks checks that every port line has its mirror and that every
// remote port exists (ParseNet already refuses a port listed twice).
func checkLinks(t *testing.T, net *Net) {
	t.Helper()
	byID := make(map[string]*NetNode, len(net.Nodes))
	for i := range net.Nodes {
		byID[net.Nodes[i].ID] = &net.Nodes[i]
	}
	peer := map[PortRef]PortRef{}
	for _, n := range net.Nodes {
		for _, l := range n.Links {
			peer[Port(n.ID, l.Port)] = Port(l.RemoteID, l.RemotePort)
		}
	}
	bad := 0
	for from, to := range peer {
		r := byID[to.Node]
		switch {
		case r == nil || to.Port < 1 || to.Port > r.Ports:
			t.Errorf("%s links to missing port %s", from, to)
			bad++
		case peer[to] != from:
			t.Errorf("%s links to %s, which links to %v", from, to, peer[to])
			bad++
		}
		if bad > 10 {
			t.Fatal("too many errors")
		}
	}
}

// checkConnected checks that a breadth-first search from the first node
// reaches every node.
func checkConnected(t *testing.T, net *Net) {
	t.Helper()
	adj := map[string][]string{}
	for _, n := range net.Nodes {
		for _, l := range n.Links {
			adj[n.ID] = append(adj[n.ID], l.RemoteID)
		}
	}
	seen := map[string]bool{net.Nodes[0].ID: true}
	queue := []string{net.Nodes[0].ID}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, r := range adj[n] {
			if !seen[r] {
				seen[r] = true
				queue = append(queue, r)
			}
		}
	}
	if len(seen) != len(net.Nodes) {
		t.Errorf("reached %d of %d nodes", len(seen), len(net.Nodes))
	}
}

// checkRadix checks port counts: switches have Radix ports and use at most
// those; leaves and aggregation switches have hosts or leaves on ports 1 to
// Radix/2 and all Radix/2 uplinks above; hosts use port 1 only.
func checkRadix(t *testing.T, net *Net, s FatTreeSpec) {
	t.Helper()
	half := s.Radix / 2
	hostPorts := max(s.HostPorts, 1)
	for _, n := range net.Nodes {
		if n.Type == NodeCA {
			if n.Ports != hostPorts || len(n.Links) != 1 || n.Links[0].Port != 1 {
				t.Errorf("host %s: %d ports, links %+v; want %d ports, port 1 cabled", n.ID, n.Ports, n.Links, hostPorts)
			}
			continue
		}
		if n.Ports != s.Radix || len(n.Links) > s.Radix {
			t.Errorf("switch %s: %d ports, %d links; radix %d", n.ID, n.Ports, len(n.Links), s.Radix)
		}
		if strings.Contains(n.ID, "-leaf-") || strings.Contains(n.ID, "-agg-") {
			up := 0
			for _, l := range n.Links {
				if l.Port > half {
					up++
				}
			}
			if up != half {
				t.Errorf("switch %s: %d uplinks, want %d", n.ID, up, half)
			}
		}
	}
}

func TestFatTreeText(t *testing.T) {
	text, err := FatTree(FatTreeSpec{Levels: 2, Hosts: 3, Radix: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := `# 2-level fat tree: 3 hosts, radix 4 (generated by simfabric.FatTree)

Switch	4 "S-spine-1"
[1]	"S-leaf-1"[3]
[2]	"S-leaf-1"[4]
[3]	"S-leaf-2"[3]
[4]	"S-leaf-2"[4]

Switch	4 "S-leaf-1"
[1]	"H-0001"[1]
[2]	"H-0002"[1]
[3]	"S-spine-1"[1]
[4]	"S-spine-1"[2]

Switch	4 "S-leaf-2"
[1]	"H-0003"[1]
[3]	"S-spine-1"[3]
[4]	"S-spine-1"[4]

Hca	1 "H-0001"
[1]	"S-leaf-1"[1]

Hca	1 "H-0002"
[1]	"S-leaf-1"[2]

Hca	1 "H-0003"
[1]	"S-leaf-2"[1]
`
	if diff := cmp.Diff(want, string(text)); diff != "" {
		t.Errorf("unexpected net file (-want +got):\n%s", diff)
	}
}

func TestFatTreeErrors(t *testing.T) {
	tests := []struct {
		spec FatTreeSpec
		want string
	}{
		{FatTreeSpec{Levels: 1, Hosts: 4, Radix: 36}, "levels 1"},
		{FatTreeSpec{Levels: 4, Hosts: 4, Radix: 36}, "levels 4"},
		{FatTreeSpec{Levels: 2, Hosts: 4, Radix: 35}, "radix 35"},
		{FatTreeSpec{Levels: 2, Hosts: 4, Radix: 2}, "radix 2"},
		{FatTreeSpec{Levels: 2, Hosts: 4, Radix: 256}, "radix 256"},
		{FatTreeSpec{Levels: 2, Hosts: 0, Radix: 36}, "hosts 0"},
		{FatTreeSpec{Levels: 2, Hosts: -1, Radix: 36}, "hosts -1"},
		{FatTreeSpec{Levels: 2, Hosts: 649, Radix: 36}, "649 hosts do not fit a 2-level fat tree of radix 36 (at most 648)"},
		{FatTreeSpec{Levels: 3, Hosts: 11665, Radix: 36}, "(at most 11664)"},
		{FatTreeSpec{Levels: 2, Hosts: 4, Radix: 36, HostPorts: 256}, "host ports 256"},
	}
	for _, tt := range tests {
		_, err := FatTree(tt.spec)
		if !errors.Is(err, ErrBadFatTreeSpec) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("FatTree(%+v): got %v, want an ErrBadFatTreeSpec containing %q", tt.spec, err, tt.want)
		}
	}
}
