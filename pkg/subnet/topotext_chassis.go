package subnet

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
)

// chassisNodes writes the chassis sections of -g.
func (t *TopologyWriter) chassisNodes() {
	for _, ch := range t.Chassis {
		if ch.Num == 0 {
			continue
		}
		fmt.Fprintf(t.W, "\nChassis %d", ch.Num)
		// out_chassis looks the GUID up by number: the first chassis
		// with it, which differs only when numbers wrap past 255.
		guid := ChassisGUID(t.Chassis, ch.Num)
		if guid != 0 {
			fmt.Fprintf(t.W, " (guid 0x%x)", uint64(guid))
		}
		t.W.WriteByte('\n')
		chname := ""
		if IsXsigoGUID(ch.GUID) {
			for _, n := range ch.Nodes {
				if IsXsigoHCA(n.GUID) {
					chname = n.Desc
					fmt.Fprintf(t.W, "Hostname: %s\n", cleanDesc(n.Desc))
				}
			}
		}
		// Spine and line slots print as switches whatever the node is
		// (a Voltaire router or CA on a spine port), as ibnetdiscover
		// does.
		t.W.WriteString("\n# Spine Nodes")
		for _, n := range ch.Spines[1:] {
			if n != nil {
				t.asSwitch(n, chname)
			}
		}
		t.W.WriteString("\n# Line Nodes")
		for _, n := range ch.Lines[1:] {
			if n != nil {
				t.asSwitch(n, chname)
			}
		}
		t.W.WriteString("\n# Chassis Switches")
		for _, n := range ch.Nodes {
			if n.Type == mad.NodeTypeSwitch {
				t.node(n, chname)
			}
		}
		t.W.WriteString("\n# Chassis CAs")
		for _, n := range ch.Nodes {
			if n.Type == mad.NodeTypeCA {
				t.node(n, chname)
			}
		}
	}
}

// asSwitch writes a node and its linked ports as a switch.
func (t *TopologyWriter) asSwitch(n *Node, chname string) {
	t.switchNode(n, chname, "", "")
	for num := 1; num <= n.NumPorts; num++ {
		if p := n.Port(num); p != nil && p.Remote != nil {
			t.switchPort(p, "")
		}
	}
}
