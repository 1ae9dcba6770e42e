package routecheck

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Options choose ibdmchk's optional checks.
type Options struct {
	// AllRoutes also follows switch-to-CA, CA-to-switch and switch-to-switch
	// routes, and includes them in the credit-loop graph (ibdmchk -a).
	AllRoutes bool
	// UpDown checks the routes against the Up/Down rule of the roots
	// instead of searching the whole dependency graph (ibdmchk -u).
	UpDown bool
	// Roots are the root switches' GUIDs for UpDown; none means find them
	// from the min-hop tables (ibdmchk -r).
	Roots []uint64
	// MulticastLoops adds the multicast trees to the credit-loop graph
	// (ibdmchk -M).
	MulticastLoops bool
}

// Stage names the check a report stopped at.
type Stage string

// Stages a report can stop at.
const (
	StageMinHop    Stage = "min-hop"
	StageRoutes    Stage = "routes"
	StageAllRoutes Stage = "all-routes"
	StageMulticast Stage = "multicast"
	StageDone      Stage = "done"
)

// Report is the outcome of Check, in the order ibdmchk reports it.
type Report struct {
	// MinHop is the topology's min-hop analysis.
	MinHop MinHopResult `json:"minHop"`
	// Routes is the CA-to-CA route check.
	Routes *RouteResult `json:"routes,omitempty"`
	// AllRoutes is the check of every route (AllRoutes option).
	AllRoutes *RouteResult `json:"allRoutes,omitempty"`
	// Multicast is the multicast trees' check.
	Multicast *MulticastResult `json:"multicast,omitempty"`
	// RootsSearched is true when the roots were looked for by min hop.
	RootsSearched bool `json:"rootsSearched,omitempty"`
	// MissingRoots are given root GUIDs that are not in the fabric.
	MissingRoots []uint64 `json:"missingRoots,omitempty"`
	// UpDown is the Up/Down check (UpDown option with roots).
	UpDown *UpDownResult `json:"upDown,omitempty"`
	// CreditLoops is the full credit-loop check.
	CreditLoops *CreditLoopResult `json:"creditLoops,omitempty"`
	// StoppedAt is the check that found errors that stop ibdmchk, or
	// StageDone.
	StoppedAt Stage `json:"stoppedAt"`
}

// Failed reports whether the checks found errors.
func (r *Report) Failed() bool {
	if r.StoppedAt != StageDone {
		return true
	}
	if r.UpDown != nil && len(r.UpDown.BadPaths) > 0 {
		return true
	}
	if c := r.CreditLoops; c != nil && (len(c.Loop) > 0 || len(c.Failures) > 0 || len(c.MulticastErrors) > 0) {
		return true
	}
	return false
}

// Check runs ibdmchk's verification checks on the fabric, stopping where
// ibdmchk stops: at unreachable LIDs, at routes that do not arrive, at
// broken multicast trees.
func Check(f *Fabric, o Options) (*Report, error) {
	r := &Report{}
	t := newTopo(f)
	r.MinHop = t.minHops()
	if len(r.MinHop.Unassigned) > 0 {
		r.StoppedAt = StageMinHop
		return r, nil
	}
	r.Routes = f.verifyCAToCA()
	if len(r.Routes.Failures) > 0 {
		r.StoppedAt = StageRoutes
		return r, nil
	}
	if o.AllRoutes {
		r.AllRoutes = f.verifyAll()
		if len(r.AllRoutes.Failures) > 0 {
			r.StoppedAt = StageAllRoutes
			return r, nil
		}
	}
	r.Multicast = f.checkMulticast()
	if r.Multicast.Errors > 0 {
		r.StoppedAt = StageMulticast
		return r, nil
	}
	r.StoppedAt = StageDone
	var roots []*Node
	if o.UpDown {
		if len(o.Roots) > 0 {
			for _, g := range o.Roots {
				if n := f.Node(g); n != nil {
					roots = append(roots, n)
				} else {
					r.MissingRoots = append(r.MissingRoots, g)
				}
			}
		} else {
			r.RootsSearched = true
			roots = f.rootsByMinHop(t)
		}
	}
	if len(roots) > 0 {
		ud, err := f.upDown(roots)
		if err != nil {
			return nil, err
		}
		r.UpDown = ud
		return r, nil
	}
	r.CreditLoops = f.creditLoops(o.AllRoutes, o.MulticastLoops)
	return r, nil
}

// ReadRoots reads ibdmchk's -r file in verification mode: root node GUIDs
// separated by white space (0x for hex, as strtoull with base 0 reads
// them).
func ReadRoots(r io.Reader, name string) ([]uint64, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &ParseError{File: name, Msg: err.Error(), Err: err}
	}
	var out []uint64
	for i, line := range strings.Split(string(data), "\n") {
		for _, tok := range strings.Fields(line) {
			g, err := strconv.ParseUint(tok, 0, 64)
			if err != nil {
				return nil, &ParseError{File: name, Line: i + 1, Msg: fmt.Sprintf("bad GUID %q", trunc(tok))}
			}
			out = append(out, g)
		}
	}
	return out, nil
}
