package fabric

import (
	"fmt"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// iblinkinfo --diff: the ports that changed since a cached fabric, as
// iblinkinfo.c's diff_node does it.

// iblinkinfoDiffKeys are the keys of iblinkinfo's --diffcheck.
var iblinkinfoDiffKeys = map[string]cmdutil.DiffFlags{
	"port": cmdutil.DiffPort, "state": cmdutil.DiffState, "lid": cmdutil.DiffLID, "nodedesc": cmdutil.DiffNodeDesc,
}

// diff prints the differences between orig and cur: for the node named
// by -S or -D (cur's, compared with the same node in orig), else for every
// node of orig (of the --switches-only/--cas-only type), then the nodes
// only in cur.
func (l *linkPrinter) diff(orig, cur *subnet.Fabric, named []*subnet.Node, one bool) {
	pass := func(from, to *subnet.Fabric, flags cmdutil.DiffFlags, p1, p2 string) {
		var nodes []*subnet.Node
		for _, n := range named {
			if m := from.NodeByGUID(n.GUID); m != nil {
				nodes = append(nodes, m)
			}
		}
		if !one {
			nodes = from.All()
			if l.o.Only != 0 {
				nodes = from.ByType(l.o.Only)
			}
		}
		for _, n := range nodes {
			l.diffNode(n, to, flags, p1, p2)
		}
	}
	pass(orig, cur, l.o.DiffCheck, "< ", "> ")
	pass(cur, orig, l.o.DiffCheck&^(cmdutil.DiffPort|cmdutil.DiffState|cmdutil.DiffLID|cmdutil.DiffNodeDesc), "> ", "< ")
}

// diffNode is diff_node_iter.
func (l *linkPrinter) diffNode(n1 *subnet.Node, other *subnet.Fabric, flags cmdutil.DiffFlags, p1, p2 string) {
	n2 := other.NodeByGUID(n1.GUID)
	if n2 == nil {
		l.node(n1, p1)
		return
	}
	if flags&(cmdutil.DiffPort|cmdutil.DiffState|cmdutil.DiffLID|cmdutil.DiffNodeDesc) == 0 {
		return
	}
	headed := false
	head := func() {
		if !headed && !l.o.Line {
			l.header(n1, "")
		}
		headed = true
	}
	if (n1.Type == mad.NodeTypeSwitch && flags&cmdutil.DiffLID != 0 && n1.SMALID != n2.SMALID) ||
		(flags&cmdutil.DiffNodeDesc != 0 && n1.DescRaw != n2.DescRaw) {
		if !l.o.Line {
			l.header(n1, p1)
			l.header(n2, p2)
		}
		headed = true
	}
	if n1.NumPorts != n2.NumPorts {
		head()
		fmt.Fprintf(l.w, "%snumports = %d\n%snumports = %d\n", p1, n1.NumPorts, p2, n2.NumPorts)
		return
	}
	for num := 1; num <= n1.NumPorts; num++ {
		a, b := n1.Port(num), n2.Port(num)
		if a == nil && b == nil {
			continue
		}
		changed := false
		if flags&cmdutil.DiffPort != 0 && (a == nil || b == nil || (a.Remote != nil) != (b.Remote != nil) ||
			(a.Remote != nil && b.Remote != nil && a.Remote.GUID != b.Remote.GUID)) {
			changed = true
		}
		both := a != nil && b != nil
		linked := both && a.Remote != nil && b.Remote != nil
		if flags&cmdutil.DiffState != 0 && both && linkState(a) != linkState(b) {
			changed = true
		}
		if flags&cmdutil.DiffPort != 0 && flags&cmdutil.DiffLID != 0 && linked && a.Remote.BaseLID != b.Remote.BaseLID {
			changed = true
		}
		if flags&cmdutil.DiffPort != 0 && flags&cmdutil.DiffNodeDesc != 0 && linked && a.Remote.Node.DescRaw != b.Remote.Node.DescRaw {
			changed = true
		}
		if changed && a != nil {
			head()
			l.port(a, p1)
		}
		if changed && b != nil {
			head()
			l.port(b, p2)
		}
	}
}
