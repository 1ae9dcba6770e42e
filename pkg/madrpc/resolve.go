package madrpc

import (
	"context"
	"fmt"
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// SAAddress is where a Transactor asks the subnet administrator: the SM's
// LID and SL, as the local port's PortInfo gives them, and the local
// port's GID, the source of the paths it asks for.
type SAAddress struct {
	SMLID rdma.LID
	SL    uint8
	// PortGUID is the local port's GUID; requests use the default GID
	// prefix with it, as libibmad does.
	PortGUID rdma.GUID
	// LID is the local port's LID: what a directed route to the local
	// port (0) stands for when SMPs are answered by the SA (ViaSA).
	LID rdma.LID
	// SMKey is the SM_Key of the queries ViaSA sends.
	SMKey uint64
	// PKeys is the local port's P_Key table, where Resolve finds the
	// entry of a path's P_Key; empty means unknown (index 0 is used).
	PKeys []uint16
}

// pkeyIndex returns the entry of the local P_Key table that holds pkey:
// the same value, else the same partition (the low 15 bits) with other
// membership. ok is false when the table is known and has neither.
func (sa *SAAddress) pkeyIndex(pkey uint16) (uint16, bool) {
	if len(sa.PKeys) == 0 {
		return 0, true
	}
	for i, k := range sa.PKeys {
		if k == pkey {
			return uint16(i), true
		}
	}
	for i, k := range sa.PKeys {
		if k&0x7fff == pkey&0x7fff && k&0x7fff != 0 {
			return uint16(i), true
		}
	}
	return 0, false
}

// defaultGIDPrefx is the default subnet prefix, fe80::/64.
const defaultGIDPrefx = 0xfe80000000000000

// resolved is a port GUID's path, once asked.
type resolved struct {
	lid       rdma.LID
	sl        uint8
	pkeyIndex uint16
	err       error
}

// resolver caches the SA's answers of a Transactor.
type resolver struct {
	mu    sync.Mutex
	paths map[rdma.GID]resolved
}

// Resolve returns p with its port GUID or GID resolved to a LID and SL
// through the SA's PathRecord (as libibmad's ib_resolve_guid_via and
// ib_resolve_gid_via), or p unchanged when it names nothing to resolve. A
// GUID is taken with the default subnet prefix. A GID becomes a LID route
// (the GRH dropped, as infiniband-diags sends it) when the local port knows
// an SM; without one (RoCE) the global route stays. Answers are kept for
// the Transactor's life.
func (t *Transactor) Resolve(ctx context.Context, p mad.Path) (mad.Path, error) {
	if p.LID != 0 || p.IsDR() {
		return p, nil
	}
	var gid rdma.GID
	var what string
	switch {
	case p.GUID != 0 && p.DGID == nil:
		gid, what = rdma.NewGID(defaultGIDPrefx, p.GUID), "port GUID "+p.GUID.String()
	case p.DGID != nil && p.GUID == 0 && t.knowsSM():
		gid, what = *p.DGID, "GID "+p.DGID.String()
	default:
		return p, nil
	}
	t.res.mu.Lock()
	r, ok := t.res.paths[gid]
	t.res.mu.Unlock()
	if !ok {
		r = t.askPath(ctx, gid, what)
		if ctx.Err() != nil {
			return p, r.err
		}
		t.res.mu.Lock()
		if t.res.paths == nil {
			t.res.paths = make(map[rdma.GID]resolved)
		}
		t.res.paths[gid] = r
		t.res.mu.Unlock()
	}
	if r.err != nil {
		return p, r.err
	}
	p.LID, p.SL, p.PKeyIndex, p.DGID = r.lid, r.sl, r.pkeyIndex, nil
	return p, nil
}

// knowsSM reports whether the local port knows an SM LID to ask the SA.
func (t *Transactor) knowsSM() bool {
	sa := t.opts.SA
	return sa != nil && sa.SMLID != 0 && sa.SMLID <= mad.MaxUnicastLID
}

// askPath sends SubnAdmGet(PathRecord) from this port to gid; what names
// the target in errors.
func (t *Transactor) askPath(ctx context.Context, gid rdma.GID, what string) resolved {
	sa := t.opts.SA
	if !t.knowsSM() {
		return resolved{err: fmt.Errorf("resolving %s: the local port knows no SM LID to ask the SA", what)}
	}
	q := mad.PathRecord{DGID: gid, SGID: rdma.NewGID(defaultGIDPrefx, sa.PortGUID)}
	rec, _ := q.MarshalBinary()
	smPath := mad.Path{LID: sa.SMLID, SL: sa.SL}
	r, err := t.Do(ctx, &Request{Path: smPath, Class: mad.ClassSA, Method: mad.MethodGet, AttrID: mad.AttrPathRecord,
		Name: "PathRecord", Data: rec, ComponentMask: (*mad.PathRecord)(nil).Layout().ComponentMask("DGID", "SGID")})
	if err != nil {
		return resolved{err: fmt.Errorf("resolving %s through the SA: %w", what, err)}
	}
	var pr mad.PathRecord
	if err := pr.UnmarshalBinary(r.Data()); err != nil {
		return resolved{err: fmt.Errorf("resolving %s through the SA: %w", what, err)}
	}
	lid := rdma.LID(pr.DLID)
	if lid == 0 || lid > mad.MaxUnicastLID {
		return resolved{err: fmt.Errorf("resolving %s through the SA: path to LID %d", what, lid)}
	}
	idx, ok := sa.pkeyIndex(pr.PKey)
	if !ok {
		return resolved{err: fmt.Errorf("resolving %s through the SA: the path's P_Key 0x%04x is not in the local port's P_Key table", what, pr.PKey)}
	}
	return resolved{lid: lid, sl: pr.SL, pkeyIndex: idx}
}

// SAAddress returns where the transactor asks the SA, and false when the
// local port knows no SM.
func (t *Transactor) SAAddress() (SAAddress, bool) {
	if !t.knowsSM() {
		return SAAddress{}, false
	}
	return *t.opts.SA, true
}
