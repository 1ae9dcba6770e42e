package madrpc

import (
	"context"
	"fmt"
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// drLIDs keeps where directed routes were found to end through the SA,
// so a tool that walks a route hop by hop (ibtracert, ibportstate's peer)
// asks for each link once.
type drLIDs struct {
	mu   sync.Mutex
	ends map[string]drEnd // by Path.String()
}

// drEnd is where a directed route ends: the node's LID and the port the
// route enters it by (0 for a route of no hops).
type drEnd struct {
	lid  rdma.LID
	port uint8
}

// get returns the end kept for the route p.
func (d *drLIDs) get(p mad.Path) (drEnd, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.ends[p.String()]
	return e, ok
}

// put keeps e as where p ends.
func (d *drLIDs) put(p mad.Path, e drEnd) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ends == nil {
		d.ends = make(map[string]drEnd)
	}
	d.ends[p.String()] = e
}

// viaSALID returns the LID a directed route ends at as the SA knows the
// links, the way python-rdma's SATransactor.get_path_lid does: from the
// route's start (its LID-routed part, or the local port), each hop's
// LinkRecord with FromLID and FromPort gives the next ToLID, and the last
// one's ToPort the port the route enters its node by. A route of no hops
// is its start.
func (t *Transactor) viaSALID(ctx context.Context, p mad.Path) (drEnd, error) {
	if !p.IsDR() {
		return drEnd{lid: p.LID}, nil
	}
	end := drEnd{lid: p.LID}
	if end.lid == 0 {
		if t.opts.SA == nil || t.opts.SA.LID == 0 {
			return end, fmt.Errorf("the local port has no LID to start the route at")
		}
		end.lid = t.opts.SA.LID
	}
	// The longest prefix already resolved saves its links.
	start := 1
	for n := len(p.DR); n > 1; n-- {
		pre := p
		pre.DR = p.DR[:n]
		if e, ok := t.viaSADR.get(pre); ok {
			end, start = e, n
			break
		}
	}
	var smKey uint64
	if t.opts.SA != nil {
		smKey = t.opts.SA.SMKey
	}
	from, _ := (*mad.LinkRecord)(nil).Layout().Component("FromLID")
	port, _ := (*mad.LinkRecord)(nil).Layout().Component("FromPort")
	to, _ := (*mad.LinkRecord)(nil).Layout().Component("ToLID")
	toPort, _ := (*mad.LinkRecord)(nil).Layout().Component("ToPort")
	for i := start; i < len(p.DR); i++ {
		rec := make([]byte, (*mad.LinkRecord)(nil).Layout().Size)
		from.SetValue(rec, uint64(end.lid))
		port.SetValue(rec, uint64(p.DR[i]))
		res, err := t.QuerySA(ctx, &SAQuery{Method: mad.MethodGetTable, AttrID: mad.AttrLinkRecord, Name: "LinkRecord",
			ComponentMask: from.Mask | port.Mask, Record: rec, SMKey: smKey})
		if err != nil {
			return end, fmt.Errorf("LinkRecord from Lid %d port %d: %w", end.lid, p.DR[i], err)
		}
		if len(res.Records) == 0 || len(res.Records[0]) < (*mad.LinkRecord)(nil).Layout().Size {
			return end, fmt.Errorf("no LinkRecord from Lid %d port %d", end.lid, p.DR[i])
		}
		end = drEnd{lid: rdma.LID(to.Value(res.Records[0])), port: uint8(toPort.Value(res.Records[0]))}
		pre := p
		pre.DR = p.DR[:i+1]
		t.viaSADR.put(pre, end)
	}
	return end, nil
}

// LIDRoute returns p as a LID-routed path: a directed route becomes the
// LID it ends at as the SA's LinkRecords give it (python-rdma's
// get_gmp_path, which turns a DR target of a GMP tool into a LID the same
// way); any other path is returned as it is.
func (t *Transactor) LIDRoute(ctx context.Context, p mad.Path) (mad.Path, error) {
	if !p.IsDR() {
		return p, nil
	}
	end, err := t.viaSALID(ctx, p)
	if err != nil {
		return p, fmt.Errorf("%v through the SA: %w", p, err)
	}
	return mad.LIDPath(end.lid), nil
}
