package route

import (
	"context"
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// blockRead is one forwarding table block to read: its switch, the path
// to the switch and the block's attribute modifier.
type blockRead struct {
	st   *SwitchTables
	path mad.Path
	mod  uint32
}

// blockReads appends the reads of the blocks of st's switch that o asks
// for and that are not read yet (the SA may have given them), in block
// order, each sent by path.
func (st *SwitchTables) blockReads(jobs []blockRead, path mad.Path, o CollectOptions) []blockRead {
	si := st.Switch.SwitchInfo
	if o.Multicast {
		start, end, _ := MFTRange(o.Start, o.End, int(si.MulticastFDBCap), int(si.MulticastFDBTop), o.All)
		for block := mad.MFTBlock(start); block <= mad.MFTBlock(end); block++ {
			for pos := range mad.MFTPositions(st.Switch.NumPorts) {
				if mod := mad.MFTModifier(block, pos); !st.MFT.HasBlock(mod) {
					jobs = append(jobs, blockRead{st, path, mod})
				}
			}
		}
		return jobs
	}
	start, end, _ := LFTRange(o.Start, o.End, st.LFT.Top)
	first, last := LFTBlocks(start, end)
	for block := first; block <= last; block++ {
		if !st.LFT.HasBlock(block) {
			jobs = append(jobs, blockRead{st, path, uint32(block)})
		}
	}
	return jobs
}

// readBlocks reads the blocks, all in flight at once up to the
// transactor's window, into their switches' tables; a read that fails is
// appended to its switch's Errs as a *ReadError. It stops starting reads
// when ctx ends.
func readBlocks(ctx context.Context, x *madrpc.Transactor, jobs []blockRead, multicast bool) {
	var mu sync.Mutex
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
			q := &madrpc.Querier{X: x, Path: j.path}
			var b mad.Attribute
			if multicast {
				b = new(mad.MulticastForwardingTable)
			} else {
				b = new(mad.LinearForwardingTable)
			}
			_, err := q.Get(ctx, b, j.mod)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				j.st.Errs = append(j.st.Errs, &ReadError{Switch: j.st.Switch, At: j.path, Attr: b.Layout().Name, Modifier: j.mod, Err: err})
				return
			}
			switch b := b.(type) {
			case *mad.LinearForwardingTable:
				j.st.LFT.Blocks[int(j.mod)] = b
			case *mad.MulticastForwardingTable:
				j.st.MFT.Blocks[j.mod] = b
			}
		}()
	}
	wg.Wait()
}
