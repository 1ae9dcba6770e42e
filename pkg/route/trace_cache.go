package route

import (
	"context"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// switchPath is where the switch n's SwitchInfo and LFT are read: p, or
// when LIDRouted the switch's LID once known.
func (t *Tracer) switchPath(p mad.Path, n *Node) mad.Path {
	if t.LIDRouted && n != nil && mad.IsUnicastLID(rdma.LID(n.PortInfo.LID)) {
		return mad.LIDPath(rdma.LID(n.PortInfo.LID))
	}
	return p
}

// switchInfo reads the SwitchInfo at p, from Fabric when it has the
// switch.
func (t *Tracer) switchInfo(ctx context.Context, p mad.Path) (mad.SwitchInfo, error) {
	if n, _, ok := t.fabNode(p); ok && n.SwitchInfo != nil {
		return *n.SwitchInfo, nil
	}
	var si mad.SwitchInfo
	err := t.get(ctx, p, &si, 0)
	return si, err
}

// cachedNode is Node's answer from Fabric: false when there is none or it
// does not have the node at p, or what Node would read of it.
func (t *Tracer) cachedNode(p mad.Path) (*Node, bool) {
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
	return &Node{Info: ni, Desc: printableDesc(mad.NodeDescString(n.DescRaw)), PortInfo: *pp.Info}, true
}

// fabNode finds the node a path reaches in Fabric, and the port it
// arrives on: a directed route from the local port, followed link by
// link, or a LID (a switch's own LID arrives at port 0 here, as nothing
// tells the port the route came in by).
func (t *Tracer) fabNode(p mad.Path) (*subnet.Node, int, bool) {
	if t.Fabric == nil || p.DGID != nil {
		return nil, 0, false
	}
	if !p.IsDR() {
		lp := t.Fabric.PortByLID(p.LID)
		if lp == nil {
			return nil, 0, false
		}
		return lp.Node, lp.Num, true
	}
	if p.LID != 0 || t.Fabric.From == nil {
		return nil, 0, false // a combined route: not followed here
	}
	n, port := t.Fabric.From, t.Fabric.FromPort
	for _, hop := range p.DR[1:] {
		q := n.Port(int(hop))
		if q == nil || q.Remote == nil {
			return nil, 0, false
		}
		n, port = q.Remote.Node, q.Remote.Num
	}
	return n, port, true
}
