package route

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// MaxTraceHops bounds a trace, as infiniband-diags' MAXHOPS.
const MaxTraceHops = 63

// Node is a node a trace reached, as infiniband-diags' get_node reads it:
// its NodeInfo (LocalPortNum the port the trace entered by), its
// description (unprintable bytes made spaces) and the PortInfo of the
// port it was reached on (port 0 of a switch).
type Node struct {
	Info     mad.NodeInfo
	Desc     string
	PortInfo mad.PortInfo
}

// IsSwitch reports whether the node is a switch.
func (n *Node) IsSwitch() bool { return n.Info.NodeType == mad.NodeTypeSwitch }

// Port is the port the trace entered the node by (NodeInfo's
// LocalPortNum).
func (n *Node) Port() int { return int(n.Info.LocalPortNum) }

// Hop is a node of a route and how the route got there: OutPort is the
// port of the node before it that the route left by (0 for the source).
type Hop struct {
	Node
	OutPort int
}

// Trace is a route from one port to another: the source, the hops after
// it, the destination last once reached.
type Trace struct {
	From *Node
	Hops []Hop
	// To is the destination's node, nil until the trace reaches it.
	To *Node
	// Path is the directed route from the local port the trace ended on.
	Path mad.Path
}

// BlackHoleError is a switch whose forwarding table sends the traced LID
// nowhere: an entry past its ports, or to itself (port 0) for a LID not
// its own.
type BlackHoleError struct {
	Switch *Node
	LID    rdma.LID
	// OutPort is the table's entry (-1 past the table's capacity), Top the
	// table's LinearFDBTop.
	OutPort, Top int
}

func (e *BlackHoleError) Error() string {
	return fmt.Sprintf("bad forwarding table entry found at: node %q lid entry %d is %d (top %d)", e.Switch.Desc, e.LID, e.OutPort, e.Top)
}

// LoopError is a route that did not reach its destination in
// MaxTraceHops hops.
type LoopError struct{ Hops int }

func (e *LoopError) Error() string { return fmt.Sprintf("no route found after %d hops", e.Hops) }

// PortDownError is a route through a port that is not Active.
type PortDownError struct {
	Node *Node
	// Port is the port the route entered by, or with Out, the port of
	// the node before it that the route left by.
	Port  int
	Out   bool
	State mad.PortState
}

func (e *PortDownError) Error() string {
	if e.Out {
		return fmt.Sprintf("bad out port state found: node %q outport %d state %d", e.Node.Desc, e.Port, e.State)
	}
	return fmt.Sprintf("bad port state found: node %q port %d state %d", e.Node.Desc, e.Port, e.State)
}

// Tracer follows routes through the switches' forwarding tables by SMPs.
type Tracer struct {
	X *madrpc.Transactor
	// Force takes a port with the destination's LID as the destination,
	// and traces on when the destination does not answer (ibtracert -f).
	Force bool
	// LIDRouted reads a switch's SwitchInfo and LFT by its LID once known
	// rather than by directed route.
	LIDRouted bool
	// Fabric, when set, answers NodeInfo, NodeDescription, PortInfo and
	// SwitchInfo for the nodes it has, so that only the tables are read.
	Fabric *subnet.Fabric
	// Warn, when set, is told of what a multicast trace skips.
	Warn func(error)
}

func (t *Tracer) get(ctx context.Context, p mad.Path, a mad.Attribute, mod uint32) error {
	_, err := madrpc.NewQuerier(t.X, p).Get(ctx, a, mod)
	return err
}

// Node reads the node at p the way infiniband-diags' get_node does.
func (t *Tracer) Node(ctx context.Context, p mad.Path) (*Node, error) {
	if n, ok := t.cachedNode(p); ok {
		return n, nil
	}
	n := new(Node)
	if err := t.get(ctx, p, &n.Info, 0); err != nil {
		return nil, err
	}
	var nd mad.NodeDescription
	if err := t.get(ctx, p, &nd, 0); err != nil {
		return nil, err
	}
	n.Desc = printableDesc(nd.NodeDescription)
	if err := t.get(ctx, p, &n.PortInfo, 0); err != nil {
		return nil, err
	}
	return n, nil
}

// printableDesc is a description up to its NUL with unprintable bytes
// made spaces.
func printableDesc(d mad.NodeDescString) string {
	b := []byte(d.String())
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = ' '
		}
	}
	return string(b)
}

// sameport is infiniband-diags' test that a trace reached the destination.
func (t *Tracer) sameport(a, b *Node) bool {
	return a.Info.PortGUID == b.Info.PortGUID || (t.Force && a.PortInfo.LID == b.PortInfo.LID)
}

// inactive reports a port not Active; a base switch port 0 always counts
// as active.
func inactive(n *Node, enhancedPort0 bool) bool {
	return n.PortInfo.LinkState != mad.PortStateActive && (!n.IsSwitch() || enhancedPort0)
}

// lookup returns the switch n's output port for lid from its LFT (-1
// past its capacity), whether its port 0 is enhanced and its top,
// reading them at p, or by n's LID when LIDRouted.
func (t *Tracer) lookup(ctx context.Context, p mad.Path, n *Node, lid rdma.LID) (int, bool, int, error) {
	p = t.switchPath(p, n)
	si, err := t.switchInfo(ctx, p)
	if err != nil {
		return 0, false, 0, err
	}
	enh := si.EnhancedPort0 != 0
	top := int(si.LinearFDBTop)
	if int(lid) >= int(si.LinearFDBCap) && int(lid) > top {
		return -1, enh, top, nil
	}
	var lft mad.LinearForwardingTable
	if err := t.get(ctx, p, &lft, uint32(mad.LFTBlock(int(lid)))); err != nil {
		return 0, enh, top, err
	}
	return int(lft.Port(int(lid))), enh, top, nil
}

// nextPort is lookup checked against the switch's ports.
func (t *Tracer) nextPort(ctx context.Context, p mad.Path, n *Node, lid rdma.LID) (int, bool, error) {
	out, enh, top, err := t.lookup(ctx, p, n, lid)
	if err != nil {
		return 0, false, err
	}
	if out < 0 || out > int(n.Info.NumPorts) {
		return 0, false, &BlackHoleError{Switch: n, LID: lid, OutPort: out, Top: top}
	}
	return out, enh, nil
}

// Unicast traces the route from the port at the directed route from to
// the port with LID to through the switches' LFTs, as infiniband-diags'
// find_route does. On an error the trace returned holds the hops found
// before it (nil when the ends could not be read); the errors are
// *BlackHoleError, *LoopError, *PortDownError, or an SMP's error wrapped.
func (t *Tracer) Unicast(ctx context.Context, from mad.Path, to rdma.LID) (*Trace, error) {
	src, err := t.Node(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("can't reach the source port %s: %w", from, err)
	}
	dst, err := t.Node(ctx, mad.LIDPath(to))
	if err != nil {
		if !t.Force {
			return nil, fmt.Errorf("can't reach the destination port Lid %d: %w", to, err)
		}
		dst = &Node{PortInfo: mad.PortInfo{LID: uint16(to)}}
	}
	tr := &Trace{From: src, Path: mad.Path{DR: append([]uint8(nil), from.DR...)}}
	node := src
	nextOut, enh := 255, false
	if node.IsSwitch() {
		if nextOut, enh, err = t.nextPort(ctx, tr.Path, node, to); err != nil {
			return tr, err
		}
	}
	for hops := MaxTraceHops; ; hops-- {
		if hops <= 0 {
			return tr, &LoopError{Hops: MaxTraceHops}
		}
		if inactive(node, enh) {
			return tr, &PortDownError{Node: node, Port: node.Port(), State: mad.PortState(node.PortInfo.LinkState)}
		}
		if t.sameport(node, dst) {
			break
		}
		outport := 0
		var next *Node
		if node.IsSwitch() {
			outport = nextOut
			if len(tr.Path.DR) >= mad.MaxHops {
				return tr, errors.New("direct path too long")
			}
			tr.Path.DR = append(tr.Path.DR, uint8(outport))
			if next, err = t.Node(ctx, tr.Path); err != nil {
				return tr, fmt.Errorf("can't reach the port at %s: %w", tr.Path, err)
			}
			if outport == 0 {
				if !t.sameport(next, dst) {
					return tr, &BlackHoleError{Switch: node, LID: to, OutPort: outport}
				}
				node = next
				break // the switch's own port
			}
		} else {
			// A CA or router: only the source may be one; step back to
			// the switch the route came from, or out of the source's port.
			outport = node.Port()
			if !t.sameport(node, src) {
				return tr, fmt.Errorf("can't continue: reached CA or router port 0x%x, lid %d", uint64(node.Info.PortGUID), node.PortInfo.LID)
			}
			caSrc := false
			var back uint8 // the hop stepped back over
			if len(tr.Path.DR) > 1 {
				back = tr.Path.DR[len(tr.Path.DR)-1]
				tr.Path.DR = tr.Path.DR[:len(tr.Path.DR)-1]
			} else {
				caSrc = true
				if outport != 0 {
					tr.Path.DR = append(tr.Path.DR, uint8(outport))
				}
			}
			if next, err = t.Node(ctx, tr.Path); err != nil {
				return tr, fmt.Errorf("can't reach the port at %s: %w", tr.Path, err)
			}
			if !caSrc {
				// The port as seen from the CA or router side.
				next.Info.LocalPortNum = back
			}
		}
		if next.IsSwitch() {
			if nextOut, enh, err = t.nextPort(ctx, tr.Path, next, to); err != nil {
				return tr, err
			}
		}
		if inactive(next, enh) {
			return tr, &PortDownError{Node: next, Port: outport, Out: true, State: mad.PortState(next.PortInfo.LinkState)}
		}
		node = next
		tr.Hops = append(tr.Hops, Hop{Node: *node, OutPort: outport})
	}
	tr.To = node
	return tr, nil
}
