package perf

import (
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
)

// python-rdma's --up of the fabric-wide checks (libibtool/errors.py's
// perform_topo_check): "only check links that are not POLLING/DISABLED".
// python-rdma walks every port of every switch, linked or not, so that
// --up is what keeps it from failing the empty ones; the scripts walk
// the topology's port lines, links discovery found up. ibtool's --up
// reads each of those ports' PortInfo before the checks and leaves out
// the ones whose physical link is now Polling or Disabled: a link taken
// down since the topology file was written, or since discovery.

// upItems is the topology without the port lines of ports whose link is
// Polling or Disabled. A port whose PortInfo cannot be read stays: its
// checks say what is wrong.
func (n *netCheck) upItems() []topoItem {
	futures := make([]*checkFuture, len(n.items))
	sw := ""
	for i, it := range n.items {
		if it.kind == topoNode {
			sw = ""
			if it.typ == "Switch" {
				sw = it.lid
			}
		}
		if it.kind != topoPort {
			continue
		}
		lid := it.lid
		if sw != "" {
			lid = sw // the script checks a switch's ports at its LID
		}
		futures[i] = n.start("up|"+lid+"|"+it.port, func() checkResult {
			return checkResult{ok: !n.k.linkDown(lid, it.port)}
		})
	}
	var out []topoItem
	for i, it := range n.items {
		if f := futures[i]; f != nil {
			if <-f.done; !f.r.ok {
				continue
			}
		}
		out = append(out, it)
	}
	return out
}

// linkDown says the port's PortInfo shows its physical link Polling or
// Disabled; false when it cannot be read.
func (k *nodeChecker) linkDown(lid, port string) bool {
	t, err := endport.ParseTarget(lid, endport.LID)
	if err != nil {
		return false
	}
	num, err := cmdutil.ParsePortArg(port)
	if err != nil {
		return false
	}
	var pi mad.PortInfo
	if _, err := k.smp(mad.LIDPath(t.LID)).Get(k.ctx, &pi, uint32(num)); err != nil {
		return false
	}
	s := pi.PhysLinkState
	return s == mad.PhysPortStatePolling || s == mad.PhysPortStateDisabled
}
