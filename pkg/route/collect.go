package route

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// CollectOptions say which tables Collect reads, and how.
type CollectOptions struct {
	// Multicast reads the MFTs instead of the LFTs.
	Multicast bool
	// Start and End bound the (M)LIDs read of each switch, as LFTRange
	// and MFTRange take them: 0 for the first and the top.
	Start, End int
	// All reads an MFT up to its capacity rather than its top.
	All bool
	// ViaSA asks the SA for every switch's records in one query first
	// (SubnAdmGetTable of LinearForwardingTableRecord or
	// MulticastForwardingTableRecord, with SMKey); what it lacks is read
	// by SMP.
	ViaSA bool
	SMKey uint64
}

// Tables are the forwarding tables of a fabric's switches.
type Tables struct {
	// Switches are the switches' tables, in the order given to Collect.
	Switches []*SwitchTables
	// SAError is why the SA's records could not be used (ViaSA): the
	// tables were then read by SMP.
	SAError error
}

// ReadError is a forwarding table block that could not be read.
type ReadError struct {
	Switch *subnet.Node
	// At is the path the read was sent by; the message names it when
	// the switch has no directed route of a discovery (ReadSwitch by
	// LID).
	At mad.Path
	// Attr is the attribute ("LinearForwardingTable" or
	// "MulticastForwardingTable"), Modifier the block's attribute
	// modifier.
	Attr     string
	Modifier uint32
	Err      error
}

func (e *ReadError) Error() string {
	n := e.Switch
	if n.Path == nil && (e.At.LID != 0 || e.At.DGID != nil) {
		return fmt.Sprintf("switch %s %q (%s): %v", n.GUID, n.Desc, e.At, e.Err)
	}
	return fmt.Sprintf("switch %s %q (DR path %s): %v", n.GUID, n.Desc, subnet.FormatPath(n.Path), e.Err)
}

// Unwrap returns the read's error.
func (e *ReadError) Unwrap() error { return e.Err }

// Collect reads the forwarding tables of switches (nodes of a discovered
// fabric; those without SwitchInfo are skipped) through x, each switch by
// the directed route discovery found it by, all blocks in flight at once
// up to the transactor's window. A block that cannot be read is left out
// of its table and recorded in its SwitchTables' Errs; Collect itself
// fails only when ctx ends.
func Collect(ctx context.Context, x *madrpc.Transactor, switches []*subnet.Node, o CollectOptions) (*Tables, error) {
	t := &Tables{Switches: make([]*SwitchTables, len(switches))}
	for i, n := range switches {
		t.Switches[i] = newSwitchTables(n, o)
	}
	if o.ViaSA {
		t.SAError = fromSA(ctx, x, t.Switches, o)
	}
	var jobs []blockRead
	for _, st := range t.Switches {
		if st.Switch.SwitchInfo != nil {
			jobs = st.blockReads(jobs, mad.Path{DR: st.Switch.Path}, o)
		}
	}
	readBlocks(ctx, x, jobs, o.Multicast)
	return t, ctx.Err()
}

// newSwitchTables returns n's empty tables of the kind o asks for.
func newSwitchTables(n *subnet.Node, o CollectOptions) *SwitchTables {
	st := &SwitchTables{Switch: n}
	if o.Multicast {
		st.MFT = &MFT{Blocks: make(map[uint32]*mad.MulticastForwardingTable)}
		return st
	}
	st.LFT = &LFT{Blocks: make(map[int]*mad.LinearForwardingTable)}
	if n.SwitchInfo != nil {
		st.LFT.Top = int(n.SwitchInfo.LinearFDBTop)
	}
	return st
}

// fromSA fills the switches' blocks from the SA's records of every
// switch, in one SubnAdmGetTable, keyed as the SMPs' attribute modifiers
// are; a switch is known to the SA by its port 0's LID.
func fromSA(ctx context.Context, x *madrpc.Transactor, switches []*SwitchTables, o CollectOptions) error {
	// Named in messages as saquery names them.
	l, name := (&mad.LinearForwardingTableRecord{}).Layout(), "LFTRecord"
	if o.Multicast {
		l, name = (&mad.MulticastForwardingTableRecord{}).Layout(), "MFTRecord"
	}
	res, err := x.QuerySA(ctx, &madrpc.SAQuery{Method: mad.MethodGetTable, AttrID: l.ID, Name: name, SMKey: o.SMKey})
	if err != nil {
		return err
	}
	byLID := make(map[rdma.LID]*SwitchTables, len(switches))
	for _, st := range switches {
		if st.Switch.SwitchInfo != nil && st.Switch.SMALID != 0 {
			byLID[st.Switch.SMALID] = st
		}
	}
	for _, r := range res.Records {
		if o.Multicast {
			var rec mad.MulticastForwardingTableRecord
			if err := rec.UnmarshalBinary(r); err != nil {
				return fmt.Errorf("SubnAdmGetTable(%s): %w", name, err)
			}
			if st := byLID[rdma.LID(rec.LID)]; st != nil {
				st.MFT.Blocks[rec.AttrMod()] = &rec.MulticastForwardingTable
			}
			continue
		}
		var rec mad.LinearForwardingTableRecord
		if err := rec.UnmarshalBinary(r); err != nil {
			return fmt.Errorf("SubnAdmGetTable(%s): %w", name, err)
		}
		if st := byLID[rdma.LID(rec.LID)]; st != nil {
			st.LFT.Blocks[int(rec.AttrMod())] = &rec.LinearForwardingTable
		}
	}
	return nil
}
