package fabric

import (
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// python-rdma's ibtracert discovers the subnet's switches first and then
// walks the route, reading each switch's LFT by directed route, or by LID
// once the switch's LID is known when the discovery was LID routed; with
// --cache the discovery comes from the cache file. ibtracert keeps
// infiniband-diags' walk and takes from those options what changes it:
// --discovery lid reads a switch's SwitchInfo and LFT by its LID,
// --discovery sa (--sa) asks the SA for the records, and --cache answers
// NodeInfo, NodeDescription, PortInfo and SwitchInfo from the cached (or
// freshly discovered and saved) fabric, so that only the LFT blocks go
// out.

// switchPath is where the switch n's SwitchInfo and LFT are read: p, or
// with --discovery lid the switch's LID once known.
func (t *tracer) switchPath(p mad.Path, n *traceNode) mad.Path {
	if t.lidRouted && n != nil && n.pi.LID != 0 && n.pi.LID <= mad.MaxUnicastLID {
		return mad.LIDPath(rdma.LID(n.pi.LID))
	}
	return p
}

// switchInfo reads the SwitchInfo at p, from the --cache fabric when it
// has the switch.
func (t *tracer) switchInfo(p mad.Path) (mad.SwitchInfo, error) {
	if n, _, ok := t.fabNode(p); ok && n.SwitchInfo != nil {
		return *n.SwitchInfo, nil
	}
	var si mad.SwitchInfo
	err := t.get(p, &si, 0)
	return si, err
}

// cachedNode is getNode's answer from the --cache fabric: false when
// there is none or it does not have the node at p, or what getNode would
// read of it.
func (t *tracer) cachedNode(p mad.Path) (*traceNode, bool) {
	n, port, ok := t.fabNode(p)
	if !ok {
		return nil, false
	}
	ni := n.Info
	ni.LocalPortNum = uint8(port)
	// get_node reads PortInfo with modifier 0: a switch's port 0, a CA's
	// or router's the port the SMP arrived on.
	pp := n.Port(port)
	if n.Type == mad.NodeTypeSwitch {
		pp = n.Port(0)
	} else if pp != nil {
		ni.PortGUID = pp.GUID
	}
	if pp == nil || pp.Info == nil {
		return nil, false
	}
	return &traceNode{ni: &ni, desc: t.names.Name(uint64(n.GUID), printableDesc(mad.NodeDescString(n.DescRaw))), pi: *pp.Info}, true
}

// fabNode finds the node a path reaches in the --cache fabric, and the
// port it arrives on: a directed route from the local port, followed
// link by link, or a LID (a switch's own LID arrives at port 0 here, as
// nothing tells the port the route came in by).
func (t *tracer) fabNode(p mad.Path) (*subnet.Node, int, bool) {
	if t.fab == nil || p.DGID != nil {
		return nil, 0, false
	}
	if !p.IsDR() {
		lp := t.fab.PortByLID(p.LID)
		if lp == nil {
			return nil, 0, false
		}
		return lp.Node, lp.Num, true
	}
	if p.LID != 0 || t.fab.From == nil {
		return nil, 0, false // a combined route: not followed here
	}
	n, port := t.fab.From, t.fab.FromPort
	for _, hop := range p.DR[1:] {
		q := n.Port(int(hop))
		if q == nil || q.Remote == nil {
			return nil, 0, false
		}
		n, port = q.Remote.Node, q.Remote.Num
	}
	return n, port, true
}
