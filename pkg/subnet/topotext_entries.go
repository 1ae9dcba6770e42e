package subnet

import (
	"bufio"
	"bytes"

	"github.com/ibtool/ibtool/pkg/mad"
)

// TopologyEntry is one node as ibnetdiscover's topology writes it: a
// section of its IDs line, its node line and a line per linked port.
type TopologyEntry struct {
	// Node is the node written.
	Node *Node
	// AsSwitch says the node is written as a switch (a Switch line and
	// switch port lines): every switch, and under Group any node in a
	// chassis's spine or line slot, whatever its type.
	AsSwitch bool
}

// Entries returns the nodes in the order Dump writes them: under Group
// the chassis first (spine slots, line slots, then the chassis's other
// switches and CAs), then the switches, CAs and routers in no chassis.
// A chassis's routers outside its slots are not written, as ibnetdiscover
// leaves them out.
func (t *TopologyWriter) Entries() []TopologyEntry {
	var out []TopologyEntry
	if t.Group {
		for _, ch := range t.Chassis {
			if ch.Num == 0 {
				continue
			}
			for _, slots := range [][]*Node{ch.Spines[1:], ch.Lines[1:]} {
				for _, n := range slots {
					if n != nil {
						out = append(out, TopologyEntry{Node: n, AsSwitch: true})
					}
				}
			}
			for _, typ := range []mad.NodeType{mad.NodeTypeSwitch, mad.NodeTypeCA} {
				for _, n := range ch.Nodes {
					if n.Type == typ {
						out = append(out, TopologyEntry{Node: n, AsSwitch: typ == mad.NodeTypeSwitch})
					}
				}
			}
		}
	}
	for _, typ := range []mad.NodeType{mad.NodeTypeSwitch, mad.NodeTypeCA, mad.NodeTypeRouter} {
		for _, n := range t.Fabric.ByType(typ) {
			if t.Group && n.Chassis != 0 {
				continue
			}
			out = append(out, TopologyEntry{Node: n, AsSwitch: typ == mad.NodeTypeSwitch})
		}
	}
	return out
}

// LinkedPorts returns the ports of e that Dump writes a line for: those
// from 1 up that have a remote port.
func (e TopologyEntry) LinkedPorts() []*Port {
	var out []*Port
	for num := 1; num <= e.Node.NumPorts; num++ {
		if p := e.Node.Port(num); p != nil && p.Remote != nil {
			out = append(out, p)
		}
	}
	return out
}

// render runs write on a copy of t that writes into a string.
func (t *TopologyWriter) render(write func(*TopologyWriter)) string {
	var b bytes.Buffer
	c := *t
	c.W = bufio.NewWriter(&b)
	write(&c)
	c.W.Flush() // a bytes.Buffer takes all
	return b.String()
}

// NodeLine returns e's Switch, Ca or Rt line as Dump writes it, newline
// included.
func (t *TopologyWriter) NodeLine(e TopologyEntry) string {
	return t.render(func(c *TopologyWriter) {
		if e.AsSwitch {
			c.switchDetail(e.Node, "")
		} else {
			c.caDetail(e.Node, "")
			if c.Group && IsXsigoHCA(e.Node.GUID) {
				c.W.WriteString(" (scp)")
			}
		}
		c.W.WriteByte('\n')
	})
}

// PortLine returns the line Dump writes for p, one of e's LinkedPorts,
// newline included.
func (t *TopologyWriter) PortLine(e TopologyEntry, p *Port) string {
	return t.render(func(c *TopologyWriter) {
		if e.AsSwitch {
			c.switchPort(p, "")
		} else {
			c.caPort(p, "")
		}
	})
}
