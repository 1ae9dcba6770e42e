package subnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// saNode returns a NodeRecord: LID, node type, ports, node GUID, port
// GUID, local port and description.
func saNode(lid uint16, typ, ports uint8, guid, portGUID uint64, local uint8, desc string) []byte {
	r := make([]byte, 112)
	binary.BigEndian.PutUint16(r, lid)
	ni := r[4:]
	ni[0], ni[1], ni[2], ni[3] = 1, 1, typ, ports
	binary.BigEndian.PutUint64(ni[4:], guid)
	binary.BigEndian.PutUint64(ni[12:], guid)
	binary.BigEndian.PutUint64(ni[20:], portGUID)
	ni[36] = local
	copy(r[44:], desc)
	return r
}

// saPort returns a PortInfoRecord of an active, linked-up port (or a down
// one) with its LID.
func saPort(lid uint16, num uint8, portLID uint16, up bool) []byte {
	r := make([]byte, 72)
	binary.BigEndian.PutUint16(r, lid)
	r[2] = num
	pi := r[4:]
	binary.BigEndian.PutUint16(pi[16:], portLID)
	pi[32] = 0x40 | 4 // LinkSpeedSupported, PortState Active
	if up {
		pi[33] = 5 << 4 // PortPhysicalState LinkUp
	} else {
		pi[32], pi[33] = 0x41, 2<<4
	}
	return r
}

func saLink(from uint16, fromPort, toPort uint8, to uint16) []byte {
	r := make([]byte, 8)
	binary.BigEndian.PutUint16(r, from)
	r[2], r[3] = fromPort, toPort
	binary.BigEndian.PutUint16(r[4:], to)
	return r
}

func TestFabricFromRecords(t *testing.T) {
	// A 3-port switch at LID 1 with CA A (LID 2) on port 1 and CA B
	// (LID 3) on port 3; port 2 is down. The SM reached the switch by
	// port 3, the local port is A's.
	nodes := [][]byte{
		saNode(3, 1, 1, 0xb0, 0xb1, 1, "B"),
		saNode(1, 2, 3, 0x50, 0x50, 3, "sw"),
		saNode(2, 1, 1, 0xa0, 0xa1, 1, "A"),
	}
	ports := [][]byte{
		saPort(1, 0, 1, false), saPort(1, 1, 0, true), saPort(1, 2, 0, false), saPort(1, 3, 0, true),
		saPort(2, 1, 2, true), saPort(3, 1, 3, true),
	}
	links := [][]byte{saLink(1, 1, 1, 2), saLink(2, 1, 1, 1), saLink(1, 3, 1, 3), saLink(3, 1, 3, 1)}
	f, err := fabricFromRecords(nodes, ports, nil, links, 0xa1, false)
	if err != nil {
		t.Fatal(err)
	}
	type nodeView struct {
		Desc      string
		Path      string
		LocalPort uint8
		LID       rdma.LID
	}
	var got []nodeView
	for _, n := range f.Nodes {
		got = append(got, nodeView{n.Desc, FormatPath(n.Path), n.Info.LocalPortNum, n.Ports[n.Info.LocalPortNum].LID()})
	}
	want := []nodeView{{"A", "0", 1, 2}, {"sw", "0,1", 1, 1}, {"B", "0,1,3", 1, 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nodes in walk order (-want +got):\n%s", diff)
	}
	sw := f.NodeByGUID(0x50)
	if sw.Ports[1].Remote.Node.Desc != "A" || sw.Ports[3].Remote.Node.Desc != "B" || sw.Ports[2].Remote != nil {
		t.Errorf("switch links: %v %v %v", sw.Ports[1].Remote, sw.Ports[3].Remote, sw.Ports[2].Remote)
	}
	if f.PortByLID(3).Node.Desc != "B" || f.MaxHops != 2 {
		t.Errorf("LID 3 is %q, max hops %d", f.PortByLID(3).Node.Desc, f.MaxHops)
	}
	if _, err := fabricFromRecords(nodes, ports, nil, links, 0x999, false); err == nil {
		t.Error("no error for a local port the SA does not know")
	}
}

// TestFabricFromRecordsMany builds a larger fabric: 40 switches of 200
// ports in a chain, a CA on every other port, the rest down. Each port
// must get its own PortInfo, and exactly the ports that are up a link.
func TestFabricFromRecordsMany(t *testing.T) {
	nodes, infos, links := switchChain(40, 200)
	f, err := fabricFromRecords(nodes, infos, nil, links, 0xb0000+1001, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(f.Nodes), len(nodes); got != want {
		t.Errorf("%d nodes walked, want %d", got, want)
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			if p.Info == nil {
				t.Fatalf("%s port %d has no PortInfo", n.Desc, p.Num)
			}
			up := p.Info.PhysLinkState == mad.PhysPortStateLinkUp
			if up != (p.Remote != nil) {
				t.Errorf("%s %#x port %d: up %v, linked %v", n.Desc, n.GUID, p.Num, up, p.Remote != nil)
			}
			if n.Type != mad.NodeTypeSwitch && p.BaseLID != rdma.LID(n.GUID-0xa0000) {
				t.Errorf("CA %#x has LID %d", n.GUID, p.BaseLID)
			}
		}
	}
}

// switchChain returns the records of switches of ports ports in a chain,
// each switch's port 1 to the previous one's port 2, a CA on every other
// port, the rest down. The CAs have LIDs from 1001, in order.
func switchChain(switches, ports int) (nodes, infos, links [][]byte) {
	ca := uint16(1000)
	for s := range uint16(switches) {
		lid := s + 1
		nodes = append(nodes, saNode(lid, 2, uint8(ports), 0x5000+uint64(s), 0x5000+uint64(s), 0, fmt.Sprintf("sw%d", s)))
		infos = append(infos, saPort(lid, 0, lid, false))
		for p := 1; p <= ports; p++ {
			switch {
			case p == 1 && s > 0: // to the previous switch's port 2
				infos = append(infos, saPort(lid, 1, 0, true))
				links = append(links, saLink(lid, 1, 2, lid-1), saLink(lid-1, 2, 1, lid))
			case p == 2 && int(s)+1 < switches:
				infos = append(infos, saPort(lid, 2, 0, true))
			case p%2 == 1:
				ca++
				nodes = append(nodes, saNode(ca, 1, 1, 0xa0000+uint64(ca), 0xb0000+uint64(ca), 1, fmt.Sprintf("ca%d", ca)))
				infos = append(infos, saPort(lid, uint8(p), 0, true), saPort(ca, 1, ca, true))
				links = append(links, saLink(lid, uint8(p), 1, ca), saLink(ca, 1, uint8(p), lid))
			default:
				infos = append(infos, saPort(lid, uint8(p), 0, false))
			}
		}
	}
	return nodes, infos, links
}

// walkView is what a fabric's walk gives: each node in order with its
// route, entry port and LID, and the far end of each of its ports' links.
func walkView(f *Fabric) []string {
	var v []string
	for _, n := range f.Nodes {
		line := fmt.Sprintf("%s %s entry %d lid %d ports", n.Desc, FormatPath(n.Path), n.Info.LocalPortNum, n.Ports[n.Info.LocalPortNum].LID())
		for _, p := range n.Ports {
			switch {
			case p == nil:
			case p.Remote == nil:
				line += fmt.Sprintf(" %d", p.Num)
			default:
				line += fmt.Sprintf(" %d-%s:%d", p.Num, p.Remote.Node.Desc, p.Remote.Num)
			}
		}
		v = append(v, line)
	}
	return append(v, fmt.Sprintf("max hops %d", f.MaxHops))
}

// saCase is a fabric's SA records and the local port.
type saCase struct {
	name                string
	nodes, ports, links [][]byte
	local               rdma.GUID
}

// chainCase is switchChain's fabric seen from its first CA.
func chainCase(name string, switches, ports int) saCase {
	tc := saCase{name: name, local: 0xb0000 + 1001}
	tc.nodes, tc.ports, tc.links = switchChain(switches, ports)
	return tc
}

// TestFabricFromRecordsNoPortInfo builds the same fabrics without their
// PortInfoRecords: the walk gives the same nodes in the same order, by the
// same routes, with the same LIDs and links; every switch has all its
// ports; no port has a PortInfo.
func TestFabricFromRecordsNoPortInfo(t *testing.T) {
	for _, tc := range []saCase{
		{
			name: "switch and two CAs",
			nodes: [][]byte{
				saNode(3, 1, 1, 0xb0, 0xb1, 1, "B"),
				saNode(1, 2, 3, 0x50, 0x50, 3, "sw"),
				saNode(2, 1, 1, 0xa0, 0xa1, 1, "A"),
			},
			ports: [][]byte{
				saPort(1, 0, 1, false), saPort(1, 1, 0, true), saPort(1, 2, 0, false), saPort(1, 3, 0, true),
				saPort(2, 1, 2, true), saPort(3, 1, 3, true),
			},
			links: [][]byte{saLink(1, 1, 1, 2), saLink(2, 1, 1, 1), saLink(1, 3, 1, 3), saLink(3, 1, 3, 1)},
			local: 0xa1,
		},
		chainCase("chain of switches", 12, 9),
		// The last switch's port 2 is down and deeper than any link: a
		// walk that took it for up would count one hop more.
		chainCase("down port deepest", 3, 2),
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, err := fabricFromRecords(tc.nodes, tc.ports, nil, tc.links, tc.local, false)
			if err != nil {
				t.Fatal(err)
			}
			lean, err := fabricFromRecords(tc.nodes, nil, nil, tc.links, tc.local, true)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(walkView(full), walkView(lean)); diff != "" {
				t.Errorf("walk without PortInfo (-with +without):\n%s", diff)
			}
			for _, n := range lean.Nodes {
				for num, p := range n.Ports {
					switch {
					case p == nil && n.Type == mad.NodeTypeSwitch:
						t.Errorf("%s has no port %d", n.Desc, num)
					case p != nil && p.Info != nil:
						t.Errorf("%s port %d has a PortInfo", n.Desc, num)
					}
				}
			}
		})
	}
	// Without a link record the local port still counts as answered.
	if _, err := fabricFromRecords([][]byte{saNode(2, 1, 1, 0xa0, 0xa1, 1, "A")}, nil, nil, nil, 0xa1, true); err != nil {
		t.Errorf("a lone CA without PortInfoRecords: %v", err)
	}
}

// TestRecordOffsets checks where the records embed the attributes whose
// bytes the cache keeps: IBA 15.2.5's offsets.
func TestRecordOffsets(t *testing.T) {
	got := []int{portInfoAt, portInfoLen, switchInfoAt, switchInfoLen}
	if diff := cmp.Diff([]int{4, 64, 4, 20}, got); diff != "" {
		t.Errorf("unexpected record offsets (-want +got):\n%s", diff)
	}
}

// TestShortRecords: a record shorter than its attribute is an error, not
// a panic.
func TestShortRecords(t *testing.T) {
	node := saNode(2, 1, 1, 0xa0, 0xa1, 1, "A")
	short := [][]byte{node[:20]}
	for name, recs := range map[string][4][][]byte{
		"NodeRecord":       {short, nil, nil, nil},
		"PortInfoRecord":   {[][]byte{node}, short, nil, nil},
		"SwitchInfoRecord": {[][]byte{node}, nil, short, nil},
		"LinkRecord":       {[][]byte{node}, nil, nil, [][]byte{node[:4]}},
	} {
		_, err := fabricFromRecords(recs[0], recs[1], recs[2], recs[3], 0xa1, false)
		var short *mad.ShortDataError
		if !errors.As(err, &short) || short.Attr != name {
			t.Errorf("a short %s: %v, want a ShortDataError of %s", name, err, name)
		}
	}
}
