package route

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// NotSwitchError says the node ReadSwitch was pointed at is not a switch.
type NotSwitchError struct {
	// Path is the path asked, Type the node type its NodeInfo gave.
	Path mad.Path
	Type mad.NodeType
}

func (e *NotSwitchError) Error() string {
	return fmt.Sprintf("%s is not a switch (NodeType %d)", e.Path, e.Type)
}

// ReadSwitch reads one switch's forwarding table: the switch at p (a LID
// or a directed route, as Transactor.Resolve leaves it), its NodeInfo, NodeDescription and
// SwitchInfo first (a *NotSwitchError when it is no switch), then the
// blocks of the range o asks for (o.ViaSA is not used: a transactor that
// answers SMPs from the SA does so itself), all in flight at once up to
// the transactor's window. Unlike Collect it fails on the first block, in
// block order, that cannot be read, with that block's *ReadError; the
// switch's Node holds what the first reads said, its Desc the whole
// NodeDescription as mad.NodeDescString prints it.
func ReadSwitch(ctx context.Context, x *madrpc.Transactor, p mad.Path, o CollectOptions) (*SwitchTables, error) {
	q := &madrpc.Querier{X: x, Path: p}
	var ni mad.NodeInfo
	if _, err := q.Get(ctx, &ni, 0); err != nil {
		return nil, err
	}
	var nd mad.NodeDescription
	if _, err := q.Get(ctx, &nd, 0); err != nil {
		return nil, err
	}
	if ni.NodeType != mad.NodeTypeSwitch {
		return nil, &NotSwitchError{Path: p, Type: ni.NodeType}
	}
	si := new(mad.SwitchInfo)
	if _, err := q.Get(ctx, si, 0); err != nil {
		return nil, err
	}
	n := &subnet.Node{GUID: ni.NodeGUID, Type: ni.NodeType, NumPorts: int(ni.NumPorts), Info: ni,
		Desc: nd.NodeDescription.String(), SwitchInfo: si}
	if p.LID == 0 && p.DGID == nil {
		n.Path = p.DR
	}
	st := newSwitchTables(n, o)
	readBlocks(ctx, x, st.blockReads(nil, p, o), o.Multicast)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(st.Errs) > 0 {
		first := slices.MinFunc(st.Errs, func(a, b error) int { return cmp.Compare(blockOrder(a), blockOrder(b)) })
		return nil, first
	}
	return st, nil
}

// blockOrder sorts a *ReadError by block, then by port position.
func blockOrder(err error) uint64 {
	var re *ReadError
	if !errors.As(err, &re) {
		return 0
	}
	return uint64(re.Modifier&0x0fffffff)<<4 | uint64(re.Modifier>>28)
}
