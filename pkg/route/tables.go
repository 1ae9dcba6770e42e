package route

import (
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// LFT is what was read of a switch's linear forwarding table: its blocks
// by number (nil where a block was not read) and its top.
type LFT struct {
	// Top is SwitchInfo's LinearFDBTop, the highest LID the table routes.
	Top    int
	Blocks map[int]*mad.LinearForwardingTable
}

// Port returns the output port the table gives lid, and false when lid's
// block was not read. A port above the switch's port count means the LID
// is not routed (0xff in infiniband-diags' dumps).
func (t *LFT) Port(lid rdma.LID) (int, bool) {
	if t == nil {
		return 0, false
	}
	b := t.Blocks[mad.LFTBlock(int(lid))]
	if b == nil {
		return 0, false
	}
	return int(b.Port(int(lid))), true
}

// HasBlock reports whether LFT block n was read.
func (t *LFT) HasBlock(n int) bool { return t != nil && t.Blocks[n] != nil }

// MFT is what was read of a switch's multicast forwarding table: its
// blocks by SMP attribute modifier (block and port position,
// mad.MFTModifier); nil where one was not read.
type MFT struct {
	Blocks map[uint32]*mad.MulticastForwardingTable
}

// PortMask returns the port mask of mlid at position (ports
// 16*position to 16*position+15), 0 when its block was not read.
func (t *MFT) PortMask(mlid rdma.LID, position int) uint16 {
	if t == nil || !mad.IsMulticastLID(mlid) {
		return 0
	}
	if b := t.Blocks[mad.MFTModifier(mad.MFTBlock(int(mlid)), position)]; b != nil {
		return b.PortMask(int(mlid))
	}
	return 0
}

// HasBlock reports whether the MFT block of attribute modifier mod was
// read.
func (t *MFT) HasBlock(mod uint32) bool { return t != nil && t.Blocks[mod] != nil }

// Ports returns the ports of a switch with numPorts ports that mlid
// forwards to, port 0 (the switch itself) included, lowest first.
func (t *MFT) Ports(mlid rdma.LID, numPorts int) []int {
	var ports []int
	for pos := range mad.MFTPositions(numPorts) {
		ports = mad.MaskPorts(ports, t.PortMask(mlid, pos), pos, 0, numPorts)
	}
	return ports
}

// SwitchTables are one switch's forwarding tables as Collect read them,
// with the reads that failed.
type SwitchTables struct {
	Switch *subnet.Node
	// LFT is the unicast table (nil when only multicast was collected),
	// MFT the multicast one (nil when only unicast was).
	LFT *LFT
	MFT *MFT
	// Errs are the reads that failed, each a *ReadError.
	Errs []error
}

// OutPort returns the port the switch forwards dlid out of, and false
// when its LFT block was not read or the LID is not routed (a port above
// the switch's ports).
func (s *SwitchTables) OutPort(dlid rdma.LID) (int, bool) {
	p, ok := s.LFT.Port(dlid)
	if !ok || p > s.Switch.NumPorts {
		return 0, false
	}
	return p, true
}

// Ports returns the ports the switch forwards mlid to (port 0 included),
// lowest first; none when its MFT blocks were not read.
func (s *SwitchTables) Ports(mlid rdma.LID) []int { return s.MFT.Ports(mlid, s.Switch.NumPorts) }

// LFTRange returns the LIDs infiniband-diags' dump_unicast_tables reads
// of a switch whose LinearFDBTop is top, from the range asked (start; end
// 0 means to the top): end is cut to the top, and truncated says it was
// also cut to mad.MaxUnicastLID.
func LFTRange(start, end, top int) (s, e int, truncated bool) {
	if end == 0 || end > top {
		end = top
	}
	if end > mad.MaxUnicastLID {
		return start, mad.MaxUnicastLID, true
	}
	return start, end, false
}

// LFTBlocks returns the LFT blocks that hold LIDs start to end as
// infiniband-diags reads them: an end that is a multiple of 64 leaves its
// own block out.
func LFTBlocks(start, end int) (first, last int) {
	return mad.LFTBlock(start), mad.LFTBlock(end+mad.LFTBlockSize-1) - 1
}

// MFTRangeWarnings say what MFTRange corrected in the range asked.
type MFTRangeWarnings struct {
	// IllegalTop: the switch's MulticastFDBTop is below the multicast
	// range and was ignored.
	IllegalTop bool
	// IllegalStart: the start was below mad.MinMulticastLID and was
	// raised to it.
	IllegalStart bool
	// IllegalEnd: the end was past mad.MaxMulticastLID and was cut to it;
	// End is what it was.
	IllegalEnd bool
	End        int
}

// MFTRange returns the MLIDs infiniband-diags' dump_multicast_tables
// reads of a switch with the given MulticastFDBCap and MulticastFDBTop,
// from the range asked (0: from the first, to the top; all: past the top
// to the capacity), and what it corrected.
func MFTRange(start, end, capacity, top int, all bool) (s, e int, w MFTRangeWarnings) {
	if end == 0 || end > mad.MinMulticastLID+capacity-1 {
		end = mad.MinMulticastLID + capacity - 1
	}
	if !all && top != 0 && top < end {
		if top < mad.MinMulticastLID-1 {
			w.IllegalTop = true
		} else {
			end = top
		}
	}
	if start == 0 {
		start = mad.MinMulticastLID
	} else if start < mad.MinMulticastLID {
		w.IllegalStart = true
		start = mad.MinMulticastLID
	}
	if end > mad.MaxMulticastLID {
		w.IllegalEnd, w.End = true, end
		end = mad.MaxMulticastLID
	}
	return start, end, w
}
