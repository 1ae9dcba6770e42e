package subnettest

import (
	"github.com/ibtool/ibtool/pkg/mad"
)

// Forwarding tables of the fake switches: Route fills each switch's
// linear forwarding table with the first hop of a shortest path to every
// LID, and Join adds ports to a multicast group's tree.

// unrouted is the LFT entry of a LID a switch has no route to.
const unrouted = 0xff

// Route fills the LFT of every switch: the LIDs of its own port 0 go to
// port 0, every other node's LIDs to the port of the first hop of a
// shortest path through switches (the lowest port first), others to 255.
func (f *Fabric) Route() {
	for _, s := range f.Nodes {
		if !s.isSwitch() {
			continue
		}
		first := f.firstHops(s)
		s.LFT = nil
		for _, n := range f.Nodes {
			out, ok := first[n]
			if !ok {
				continue
			}
			for _, p := range n.Ports {
				if p == nil || p.LID == 0 {
					continue
				}
				for lid := int(p.LID); lid < int(p.LID)+1<<p.LMC; lid++ {
					for len(s.LFT) <= lid {
						s.LFT = append(s.LFT, unrouted)
					}
					s.LFT[lid] = uint8(out)
				}
			}
		}
	}
}

// firstHops returns, for every node reachable from switch s through
// switches, the port of s a shortest path to it leaves by (0 for s).
func (f *Fabric) firstHops(s *Node) map[*Node]int {
	first := map[*Node]int{s: 0}
	queue := []*Node{s}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if !n.isSwitch() {
			continue
		}
		for num, p := range n.Ports {
			if num == 0 || p == nil || p.Remote == nil || p.Down || p.Remote.Down {
				continue
			}
			next := p.Remote.Node
			if _, seen := first[next]; seen {
				continue
			}
			if n == s {
				first[next] = num
			} else {
				first[next] = first[n]
			}
			queue = append(queue, next)
		}
	}
	return first
}

// isSwitch reports whether n is a switch: the only nodes with a port 0.
func (n *Node) isSwitch() bool { return len(n.Ports) > 0 && n.Ports[0] != nil }

// answerForwarding answers the Gets of a switch's forwarding tables.
func (n *Node) answerForwarding(id mad.AttrID, mod uint32) ([]byte, mad.Status) {
	var a interface{ MarshalBinary() ([]byte, error) }
	switch {
	case !n.isSwitch():
		return nil, statusBadAttr
	case id == mad.AttrLinearForwardingTable:
		a = n.lftBlock(mod)
	case id == mad.AttrMulticastForwardingTable:
		a = n.mftBlock(mod)
	default:
		return nil, statusBadAttr
	}
	data, err := a.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return data, 0
}

// Join adds the switch's ports to the multicast group mlid's entry of its
// MFT.
func (n *Node) Join(mlid uint16, ports ...int) {
	if n.MFT == nil {
		n.MFT = make(map[uint16][]bool)
	}
	m := n.MFT[mlid]
	if m == nil {
		m = make([]bool, len(n.Ports))
	}
	for _, p := range ports {
		m[p] = true
	}
	n.MFT[mlid] = m
}

// lftBlock answers a LinearForwardingTable Get: block mod of the LFT,
// unrouted where the table has no entry.
func (n *Node) lftBlock(mod uint32) *mad.LinearForwardingTable {
	var t mad.LinearForwardingTable
	for i := range mad.LFTBlockSize {
		t.SetPort(i, unrouted)
		if lid := int(mod)*mad.LFTBlockSize + i; lid < len(n.LFT) {
			t.SetPort(i, n.LFT[lid])
		}
	}
	return &t
}

// mftBlock answers a MulticastForwardingTable Get: the modifier's block
// of MFTBlockSize MLIDs and the position of its ports' masks.
func (n *Node) mftBlock(mod uint32) *mad.MulticastForwardingTable {
	var t mad.MulticastForwardingTable
	block, pos := int(mod&0x1ff), int(mod>>28)
	for i := range mad.MFTBlockSize {
		ports := n.MFT[uint16(mad.MinMulticastLID+block*mad.MFTBlockSize+i)]
		var mask uint16
		for bit := range mad.MFTPortsPerMask {
			if p := pos*mad.MFTPortsPerMask + bit; p < len(ports) && ports[p] {
				mask |= 1 << bit
			}
		}
		t.SetPortMask(i, mask)
	}
	return &t
}
