package routecheck

import (
	"context"
	"fmt"
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// PathSLReadError is a CA port whose paths the SA did not give.
type PathSLReadError struct {
	Port *subnet.Port
	Err  error
}

// Error names the port and says why.
func (e *PathSLReadError) Error() string {
	n := e.Port.Node
	return fmt.Sprintf("PathRecords from %s %q port %d: %v", n.GUID, n.Desc, e.Port.Num, e.Err)
}

// Unwrap returns the query's error.
func (e *PathSLReadError) Unwrap() error { return e.Err }

// pathSLQueries is how many CA ports' PathRecord tables are asked for at
// once: each is one RMPP transfer the SA computes for the whole fabric.
const pathSLQueries = 4

// readPathSLs asks the SA, for every linked port of every CA (in the
// order given), for one reversible PathRecord to every port (SubnAdmGetTable
// of PathRecord by SGID, NumbPath 1) and returns each path's SL for the
// destination's LIDs, keyed by the source node as ibdmchk's -c file is.
// A port whose table the SA does not give is a *PathSLReadError.
func readPathSLs(ctx context.Context, x *madrpc.Transactor, cas []*subnet.Node, sub *subnet.Fabric, smKey uint64) ([]PathSL, []error) {
	var ports []*subnet.Port
	for _, n := range cas {
		for num := 1; num < len(n.Ports); num++ {
			if p := n.Ports[num]; p != nil && p.Remote != nil && p.BaseLID != 0 {
				ports = append(ports, p)
			}
		}
	}
	l := (&mad.PathRecord{}).Layout()
	var mask uint64
	for _, c := range []string{"SGID", "Reversible", "NumbPath"} {
		comp, ok := l.Component(c)
		if !ok {
			return nil, []error{fmt.Errorf("%w: PathRecord has no component %s", ErrModel, c)}
		}
		mask |= comp.Mask
	}
	got := make([][]PathSL, len(ports))
	errs := make([]error, len(ports))
	var wg sync.WaitGroup
	sem := make(chan struct{}, pathSLQueries)
	for i, p := range ports {
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var prefix uint64 = 0xfe80000000000000
			if p.Info != nil && p.Info.GIDPrefix != 0 {
				prefix = p.Info.GIDPrefix
			}
			q := mad.PathRecord{SGID: rdma.NewGID(prefix, p.GUID), Reversible: 1, NumbPath: 1}
			rec, err := q.MarshalBinary()
			if err == nil {
				var res *madrpc.SAResult
				res, err = x.QuerySA(ctx, &madrpc.SAQuery{Method: mad.MethodGetTable, AttrID: l.ID, Name: "PathRecord",
					ComponentMask: mask, Record: rec, SMKey: smKey})
				if err == nil {
					got[i], err = pathSLsOf(p, res.Records, sub)
				}
			}
			if err != nil {
				errs[i] = &PathSLReadError{Port: p, Err: err}
			}
		}()
	}
	wg.Wait()
	var out []PathSL
	var failed []error
	for i := range ports {
		out = append(out, got[i]...)
		if errs[i] != nil {
			failed = append(failed, errs[i])
		}
	}
	return out, failed
}

// pathSLsOf returns the SLs of a source port's PathRecords, each for every
// LID of the destination port (the SA gives one path per pair, to its base
// LID).
func pathSLsOf(src *subnet.Port, records [][]byte, sub *subnet.Fabric) ([]PathSL, error) {
	var out []PathSL
	for _, r := range records {
		var pr mad.PathRecord
		if err := pr.UnmarshalBinary(r); err != nil {
			return nil, err
		}
		lmc := uint8(0)
		if dst := sub.PortByLID(rdma.LID(pr.DLID)); dst != nil {
			lmc = dst.LMC
		}
		for l := int(pr.DLID); l < int(pr.DLID)+1<<lmc; l++ {
			out = append(out, PathSL{Source: uint64(src.Node.GUID), DLID: l, SL: pr.SL})
		}
	}
	return out, nil
}
