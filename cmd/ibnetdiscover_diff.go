package cmd

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// ibnetdiscover --diff: what changed between a cached fabric and this one,
// as ibnetdiscover.c's diff does it.

// ibnetdiscoverDiffKeys are the keys of ibnetdiscover's --diffcheck.
var ibnetdiscoverDiffKeys = map[string]diffFlags{
	"sw": diffSwitch, "ca": diffCA, "router": diffRouter, "port": diffPort, "lid": diffLID, "nodedesc": diffNodeDesc,
}

// ibnetdiscoverDiffDefault is what --diff checks without --diffcheck.
const ibnetdiscoverDiffDefault = diffSwitch | diffCA | diffRouter | diffPort

// topologyDiff compares fabric1 with fabric2 for one node type.
type topologyDiff struct {
	t                *topology
	flags            diffFlags
	fabric2          *subnet.Fabric
	prefix1, prefix2 string
}

// diff writes the differences from orig to cur (diff in ibnetdiscover.c).
func (t *topology) diff(orig, cur *subnet.Fabric, flags diffFlags) {
	for _, c := range []struct {
		flag diffFlags
		typ  mad.NodeType
	}{{diffSwitch, mad.NodeTypeSwitch}, {diffCA, mad.NodeTypeCA}, {diffRouter, mad.NodeTypeRouter}} {
		if flags&c.flag == 0 {
			continue
		}
		d := topologyDiff{t: t, flags: flags, fabric2: cur, prefix1: "< ", prefix2: "> "}
		for _, n := range orig.ByType(c.typ) {
			d.node(n)
		}
		// Nodes only in cur: existence only, the rest was compared.
		d = topologyDiff{t: t, flags: flags &^ (diffPort | diffLID | diffNodeDesc), fabric2: orig, prefix1: "> ", prefix2: "< "}
		for _, n := range cur.ByType(c.typ) {
			d.node(n)
		}
	}
}

// header writes a node's header lines (out_switch or out_ca).
func (d *topologyDiff) header(n *subnet.Node, idPrefix, prefix string) {
	if n.Type == mad.NodeTypeSwitch {
		d.t.switchNode(n, "", idPrefix, prefix)
	} else {
		d.t.caNode(n, "", idPrefix, prefix)
	}
}

// detail writes a node's Switch or Ca line (out_*_detail).
func (d *topologyDiff) detail(n *subnet.Node, prefix string) {
	if n.Type == mad.NodeTypeSwitch {
		d.t.switchDetail(n, prefix)
	} else {
		d.t.caDetail(n, prefix)
	}
}

// port writes a port line (out_*_port). A port without a peer has no
// line in this format; libibnetdisc's tool would crash on it.
func (d *topologyDiff) port(p *subnet.Port, prefix string) {
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
func (d *topologyDiff) node(n1 *subnet.Node) {
	n2 := d.fabric2.NodeByGUID(n1.GUID)
	if n2 == nil {
		d.header(n1, d.prefix1, d.prefix1)
		for num := 1; num <= n1.NumPorts; num++ {
			d.port(n1.Port(num), d.prefix1)
		}
		return
	}
	if d.flags&(diffPort|diffLID|diffNodeDesc) == 0 {
		return
	}
	headed := false
	if (d.flags&diffLID != 0 && n1.SMALID != n2.SMALID) || (d.flags&diffNodeDesc != 0 && n1.DescRaw != n2.DescRaw) {
		d.header(n1, "", d.prefix1)
		d.detail(n2, d.prefix2)
		d.t.w.WriteByte('\n')
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
		fmt.Fprintf(d.t.w, "%snumports = %d\n%snumports = %d\n", d.prefix1, n1.NumPorts, d.prefix2, n2.NumPorts)
		return
	}
	if d.flags&(diffPort|diffLID) == 0 {
		return
	}
	for num := 1; num <= n1.NumPorts; num++ {
		p1, p2 := n1.Port(num), n2.Port(num)
		out1, out2 := false, false
		if d.flags&diffPort != 0 {
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
		if d.flags&diffLID != 0 && both && p1.BaseLID != p2.BaseLID {
			out1, out2 = true, true
		}
		if d.flags&diffPort != 0 && d.flags&diffNodeDesc != 0 && linked && p1.Remote.Node.DescRaw != p2.Remote.Node.DescRaw {
			out1, out2 = true, true
		}
		if d.flags&diffPort != 0 && d.flags&diffLID != 0 && linked && p1.Remote.BaseLID != p2.Remote.BaseLID {
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
