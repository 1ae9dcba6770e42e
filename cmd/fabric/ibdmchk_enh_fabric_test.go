package fabric

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// designFabric describes a fabric for the design mode once, and writes it
// both as ibnetdiscover's topology file (ibtool's --topo) and as ibdm's
// topology file with an IBNL system definition per system (ibdmchk's
// -t, with IBDM_IBNL_PATH naming the definitions' directory). A node is
// named <system>/U<n> in both: ibdm's name, and the node description in
// ibnetdiscover's file, so -n takes the same name for both tools.
type designFabric struct {
	systems []designSystem
	links   []designLink
}

// designSystem is a system (a chassis, a host) of one or more nodes.
type designSystem struct {
	name  string
	nodes []designNode
}

// designNode is a switch or a CA of a system.
type designNode struct {
	sw    bool
	ports int
}

// designEnd is a port: the indexes of its system and node, its number.
type designEnd struct{ sys, node, port int }

type designLink struct{ a, b designEnd }

// addSystem adds a system of nodes and returns its index.
func (d *designFabric) addSystem(name string, nodes ...designNode) int {
	d.systems = append(d.systems, designSystem{name: name, nodes: nodes})
	return len(d.systems) - 1
}

// connect links two ports.
func (d *designFabric) connect(a, b designEnd) { d.links = append(d.links, designLink{a, b}) }

// name returns a node's name: <system>/U<n>.
func (d *designFabric) name(sys, node int) string {
	return fmt.Sprintf("%s/U%d", d.systems[sys].name, node+1)
}

// nodeGUID is a node's GUID: the system in the lowest byte, the node in
// the next, so that the LIDs, given in the order of the byte-swapped port
// GUIDs (opensm's), go to the systems in the order they were added.
func (d *designFabric) nodeGUID(sys, node int) uint64 {
	return 0x0002c90000000000 | uint64(node+1)<<8 | uint64(sys+1)
}

// portGUID is a CA port's GUID.
func (d *designFabric) portGUID(sys, node, port int) uint64 {
	return d.nodeGUID(sys, node) | uint64(port)<<16
}

func (d *designFabric) sysGUID(sys int) uint64 { return d.nodeGUID(sys, -1) }

// peer returns the port linked to e, ok false for none.
func (d *designFabric) peer(e designEnd) (designEnd, bool) {
	for _, l := range d.links {
		if l.a == e {
			return l.b, true
		}
		if l.b == e {
			return l.a, true
		}
	}
	return designEnd{}, false
}

// netdiscover returns ibnetdiscover's topology file of the fabric.
func (d *designFabric) netdiscover() string {
	var b strings.Builder
	b.WriteString("#\n# Topology file: generated on Wed Dec  2 08:00:00 2026\n#\n")
	id := func(sys, node int) string {
		if d.systems[sys].nodes[node].sw {
			return fmt.Sprintf("S-%016x", d.nodeGUID(sys, node))
		}
		return fmt.Sprintf("H-%016x", d.nodeGUID(sys, node))
	}
	for s, sys := range d.systems {
		for n, node := range sys.nodes {
			g := d.nodeGUID(s, n)
			fmt.Fprintf(&b, "\nvendid=0x2c9\ndevid=0x1003\nsysimgguid=0x%x\n", d.sysGUID(s))
			if node.sw {
				fmt.Fprintf(&b, "switchguid=0x%x(%x)\nSwitch\t%d \"%s\"\t\t# \"%s\" base port 0 lid 0 lmc 0\n", g, g, node.ports, id(s, n), d.name(s, n))
			} else {
				fmt.Fprintf(&b, "caguid=0x%x\nCa\t%d \"%s\"\t\t# \"%s\"\n", g, node.ports, id(s, n), d.name(s, n))
			}
			for p := 1; p <= node.ports; p++ {
				r, ok := d.peer(designEnd{s, n, p})
				if !ok {
					continue
				}
				rsw := d.systems[r.sys].nodes[r.node].sw
				if node.sw {
					fmt.Fprintf(&b, "[%d]\t\"%s\"[%d]", p, id(r.sys, r.node), r.port)
					if !rsw {
						fmt.Fprintf(&b, "(%x) ", d.portGUID(r.sys, r.node, r.port))
					}
				} else {
					fmt.Fprintf(&b, "[%d](%x) \t\"%s\"[%d]", p, d.portGUID(s, n, p), id(r.sys, r.node), r.port)
				}
				fmt.Fprintf(&b, "\t\t# \"%s\" lid 0 4xQDR\n", d.name(r.sys, r.node))
			}
		}
	}
	return b.String()
}

// writeIbdm writes ibdm's topology file into dir as fabric.topo, and an
// IBNL definition of each system (type T<system>, its ports outside the
// system named N<node>P<port>) beside it; it returns the topology file.
func (d *designFabric) writeIbdm(t *testing.T, dir string) string {
	t.Helper()
	panel := func(e designEnd) string { return fmt.Sprintf("N%dP%d", e.node+1, e.port) }
	var topo strings.Builder
	for s, sys := range d.systems {
		var nl strings.Builder
		fmt.Fprintf(&nl, "TOPSYSTEM T%s\n", sys.name)
		for n, node := range sys.nodes {
			kind := "CA"
			if node.sw {
				kind = "SW"
			}
			fmt.Fprintf(&nl, "\nNODE %s %d MT%d U%d\n", kind, node.ports, 43132-node.ports, n+1)
			for p := 1; p <= node.ports; p++ {
				e := designEnd{s, n, p}
				r, ok := d.peer(e)
				switch {
				case !ok:
				case r.sys != s:
					fmt.Fprintf(&nl, "   %d -> %s\n", p, panel(e))
				case r.node > n || (r.node == n && r.port > p):
					fmt.Fprintf(&nl, "   %d -> U%d %d\n", p, r.node+1, r.port)
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "T"+sys.name+".ibnl"), []byte(nl.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&topo, "T%s %s\n", sys.name, sys.name)
		for _, l := range d.links {
			if a, b := l.a, l.b; a.sys == s && b.sys != s {
				fmt.Fprintf(&topo, "   %s -> T%s %s %s\n", panel(a), d.systems[b.sys].name, d.systems[b.sys].name, panel(b))
			}
		}
		topo.WriteString("\n")
	}
	path := filepath.Join(dir, "fabric.topo")
	if err := os.WriteFile(path, []byte(topo.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Fabrics of the differential tests.

var (
	switch8 = designNode{sw: true, ports: 8}
	host1   = designNode{ports: 1}
)

// twoLevelTree is leaves single-switch systems, each linked to every
// spine and with hostsPerLeaf hosts, a system each.
func twoLevelTree(spines, leaves, hostsPerLeaf int) *designFabric {
	d := &designFabric{}
	var sp []int
	for s := 0; s < spines; s++ {
		sp = append(sp, d.addSystem(fmt.Sprintf("S%d", s+1), switch8))
	}
	for l := 0; l < leaves; l++ {
		leaf := d.addSystem(fmt.Sprintf("L%d", l+1), switch8)
		for s, spine := range sp {
			d.connect(designEnd{leaf, 0, 1 + hostsPerLeaf + s}, designEnd{spine, 0, 1 + l})
		}
		for h := 0; h < hostsPerLeaf; h++ {
			host := d.addSystem(fmt.Sprintf("H%d", l*hostsPerLeaf+h+1), host1)
			d.connect(designEnd{leaf, 0, 1 + h}, designEnd{host, 0, 1})
		}
	}
	return d
}

// chassisTree is a chassis system of two leaves (U1, U2) and two spines
// (U3, U4), leaf ports 1-4 for hosts, 5 and 6 to the spines, spine ports
// 3-6 out of the chassis; chassis C1's and C2's spines are linked to the
// two single-switch spine systems X1 and X2, so the routes between the
// chassis choose between spine nodes of one system and systems.
func chassisTree(hostsPerLeaf int) *designFabric {
	d := &designFabric{}
	chassis := func(name string) int {
		c := d.addSystem(name, switch8, switch8, switch8, switch8)
		for leaf := 0; leaf < 2; leaf++ {
			for sp := 0; sp < 2; sp++ {
				d.connect(designEnd{c, leaf, 5 + sp}, designEnd{c, 2 + sp, 1 + leaf})
			}
		}
		return c
	}
	c1, c2 := chassis("C1"), chassis("C2")
	x1 := d.addSystem("X1", switch8)
	x2 := d.addSystem("X2", switch8)
	for i, c := range []int{c1, c2} {
		for sp := 0; sp < 2; sp++ {
			d.connect(designEnd{c, 2 + sp, 3}, designEnd{x1, 0, 1 + 2*i + sp})
			d.connect(designEnd{c, 2 + sp, 4}, designEnd{x2, 0, 1 + 2*i + sp})
		}
	}
	n := 0
	for _, c := range []int{c1, c2} {
		for leaf := 0; leaf < 2; leaf++ {
			for h := 0; h < hostsPerLeaf; h++ {
				n++
				host := d.addSystem(fmt.Sprintf("H%d", n), host1)
				d.connect(designEnd{c, leaf, 1 + h}, designEnd{host, 0, 1})
			}
		}
	}
	return d
}

// ring is n single-switch systems in a ring (ports 1 and 2), a host on
// port 3 of each.
func ring(n int) *designFabric {
	d := &designFabric{}
	var sw []int
	for i := 0; i < n; i++ {
		sw = append(sw, d.addSystem(fmt.Sprintf("R%d", i+1), switch8))
	}
	for i := 0; i < n; i++ {
		d.connect(designEnd{sw[i], 0, 1}, designEnd{sw[(i+1)%n], 0, 2})
		h := d.addSystem(fmt.Sprintf("H%d", i+1), host1)
		d.connect(designEnd{sw[i], 0, 3}, designEnd{h, 0, 1})
	}
	return d
}
