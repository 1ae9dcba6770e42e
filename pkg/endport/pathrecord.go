package endport

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// Resolve parses target as the tools take one (ParseTarget: a LID, a DR
// path such as "0,1,3", a port GUID or GID, a path spec) and returns the
// path MADs to it take from p: a port GUID or GID is resolved to a LID
// through the SA's PathRecord (mad.Transactor.Resolve), other forms are
// taken as they are.
func (p *Port) Resolve(ctx context.Context, target string) (mad.Path, error) {
	t, err := ParseTarget(target, Any)
	if err != nil {
		return mad.Path{}, err
	}
	path, err := t.Path()
	if err != nil {
		return mad.Path{}, err
	}
	return p.Transactor.Resolve(ctx, path)
}

// PathRecord asks the SA for the path from src to dst, each a LID, a port
// GUID or a port GID as ParseTarget reads them; src "" is this port. A
// GUID is taken with the default subnet prefix fe80::/64. The query is a
// SubnAdmGet of a PathRecord selected by the source's and destination's
// LID or GID; the SA's refusal is a *mad.StatusError (ERR_NO_RECORDS when
// no path joins them).
func (p *Port) PathRecord(ctx context.Context, src, dst string) (*mad.PathRecord, error) {
	var q mad.PathRecord
	var mask uint64
	l := q.Layout()
	end := func(s, lidName, gidName string, lid *uint16, gid *rdma.GID) error {
		t, err := ParseTarget(s, Any)
		if err != nil {
			return err
		}
		path, err := t.Path()
		switch {
		case err != nil:
			return err
		case path.IsDR():
			return fmt.Errorf("%q is a directed route; a PathRecord joins LIDs or GIDs", s)
		case path.LID != 0:
			*lid = uint16(path.LID)
			mask |= component(l, lidName)
		case path.GUID != 0:
			*gid = rdma.NewGID(linkLocalPrefix, path.GUID)
			mask |= component(l, gidName)
		case path.DGID != nil:
			*gid = *path.DGID
			mask |= component(l, gidName)
		default:
			return fmt.Errorf("%q names no LID, GUID or GID", s)
		}
		return nil
	}
	if src == "" {
		q.SGID = rdma.NewGID(linkLocalPrefix, p.Local.GUID)
		mask |= component(l, "SGID")
	} else if err := end(src, "SLID", "SGID", &q.SLID, &q.SGID); err != nil {
		return nil, fmt.Errorf("PathRecord source: %w", err)
	}
	if err := end(dst, "DLID", "DGID", &q.DLID, &q.DGID); err != nil {
		return nil, fmt.Errorf("PathRecord destination: %w", err)
	}
	rec, err := q.MarshalBinary()
	if err != nil {
		return nil, err
	}
	var key uint64
	if sa, ok := p.Transactor.SAAddress(); ok {
		key = sa.SMKey
	}
	res, err := p.Transactor.QuerySA(ctx, &madrpc.SAQuery{Method: mad.MethodGet, AttrID: mad.AttrPathRecord,
		Name: "PathRecord", ComponentMask: mask, SMKey: key, Record: rec})
	if err != nil {
		return nil, fmt.Errorf("PathRecord from %s to %s: %w", orThisPort(src), dst, err)
	}
	var pr mad.PathRecord
	if len(res.Records) == 0 {
		return nil, fmt.Errorf("PathRecord from %s to %s: the SA answered with no record", orThisPort(src), dst)
	}
	if err := pr.UnmarshalBinary(res.Records[0]); err != nil {
		return nil, fmt.Errorf("PathRecord from %s to %s: %w", orThisPort(src), dst, err)
	}
	return &pr, nil
}

func orThisPort(src string) string {
	if src == "" {
		return "this port"
	}
	return src
}

// component is the component mask bit of the named member of an SA
// record.
func component(l *mad.Layout, name string) uint64 {
	c, _ := l.Component(name)
	return c.Mask
}
