package fabric

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// mcastNode is a node the multicast trace reached: infiniband-diags'
// find_mcpath Node with the port it was entered on.
type mcastNode struct {
	*traceNode // NodeInfo, NodeDescription, PortInfo as get_node reads them
	path       mad.Path
	up         *mcastNode
	// upPort is the port the node was entered on (skipped when it
	// forwards onwards), or for the first switch above a CA source, the
	// port towards that CA.
	upPort int
	// fromPort is the port of the upstream node that leads here.
	fromPort int
	target   bool
}

// mcastTrace finds the multicast route of mlid from the port at the DR
// path from to the port with GUID target, breadth first along the
// switches' multicast forwarding tables, as infiniband-diags'
// find_mcpath does, and returns the node the target port is on.
func (t *tracer) mcastTrace(from mad.Path, mlid int, target rdma.GUID) (*mcastNode, error) {
	src, err := t.getNode(from)
	if err != nil {
		return nil, fmt.Errorf("can't reach node %s: %w", from, err)
	}
	root := &mcastNode{traceNode: src, path: clonePath(from)}
	if src.ni.PortGUID == target {
		return nil, fmt.Errorf("the source port is the destination (0x%016x): nothing to trace", uint64(target))
	}
	seen := map[rdma.GUID]bool{src.ni.NodeGUID: true}
	// Each distance's nodes are visited last found first, as the C tool
	// keeps them in a list it prepends to.
	levels := [][]*mcastNode{{root}}
	leafPort := 0
	for dist := 0; dist < maxTraceHops && dist < len(levels); dist++ {
		level := levels[dist]
		for k := len(level) - 1; k >= 0; k-- {
			n := level[k]
			var ports []int
			if !n.isSwitch() {
				if dist > 0 {
					continue // a CA is an end, not a way through
				}
				if len(n.path.DR) > 1 {
					leafPort = int(n.path.DR[len(n.path.DR)-1])
				}
				ports = []int{n.portNum()}
			} else {
				if dist == 1 && leafPort != 0 {
					n.upPort = leafPort
				}
				if ports, err = t.mcastPorts(n, mlid); err != nil {
					fmt.Fprintf(t.o.IO.ErrOut, "ibtracert: warning: skipping switch 0x%016x: %v\n", uint64(n.ni.NodeGUID), err)
					continue
				}
			}
			for _, p := range ports {
				if p == n.upPort {
					continue
				}
				path, fromPort := clonePath(n.path), p
				if dist == 0 && leafPort != 0 {
					// The CA source: step back to the switch above it.
					path.DR = path.DR[:len(path.DR)-1]
				} else {
					var pi mad.PortInfo
					if err := t.get(n.path, &pi, uint32(p)); err != nil {
						return nil, fmt.Errorf("can't reach node %s port %d: %w", n.path, p, err)
					}
					if pi.PhysLinkState != mad.PhysPortStateLinkUp {
						continue
					}
					if len(path.DR) >= mad.MaxHops {
						return nil, fmt.Errorf("direct path too long at %s", n.path)
					}
					path.DR = append(path.DR, uint8(p))
				}
				rn, err := t.getNode(path)
				if err != nil {
					fmt.Fprintf(t.o.IO.ErrOut, "ibtracert: warning: NodeInfo on %s port %d failed, skipping port: %v\n", n.path, p, err)
					continue
				}
				r := &mcastNode{traceNode: rn, path: path, up: n, upPort: rn.portNum(), fromPort: fromPort}
				if rn.ni.PortGUID == target {
					r.target = true
					return r, nil
				}
				if seen[rn.ni.NodeGUID] {
					if rn.isSwitch() {
						t.out = fmt.Appendf(t.out, "ERR: circle discovered at switch {0x%016x} portnum 0 lid %s \"%s\"\n", uint64(rn.ni.NodeGUID), lidRange(&rn.pi), rn.desc)
					}
					continue
				}
				seen[rn.ni.NodeGUID] = true
				for len(levels) <= dist+1 {
					levels = append(levels, nil)
				}
				levels[dist+1] = append(levels[dist+1], r)
			}
		}
	}
	return nil, fmt.Errorf("no multicast route of MLID 0x%x reaches the destination port 0x%016x", mlid, uint64(target))
}

// mcastPorts returns the ports a switch forwards mlid to, from its
// multicast forwarding table (port 0 left out).
func (t *tracer) mcastPorts(n *mcastNode, mlid int) ([]int, error) {
	var si mad.SwitchInfo
	if err := t.get(n.path, &si, 0); err != nil {
		return nil, err
	}
	if mlid-mad.MinMulticastLID >= int(si.MulticastFDBCap) {
		return nil, fmt.Errorf("MLID 0x%x is beyond its multicast table (capability %d)", mlid, si.MulticastFDBCap)
	}
	var ports []int
	nports := int(n.ni.NumPorts)
	// Port 0 is never a way onwards: the positions cover ports 1 to
	// nports only.
	for pos := 0; pos < (nports+mad.MFTPortsPerMask-1)/mad.MFTPortsPerMask; pos++ {
		var mft mad.MulticastForwardingTable
		if err := t.get(n.path, &mft, mad.MFTModifier(mad.MFTBlock(mlid), pos)); err != nil {
			return nil, err
		}
		ports = mad.MaskPorts(ports, mft.PortMask(mlid-mad.MinMulticastLID), pos, 1, nports)
	}
	return ports, nil
}

// dumpMcast prints the multicast route that ends at n, from the source
// down, as infiniband-diags' dump_mcpath does.
func (t *tracer) dumpMcast(n *mcastNode) {
	if n.up != nil {
		t.dumpMcast(n.up)
	}
	typ, guid := n.typeName(), uint64(n.ni.NodeGUID)
	if n.up == nil {
		t.out = fmt.Appendf(t.out, "From %s 0x%x port %d lid %s \"%s\"\n", typ, guid, n.portNum(), lidRange(&n.pi), n.desc)
		h := n.hop("from", n.portNum())
		h.NodeGUID = &n.ni.NodeGUID
		t.hops = append(t.hops, h)
		return
	}
	if t.brief {
		t.out = fmt.Appendf(t.out, "[%d] -> %s {0x%016x}[%d]\n", n.fromPort, typ, guid, n.upPort)
	} else {
		t.out = fmt.Appendf(t.out, "[%d] -> %s 0x%x[%d] lid %d \"%s\"\n", n.fromPort, typ, guid, n.upPort, n.pi.LID, n.desc)
	}
	h := n.hop("hop", n.upPort)
	h.NodeGUID, h.OutPort = &n.ni.NodeGUID, &n.fromPort
	t.hops = append(t.hops, h)
	if n.target {
		t.out = fmt.Appendf(t.out, "To %s 0x%x port %d lid %s \"%s\"\n", typ, guid, n.portNum(), lidRange(&n.pi), n.desc)
		h := n.hop("to", n.portNum())
		h.NodeGUID = &n.ni.NodeGUID
		t.hops = append(t.hops, h)
	}
}

func clonePath(p mad.Path) mad.Path {
	p.DR = append([]uint8(nil), p.DR...)
	return p
}
