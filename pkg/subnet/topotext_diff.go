package subnet

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
)

// DiffCheck is what TopologyWriter.Diff compares, as ibnetdiscover's
// --diffcheck names it; checks combine with |.
type DiffCheck uint

const (
	// DiffSwitches compares the switches ("sw").
	DiffSwitches DiffCheck = 1 << iota
	// DiffCAs compares the CAs ("ca").
	DiffCAs
	// DiffRouters compares the routers ("router").
	DiffRouters
	// DiffPorts compares the nodes' ports and what they link to ("port").
	DiffPorts
	// DiffLIDs compares the LIDs ("lid").
	DiffLIDs
	// DiffNodeDescs compares the node descriptions ("nodedesc").
	DiffNodeDescs
)

// topologyDiff compares fabric1 with fabric2 for one node type.
type topologyDiff struct {
	t                *TopologyWriter
	flags            DiffCheck
	fabric2          *Fabric
	prefix1, prefix2 string
}

// Diff writes what changed from orig to the writer's Fabric, as
// ibnetdiscover --diff does (diff in ibnetdiscover.c): lines of orig only
// prefixed "< ", of Fabric only "> ".
func (t *TopologyWriter) Diff(orig *Fabric, checks DiffCheck) {
	cur := t.Fabric
	for _, c := range []struct {
		flag DiffCheck
		typ  mad.NodeType
	}{{DiffSwitches, mad.NodeTypeSwitch}, {DiffCAs, mad.NodeTypeCA}, {DiffRouters, mad.NodeTypeRouter}} {
		if checks&c.flag == 0 {
			continue
		}
		d := topologyDiff{t: t, flags: checks, fabric2: cur, prefix1: "< ", prefix2: "> "}
		for _, n := range orig.ByType(c.typ) {
			d.node(n)
		}
		// Nodes only in cur: existence only, the rest was compared.
		d = topologyDiff{t: t, flags: checks &^ (DiffPorts | DiffLIDs | DiffNodeDescs), fabric2: orig, prefix1: "> ", prefix2: "< "}
		for _, n := range cur.ByType(c.typ) {
			d.node(n)
		}
	}
}

// header writes a node's header lines (out_switch or out_ca).
func (d *topologyDiff) header(n *Node, idPrefix, prefix string) {
	if n.Type == mad.NodeTypeSwitch {
		d.t.switchNode(n, "", idPrefix, prefix)
	} else {
		d.t.caNode(n, "", idPrefix, prefix)
	}
}

// detail writes a node's Switch or Ca line (out_*_detail).
func (d *topologyDiff) detail(n *Node, prefix string) {
	if n.Type == mad.NodeTypeSwitch {
		d.t.switchDetail(n, prefix)
	} else {
		d.t.caDetail(n, prefix)
	}
}

// port writes a port line (out_*_port). A port without a peer has no
// line in this format; libibnetdisc's tool would crash on it.
func (d *topologyDiff) port(p *Port, prefix string) {
	if p == nil || p.Remote == nil {
		return
	}
	if p.Node.Type == mad.NodeTypeSwitch {
		d.t.switchPort(p, prefix)
	} else {
		d.t.caPort(p, prefix)
	}
}

// node is diff_iter_func.
func (d *topologyDiff) node(n1 *Node) {
	n2 := d.fabric2.NodeByGUID(n1.GUID)
	if n2 == nil {
		d.header(n1, d.prefix1, d.prefix1)
		for num := 1; num <= n1.NumPorts; num++ {
			d.port(n1.Port(num), d.prefix1)
		}
		return
	}
	if d.flags&(DiffPorts|DiffLIDs|DiffNodeDescs) == 0 {
		return
	}
	headed := false
	if (d.flags&DiffLIDs != 0 && n1.SMALID != n2.SMALID) || (d.flags&DiffNodeDescs != 0 && n1.DescRaw != n2.DescRaw) {
		d.header(n1, "", d.prefix1)
		d.detail(n2, d.prefix2)
		d.t.W.WriteByte('\n')
		headed = true
	}
	head := func() {
		if !headed {
			d.header(n1, "", "")
			headed = true
		}
	}
	if n1.NumPorts != n2.NumPorts {
		head()
		fmt.Fprintf(d.t.W, "%snumports = %d\n%snumports = %d\n", d.prefix1, n1.NumPorts, d.prefix2, n2.NumPorts)
		return
	}
	if d.flags&(DiffPorts|DiffLIDs) == 0 {
		return
	}
	for num := 1; num <= n1.NumPorts; num++ {
		p1, p2 := n1.Port(num), n2.Port(num)
		out1, out2 := false, false
		if d.flags&DiffPorts != 0 {
			switch {
			case (p1 != nil && p2 == nil) || (p1 != nil && p2 != nil && p1.Remote != nil && p2.Remote == nil):
				out1 = true
			case (p1 == nil && p2 != nil) || (p1 != nil && p2 != nil && p1.Remote == nil && p2.Remote != nil):
				out2 = true
			case p1 != nil && p2 != nil && (p1.GUID != p2.GUID ||
				(p1.Remote != nil && p2.Remote != nil && p1.Remote.GUID != p2.Remote.GUID)):
				out1, out2 = true, true
			}
		}
		both := p1 != nil && p2 != nil
		linked := both && p1.Remote != nil && p2.Remote != nil
		if d.flags&DiffLIDs != 0 && both && p1.BaseLID != p2.BaseLID {
			out1, out2 = true, true
		}
		if d.flags&DiffPorts != 0 && d.flags&DiffNodeDescs != 0 && linked && p1.Remote.Node.DescRaw != p2.Remote.Node.DescRaw {
			out1, out2 = true, true
		}
		if d.flags&DiffPorts != 0 && d.flags&DiffLIDs != 0 && linked && p1.Remote.BaseLID != p2.Remote.BaseLID {
			out1, out2 = true, true
		}
		if out1 {
			head()
			d.port(p1, d.prefix1)
		}
		if out2 {
			head()
			d.port(p2, d.prefix2)
		}
	}
}
