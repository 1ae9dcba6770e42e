package routecheck

import (
	"context"
	"fmt"
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// SL2VLReadError is a switch's SL to VL table of one port pair that could
// not be read.
type SL2VLReadError struct {
	Switch  *subnet.Node
	In, Out int
	Err     error
}

// Error names the switch, its route and the ports.
func (e *SL2VLReadError) Error() string {
	n := e.Switch
	return fmt.Sprintf("switch %s %q (DR path %s): SLtoVLMappingTable in %d out %d: %v", n.GUID, n.Desc, subnet.FormatPath(n.Path), e.In, e.Out, e.Err)
}

// Unwrap returns the read's error.
func (e *SL2VLReadError) Unwrap() error { return e.Err }

// sl2vlPairs returns the port pairs of a switch whose SL to VL tables
// routes use: from port 0 or a linked port to another linked port.
func sl2vlPairs(n *subnet.Node) [][2]int {
	var linked []int
	for num := 1; num < len(n.Ports); num++ {
		if p := n.Ports[num]; p != nil && p.Remote != nil {
			linked = append(linked, num)
		}
	}
	var out [][2]int
	for _, in := range append([]int{0}, linked...) {
		for _, o := range linked {
			if in != o {
				out = append(out, [2]int{in, o})
			}
		}
	}
	return out
}

// readSL2VL reads the SL to VL tables of every switch's port pairs that
// routes use, by SMP along the switch's directed route, all in flight at
// once up to the transactor's window. The entries come in switch order
// (as given), then port pair order; failed reads are left out and
// returned as *SL2VLReadError.
func readSL2VL(ctx context.Context, x *madrpc.Transactor, switches []*subnet.Node) ([]SL2VLEntry, []error) {
	type job struct {
		sw      *subnet.Node
		in, out int
		slot    int
	}
	var jobs []job
	for _, n := range switches {
		for _, pr := range sl2vlPairs(n) {
			jobs = append(jobs, job{n, pr[0], pr[1], len(jobs)})
		}
	}
	got := make([]*SL2VLEntry, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(x.Window(), 1))
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var t mad.SLtoVLMappingTable
			q := &madrpc.Querier{X: x, Path: mad.Path{DR: j.sw.Path}}
			if _, err := q.Get(ctx, &t, uint32(j.in)<<8|uint32(j.out)); err != nil {
				errs[j.slot] = &SL2VLReadError{Switch: j.sw, In: j.in, Out: j.out, Err: err}
				return
			}
			e := &SL2VLEntry{Switch: uint64(j.sw.GUID), In: j.in, Out: j.out}
			for sl := 0; sl < 16; sl++ {
				e.VLs[sl] = t.VL(sl)
			}
			got[j.slot] = e
		}()
	}
	wg.Wait()
	var out []SL2VLEntry
	var failed []error
	for i := range jobs {
		if got[i] != nil {
			out = append(out, *got[i])
		}
		if errs[i] != nil {
			failed = append(failed, errs[i])
		}
	}
	return out, failed
}
