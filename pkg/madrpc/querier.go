package madrpc

import (
	"context"

	"github.com/ibtool/ibtool/pkg/mad"
)

// Querier sends typed Gets and Sets of generated attributes to one path:
// the attribute's Layout gives its class, ID and name, so a caller names an
// attribute by its type, never by a string or a byte offset.
type Querier struct {
	X    *Transactor
	Path mad.Path
	// Key is sent as the M_Key of SMPs and the CC_Key of congestion
	// control MADs; an SMP's 0 takes the transactor's M_Key
	// (TransactorOptions.MKey).
	Key uint64
	// Class, when not 0, is the class the MADs go as, for attributes
	// every class has (ClassPortInfo, whose layout is the PMA's).
	Class mad.Class
}

// NewQuerier returns a Querier of x for path.
func NewQuerier(x *Transactor, path mad.Path) *Querier { return &Querier{X: x, Path: path} }

// Get sends a Get of a's attribute with the modifier, decodes the reply into
// a and returns the reply's attribute data (for dumps of the raw fields).
// The request carries a's encoding: a PMA Get selects its port and counters
// with the attribute's own fields (PortSelect, CounterSelect), so pass a
// zero attribute but for those.
func (q *Querier) Get(ctx context.Context, a mad.Attribute, mod uint32) ([]byte, error) {
	data, err := a.AppendBinary(nil)
	if err != nil {
		return nil, err
	}
	return q.do(ctx, mad.MethodGet, a, mod, data, nil)
}

// Set sends a Set carrying a's encoding with the modifier, decodes the reply
// into a and returns the reply's attribute data. before, when not nil, is
// the attribute as last read: a dry run then shows only what changes.
func (q *Querier) Set(ctx context.Context, a mad.Attribute, mod uint32, before []byte) ([]byte, error) {
	data, err := a.AppendBinary(nil)
	if err != nil {
		return nil, err
	}
	return q.do(ctx, mad.MethodSet, a, mod, data, before)
}

// GetData is Get for callers that keep only the attribute data (dumps of
// attributes with no generated struct use Layout.AppendDump on it).
func (q *Querier) GetData(ctx context.Context, l *mad.Layout, mod uint32) ([]byte, error) {
	r, err := q.X.Do(ctx, q.request(l, mad.MethodGet, mod, nil, nil))
	if err != nil {
		return nil, err
	}
	return r.Data(), nil
}

func (q *Querier) do(ctx context.Context, m mad.Method, a mad.Attribute, mod uint32, data, before []byte) ([]byte, error) {
	r, err := q.X.Do(ctx, q.request(a.Layout(), m, mod, data, before))
	if err != nil {
		return nil, err
	}
	reply := r.Data()
	return reply, a.UnmarshalBinary(reply)
}

func (q *Querier) request(l *mad.Layout, m mad.Method, mod uint32, data, before []byte) *Request {
	r := &Request{Path: q.Path, Class: l.Class, Method: m, AttrID: l.ID, AttrMod: mod, Name: l.Name, Data: data, Before: before, MKey: q.Key}
	if q.Class != 0 {
		r.Class = q.Class
	}
	if r.Class == mad.ClassCC && r.AttrID == mad.AttrCongestionLogSwitch {
		// IBA A10.4.3.5: CongestionLog's data follows the CC_Key at
		// byte 32, not at 64 as other CC attributes'; its switch and CA
		// layouts are one attribute.
		r.DataOffset, r.Name = mad.CongestionLogDataOffset, "CongestionLog"
	}
	return r
}
