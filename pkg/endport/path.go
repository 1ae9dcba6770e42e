package endport

import (
	"errors"
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// ErrNotLIDRouted is wrapped by the error LIDRoutedPath returns for a
// directed-route target: GMPs (PMA, CC, vendor classes) travel by LID only.
var ErrNotLIDRouted = errors.New("LID routed")

// Path returns the path an SMP to t takes: a LID, a DR path, or a path
// spec of either kind. A GUID or GID target becomes a path that names it
// (Path.GUID, Path.DGID): the SA turns it into a LID
// (mad.Transactor.Resolve). A scoped GID's path is its GID's; its scope
// picks the port the MADs leave from (Local.ResolveScoped), not the route.
func (t Target) Path() (mad.Path, error) {
	switch t.Kind {
	case LID:
		return mad.LIDPath(t.LID), nil
	case DirectRoute:
		return mad.DRPath(t.DR...), nil
	case FullPath:
		return t.Spec.path(t)
	case GUID:
		return mad.Path{GUID: t.GUID}, nil
	case GID, ScopedGID:
		gid := t.GID
		return mad.Path{DGID: &gid}, nil
	}
	return mad.Path{}, fmt.Errorf("target %s: a %s names no port", t, t.Kind)
}

func (s *PathSpec) path(t Target) (mad.Path, error) {
	switch {
	case s.DR && s.DLID != nil && *s.DLID != rdma.PermissiveLID:
		return mad.Path{}, fmt.Errorf("target %s: directed routes with a LID-routed part are not supported yet", t)
	case s.DR:
		if len(s.DRPath) == 0 {
			return mad.DRPath(0), nil
		}
		return mad.DRPath(s.DRPath...), nil
	case s.DLID != nil:
		p := mad.LIDPath(*s.DLID)
		if s.SL != nil {
			p.SL = *s.SL
		}
		return p, nil
	case s.DGID != nil:
		// As a GID target: the SA gives the LID and SL (Transactor.Resolve).
		gid := *s.DGID
		return mad.Path{DGID: &gid}, nil
	}
	return mad.Path{}, fmt.Errorf("target %s: an IBPath needs a DLID or a DGID", t)
}

// LIDRoutedPath is Path for a GMP: what names a directed route is an error
// that wraps ErrNotLIDRouted and says that what (the class's requests,
// "PMA queries") need a LID.
func (t Target) LIDRoutedPath(what string) (mad.Path, error) {
	p, err := t.Path()
	if err != nil {
		return p, err
	}
	if p.IsDR() {
		return p, fmt.Errorf("target %s: %s are %w; give a LID", t, what, ErrNotLIDRouted)
	}
	return p, nil
}
