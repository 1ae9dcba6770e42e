package fabric

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/route"
)

// dumpMcast prints a multicast trace (route.Tracer.Multicast): the
// switches met again ("circle discovered"), then the route from the
// source down to the destination, as infiniband-diags' find_mcpath and
// dump_mcpath do.
func (t *tracer) dumpMcast(mt *route.McastTrace) {
	if mt == nil {
		return
	}
	for _, n := range mt.Circles {
		t.out = fmt.Appendf(t.out, "ERR: circle discovered at switch {0x%016x} portnum 0 lid %s \"%s\"\n", uint64(n.Info.NodeGUID), lidRange(&n.PortInfo), t.desc(n))
	}
	if mt.End == nil {
		return
	}
	for _, n := range mt.End.Route() {
		t.mcastHop(n)
	}
}

// mcastHop prints one node of a multicast route.
func (t *tracer) mcastHop(n *route.McastHop) {
	typ, guid := typeName(&n.Node), uint64(n.Info.NodeGUID)
	if n.Up == nil {
		t.out = fmt.Appendf(t.out, "From %s 0x%x port %d lid %s \"%s\"\n", typ, guid, n.Port(), lidRange(&n.PortInfo), t.desc(&n.Node))
		h := t.hop(&n.Node, "from", n.Port())
		h.NodeGUID = &n.Info.NodeGUID
		t.hops = append(t.hops, h)
		return
	}
	if t.brief {
		t.out = fmt.Appendf(t.out, "[%d] -> %s {0x%016x}[%d]\n", n.FromPort, typ, guid, n.UpPort)
	} else {
		t.out = fmt.Appendf(t.out, "[%d] -> %s 0x%x[%d] lid %d \"%s\"\n", n.FromPort, typ, guid, n.UpPort, n.PortInfo.LID, t.desc(&n.Node))
	}
	h := t.hop(&n.Node, "hop", n.UpPort)
	h.NodeGUID, h.OutPort = &n.Info.NodeGUID, &n.FromPort
	t.hops = append(t.hops, h)
	if n.Target {
		t.out = fmt.Appendf(t.out, "To %s 0x%x port %d lid %s \"%s\"\n", typ, guid, n.Port(), lidRange(&n.PortInfo), t.desc(&n.Node))
		h := t.hop(&n.Node, "to", n.Port())
		h.NodeGUID = &n.Info.NodeGUID
		t.hops = append(t.hops, h)
	}
}
