package route

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// McastHop is a node a multicast trace reached: infiniband-diags'
// find_mcpath Node.
type McastHop struct {
	Node
	Path mad.Path
	// Up is the node the trace came from, nil for the source.
	Up *McastHop
	// UpPort is the port the node was entered on (skipped when it
	// forwards onwards), or for the first switch above a CA source, the
	// port towards that CA.
	UpPort int
	// FromPort is the port of Up that leads here.
	FromPort int
	// Target is set on the destination.
	Target bool
}

// Route returns the hops from the source down to h.
func (h *McastHop) Route() []*McastHop {
	var hops []*McastHop
	for n := h; n != nil; n = n.Up {
		hops = append([]*McastHop{n}, hops...)
	}
	return hops
}

// McastTrace is a multicast route found: its last hop, the destination,
// and the switches the search met again by another way (circles), in the
// order found.
type McastTrace struct {
	End     *McastHop
	Circles []*Node
}

// NoMcastRouteError is an MLID whose tree does not reach the destination.
type NoMcastRouteError struct {
	MLID   int
	Target rdma.GUID
}

func (e *NoMcastRouteError) Error() string {
	return fmt.Sprintf("no multicast route of MLID 0x%x reaches the destination port 0x%016x", e.MLID, uint64(e.Target))
}

// Multicast finds the multicast route of mlid from the port at the
// directed route from to the port with GUID target, breadth first along
// the switches' multicast forwarding tables, as infiniband-diags'
// find_mcpath does. Switches whose tables cannot be read and ports that
// do not answer are skipped (told to Warn). On an error the trace holds
// the circles found before it.
func (t *Tracer) Multicast(ctx context.Context, from mad.Path, mlid int, target rdma.GUID) (*McastTrace, error) {
	tr := &McastTrace{}
	src, err := t.Node(ctx, from)
	if err != nil {
		return tr, fmt.Errorf("can't reach node %s: %w", from, err)
	}
	root := &McastHop{Node: *src, Path: clonePath(from)}
	if src.Info.PortGUID == target {
		return tr, fmt.Errorf("the source port is the destination (0x%016x): nothing to trace", uint64(target))
	}
	seen := map[rdma.GUID]bool{src.Info.NodeGUID: true}
	// Each distance's nodes are visited last found first, as the C tool
	// keeps them in a list it prepends to.
	levels := [][]*McastHop{{root}}
	leafPort := 0
	for dist := 0; dist < MaxTraceHops && dist < len(levels); dist++ {
		level := levels[dist]
		for k := len(level) - 1; k >= 0; k-- {
			n := level[k]
			var ports []int
			if !n.IsSwitch() {
				if dist > 0 {
					continue // a CA is an end, not a way through
				}
				if len(n.Path.DR) > 1 {
					leafPort = int(n.Path.DR[len(n.Path.DR)-1])
				}
				ports = []int{n.Port()}
			} else {
				if dist == 1 && leafPort != 0 {
					n.UpPort = leafPort
				}
				if ports, err = t.mcastPorts(ctx, n, mlid); err != nil {
					t.warn(fmt.Errorf("skipping switch 0x%016x: %w", uint64(n.Info.NodeGUID), err))
					continue
				}
			}
			for _, p := range ports {
				if p == n.UpPort {
					continue
				}
				path, fromPort := clonePath(n.Path), p
				if dist == 0 && leafPort != 0 {
					// The CA source: step back to the switch above it.
					path.DR = path.DR[:len(path.DR)-1]
				} else {
					var pi mad.PortInfo
					if err := t.get(ctx, n.Path, &pi, uint32(p)); err != nil {
						return tr, fmt.Errorf("can't reach node %s port %d: %w", n.Path, p, err)
					}
					if pi.PhysLinkState != mad.PhysPortStateLinkUp {
						continue
					}
					if len(path.DR) >= mad.MaxHops {
						return tr, fmt.Errorf("direct path too long at %s", n.Path)
					}
					path.DR = append(path.DR, uint8(p))
				}
				rn, err := t.Node(ctx, path)
				if err != nil {
					t.warn(fmt.Errorf("NodeInfo on %s port %d failed, skipping port: %w", n.Path, p, err))
					continue
				}
				r := &McastHop{Node: *rn, Path: path, Up: n, UpPort: rn.Port(), FromPort: fromPort}
				if rn.Info.PortGUID == target {
					r.Target = true
					tr.End = r
					return tr, nil
				}
				if seen[rn.Info.NodeGUID] {
					if rn.IsSwitch() {
						tr.Circles = append(tr.Circles, rn)
					}
					continue
				}
				seen[rn.Info.NodeGUID] = true
				for len(levels) <= dist+1 {
					levels = append(levels, nil)
				}
				levels[dist+1] = append(levels[dist+1], r)
			}
		}
	}
	return tr, &NoMcastRouteError{MLID: mlid, Target: target}
}

func (t *Tracer) warn(err error) {
	if t.Warn != nil {
		t.Warn(err)
	}
}

// mcastPorts returns the ports a switch forwards mlid to, from its
// multicast forwarding table (port 0 left out).
func (t *Tracer) mcastPorts(ctx context.Context, n *McastHop, mlid int) ([]int, error) {
	var si mad.SwitchInfo
	if err := t.get(ctx, n.Path, &si, 0); err != nil {
		return nil, err
	}
	if mlid-mad.MinMulticastLID >= int(si.MulticastFDBCap) {
		return nil, fmt.Errorf("MLID 0x%x is beyond its multicast table (capability %d)", mlid, si.MulticastFDBCap)
	}
	var ports []int
	nports := int(n.Info.NumPorts)
	// Port 0 is never a way onwards: the positions cover ports 1 to
	// nports only.
	for pos := 0; pos < (nports+mad.MFTPortsPerMask-1)/mad.MFTPortsPerMask; pos++ {
		var mft mad.MulticastForwardingTable
		if err := t.get(ctx, n.Path, &mft, mad.MFTModifier(mad.MFTBlock(mlid), pos)); err != nil {
			return nil, err
		}
		ports = mad.MaskPorts(ports, mft.PortMask(mlid-mad.MinMulticastLID), pos, 1, nports)
	}
	return ports, nil
}

func clonePath(p mad.Path) mad.Path {
	p.DR = append([]uint8(nil), p.DR...)
	return p
}
