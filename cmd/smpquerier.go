package cmd

import (
	"context"

	"github.com/ibtool/ibtool/pkg/mad"
)

// What other families of tools still take from the SMP tools: the SMP
// tools themselves use mad.Querier, NodeInfo.IsSwitch and
// mad.AppendXdump, and this file goes once the others do too.

// smpQuerier sends SubnGet requests to one path.
type smpQuerier struct {
	ctx  context.Context
	x    *mad.Transactor
	path mad.Path
}

// get sends a SubnGet of the attribute with the modifier and returns the
// reply's attribute data.
func (q *smpQuerier) get(l *mad.Layout, mod uint32) ([]byte, error) {
	r, err := q.x.Do(q.ctx, &mad.Request{Path: q.path, Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: l.ID, AttrMod: mod, Name: l.Name})
	if err != nil {
		return nil, err
	}
	return r.Data(), nil
}

// decode sends a SubnGet for a and decodes the reply into it; it returns
// the attribute data too, for the dump.
func (q *smpQuerier) decode(a mad.Attribute, mod uint32) ([]byte, error) {
	data, err := q.get(a.Layout(), mod)
	if err != nil {
		return nil, err
	}
	return data, a.UnmarshalBinary(data)
}

// nodeInfo returns the target's NodeInfo.
func (q *smpQuerier) nodeInfo() (*mad.NodeInfo, []byte, error) {
	var ni mad.NodeInfo
	data, err := q.decode(&ni, 0)
	return &ni, data, err
}

// nodeTypeSwitch is NodeInfo:NodeType of a switch (NodeInfo.IsSwitch).
const nodeTypeSwitch = 2

// appendXdump is mad.AppendXdump.
func appendXdump(b, data []byte) []byte { return mad.AppendXdump(b, data) }

// smpqueryPortInfoExtended is what perfquery reads RS-FEC from:
// mad.Querier.PortInfoExtended, in the shape it takes.
func smpqueryPortInfoExtended(q *smpQuerier, o *smpqueryOptions) (smpqueryResult, error) {
	pie, _, err := mad.NewQuerier(q.x, q.path).PortInfoExtended(q.ctx, o.Port)
	return smpqueryResult{JSON: map[string]any{"portInfoExtended": pie}}, err
}
