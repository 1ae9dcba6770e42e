package routecheck

import (
	"fmt"
	"sort"
)

// Snapshot is the routing state of a subnet in the shape of opensm's
// dumps: the links of opensm-subnet.lst in its order, and every switch's
// forwarding tables as opensm.fdbs and opensm.mcfdbs hold them. A live
// sweep (SnapshotOf) fills one; Fabric turns it into the model the checks
// run on, as the loaders would from the same dumps, and WriteSubnet,
// WriteFDBs and WriteMCFDBs write those dumps.
type Snapshot struct {
	// LMC is the LID mask control the subnet was routed with: each port
	// owns 2^LMC LIDs from its base LID.
	LMC uint8
	// Links are the links, each once from each end: for every node in
	// opensm's order (ascending byte-swapped node GUID), its linked ports
	// in port order.
	Links []Link
	// Switches are the switches' tables in the same order.
	Switches []SwitchFDB
	// PathSLs are the SLs of the routes from CAs, when they were read;
	// nil means SL 0 everywhere.
	PathSLs []PathSL
	// SL2VL are the switches' SL to VL tables, when they were read; nil
	// means each SL uses the VL of its number.
	SL2VL []SL2VLEntry
}

// LinkEnd is one end of a link as a line of opensm-subnet.lst names it.
type LinkEnd struct {
	// Type is the node's type; Router is set for a router (which the
	// checks take as a CA).
	Type   NodeType
	Router bool
	// SM is set when the port (a switch's port 0) is the master SM's.
	SM                             bool
	NumPorts                       int
	SystemGUID, NodeGUID, PortGUID uint64
	VendorID                       uint32
	DeviceID                       uint16
	Revision                       uint32
	Desc                           string
	// LID is the port's base LID (a switch's LID for each of its ports);
	// the port owns 2^LMC LIDs from it (opensm-subnet.lst does not say
	// how many: the writers and the model's unrouted LIDs go by it).
	LID  int
	LMC  uint8
	Port int
}

// Link is a line of opensm-subnet.lst: a port and the port it is linked
// to, with the link's width, state and speed as opensm spells them
// ("4x", "ACT", "2.5").
type Link struct {
	A, B                LinkEnd
	Width, State, Speed string
}

// SwitchFDB is one switch's forwarding tables.
type SwitchFDB struct {
	GUID uint64
	// LFT holds the output port of each LID from 0 (Unassigned for an
	// entry not routed or not read); its length is the table's top + 1.
	LFT []uint8
	// MFT holds the ports of each multicast LID with an entry.
	MFT map[uint16][]int
}

// PathSL is the SL a source node's traffic to a DLID uses.
type PathSL struct {
	Source uint64
	DLID   int
	SL     uint8
}

// SL2VLEntry is a switch's SL to VL table of one pair of input and output
// ports.
type SL2VLEntry struct {
	Switch  uint64
	In, Out int
	VLs     [16]uint8
}

// LoadCounts are what building the model found, the numbers ibdmchk
// prints as it reads each dump.
type LoadCounts struct {
	// Links counts the links read (each from both ends).
	Links int
	// FDBEntries counts the routed LFT entries of LIDs some port owns,
	// FDBSwitches the switches with a table.
	FDBEntries, FDBSwitches int
	// MFTEntries counts the ports of all multicast entries, MFTSwitches
	// the switches with one.
	MFTEntries, MFTSwitches int
}

// activeState reports whether ibdmchk takes a link of this state.
func activeState(s string) bool { return s == "ACT" || s == "INI" || s == "ARM" }

// Fabric builds the routing model of the snapshot, as
// ReadSubnet, ReadFDBs, ReadMCFDBs, ReadPathSLs and ReadSL2VL build it
// from the dumps the snapshot writes, and returns what it read.
func (s *Snapshot) Fabric() (*Fabric, LoadCounts, error) {
	f := New(s.LMC)
	var c LoadCounts
	for _, l := range s.Links {
		if !activeState(l.State) {
			continue
		}
		for _, e := range []LinkEnd{l.A, l.B} {
			if _, err := f.AddNode(e.NodeGUID, e.SystemGUID, e.Type, e.NumPorts); err != nil {
				return nil, c, err
			}
		}
		if err := f.Connect(Endpoint{Node: l.A.NodeGUID, Port: l.A.Port, PortGUID: l.A.PortGUID, LID: l.A.LID},
			Endpoint{Node: l.B.NodeGUID, Port: l.B.Port, PortGUID: l.B.PortGUID, LID: l.B.LID}); err != nil {
			return nil, c, err
		}
		c.Links++
	}
	owners := newSnapGraph(s)
	for _, sw := range s.Switches {
		n := f.Node(sw.GUID)
		if n == nil {
			// a switch with no active link: opensm-subnet.lst has no line
			// of it, so its tables name a switch the loaders do not know
			continue
		}
		if len(sw.LFT) > 0 {
			c.FDBSwitches++
		}
		for lid := 1; lid < len(sw.LFT); lid++ {
			port := sw.LFT[lid]
			if owners.lidOwner(lid) < 0 {
				port = Unassigned // opensm.fdbs: UNREACHABLE
			}
			if err := f.SetLFT(n, lid, port); err != nil {
				return nil, c, err
			}
			if port != Unassigned {
				c.FDBEntries++
			}
		}
		if len(sw.MFT) > 0 {
			c.MFTSwitches++
		}
		for _, mlid := range sortedMLIDs(sw.MFT) {
			if err := f.SetMFT(n, mlid, sw.MFT[mlid]...); err != nil {
				return nil, c, err
			}
			c.MFTEntries += len(sw.MFT[mlid])
		}
	}
	for _, p := range s.PathSLs {
		if n := f.Node(p.Source); n != nil {
			if err := f.SetPathSL(n, p.DLID, p.SL); err != nil {
				return nil, c, err
			}
		}
	}
	for _, e := range s.SL2VL {
		if n := f.Node(e.Switch); n != nil {
			if err := f.SetSL2VL(n, e.In, e.Out, e.VLs); err != nil {
				return nil, c, err
			}
		}
	}
	if c.Links == 0 {
		return nil, c, fmt.Errorf("%w: no active links", ErrNoData)
	}
	return f, c, nil
}

func sortedMLIDs(m map[uint16][]int) []uint16 {
	out := make([]uint16, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
