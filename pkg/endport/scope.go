package endport

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// EndPort returns the local end port t names for itself: the scope of a
// scoped GID (fe80::1%mlx5_0/1) or a path spec's end_port. ok is false
// when t names none.
func (t Target) EndPort() (l Local, ok bool) {
	switch {
	case t.Kind == ScopedGID:
		return t.Scope, true
	case t.Kind == FullPath && t.Spec != nil && t.Spec.EndPort != nil:
		return *t.Spec.EndPort, true
	}
	return Local{}, false
}

// ScopeError reports a target's end port (EndPort) that disagrees with the
// local end port the flags name, or with another target's.
type ScopeError struct {
	Scope  string // the target's end port as given
	Reason string // how it disagrees, naming what with
}

// Error names the target's end port and what it disagrees with.
func (e *ScopeError) Error() string {
	return fmt.Sprintf("target end port %q %s", e.Scope, e.Reason)
}

// ResolveScoped finds the local end port a run sends from when its targets
// name end ports of their own (scopes, from Target.EndPort), as
// python-rdma's ibtool does (libibtool/libibopts.py with
// rdma.path.from_string's require_dev and require_ep):
//
//   - Every scope must be the same port.
//   - When l names a port (-P, or --port), each scope must be that port.
//   - When l names a device only (-C), each scope must be on it.
//   - The port is then the scopes' port, whichever device and port
//     infiniband-diags' default would have picked.
//
// Without scopes it is Resolve. A scope no port matches is a
// *ResolveError that names the scope; a disagreement is a *ScopeError.
func (l Local) ResolveScoped(src DeviceSource, scopes ...Local) (*rdma.Device, *rdma.Port, error) {
	if len(scopes) == 0 {
		return l.Resolve(src)
	}
	devs, err := src.Devices()
	if err != nil {
		return nil, nil, fmt.Errorf("listing local RDMA devices: %w", err)
	}
	d, p, err := scopes[0].resolveIn(devs)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range scopes[1:] {
		sd, sp, err := s.resolveIn(devs)
		if err != nil {
			return nil, nil, err
		}
		if !samePort(sd, sp, d, p) {
			return nil, nil, &ScopeError{Scope: s.String(), Reason: fmt.Sprintf("is %s, but another target's end port %q is %s",
				portName(sd, sp), scopes[0].String(), portName(d, p))}
		}
	}
	switch {
	case l.Kind == ByName && l.Port == 0 && l.CA == "":
		// The default yields to the scopes.
	case l.Kind == ByName && l.Port == 0:
		if d.Name != l.CA {
			return nil, nil, &ScopeError{Scope: scopes[0].String(), Reason: fmt.Sprintf("is %s, not on device %q that the local end port names", portName(d, p), l.CA)}
		}
	default:
		ld, lp, err := l.resolveIn(devs)
		if err != nil {
			return nil, nil, err
		}
		if !samePort(ld, lp, d, p) {
			return nil, nil, &ScopeError{Scope: scopes[0].String(), Reason: fmt.Sprintf("is %s, but the local end port %q is %s",
				portName(d, p), l.String(), portName(ld, lp))}
		}
	}
	return d, p, nil
}

// samePort compares by name and number: a DeviceSource may build new
// values on every listing.
func samePort(d1 *rdma.Device, p1 *rdma.Port, d2 *rdma.Device, p2 *rdma.Port) bool {
	return d1.Name == d2.Name && p1.Number == p2.Number
}

func portName(d *rdma.Device, p *rdma.Port) string {
	return fmt.Sprintf("%s port %d", d.Name, p.Number)
}
