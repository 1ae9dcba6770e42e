package mad

import "encoding/binary"

// LID ranges (IBA 4.1.3) and the shape of the forwarding tables' blocks
// (IBA 14.2.5.10-11): a LinearForwardingTable block holds the output port
// of 64 consecutive LIDs, a MulticastForwardingTable block the port masks
// of 32 consecutive MLIDs, 16 ports a mask.
const (
	// MaxUnicastLID is the last unicast LID.
	MaxUnicastLID = 0xbfff
	// MinMulticastLID is the first multicast LID.
	MinMulticastLID = 0xc000
	// MaxMulticastLID is the last multicast LID (0xffff is the
	// permissive LID).
	MaxMulticastLID = 0xfffe
	// LFTBlockSize is the number of LIDs of a LinearForwardingTable block.
	LFTBlockSize = 64
	// MFTBlockSize is the number of MLIDs of a MulticastForwardingTable
	// block.
	MFTBlockSize = 32
	// MFTPortsPerMask is the number of ports of a
	// MulticastForwardingTable port mask, and so of one position.
	MFTPortsPerMask = 16
)

// LFTBlock returns the number of the LinearForwardingTable block that
// holds lid, which is the attribute modifier that reads it.
func LFTBlock(lid int) int { return lid / LFTBlockSize }

// Port returns the output port of the block's i-th LID (LID
// block*LFTBlockSize+i); i wraps modulo LFTBlockSize.
func (t *LinearForwardingTable) Port(i int) uint8 { return t.LinearForwTbl[i%LFTBlockSize] }

// SetPort sets the output port of the block's i-th LID; i wraps modulo
// LFTBlockSize.
func (t *LinearForwardingTable) SetPort(i int, port uint8) { t.LinearForwTbl[i%LFTBlockSize] = port }

// MFTPositions returns the number of port mask positions that cover ports
// 0 to numPorts.
func MFTPositions(numPorts int) int { return (numPorts + MFTPortsPerMask) / MFTPortsPerMask }

// MFTBlock returns the number of the MulticastForwardingTable block that
// holds mlid, counted from MinMulticastLID as the attribute modifier
// counts it; mlid must be MinMulticastLID or more.
func MFTBlock(mlid int) int { return (mlid - MinMulticastLID) / MFTBlockSize }

// MFTModifier returns the attribute modifier that reads block's port masks
// of ports 16*position to 16*position+15: the block in bits 8-0, the
// position in bits 31-28.
func MFTModifier(block, position int) uint32 {
	return uint32(block)&0x1ff | uint32(position&0xf)<<28
}

// PortMask returns the port mask of the block's i-th MLID (MLID
// MinMulticastLID+block*MFTBlockSize+i): port 16*position+b is in the
// group when bit b is set. i wraps modulo MFTBlockSize.
func (t *MulticastForwardingTable) PortMask(i int) uint16 {
	return binary.BigEndian.Uint16(t.MulticastForwTbl[2*(i%MFTBlockSize):])
}

// SetPortMask sets the port mask of the block's i-th MLID; i wraps modulo
// MFTBlockSize.
func (t *MulticastForwardingTable) SetPortMask(i int, mask uint16) {
	binary.BigEndian.PutUint16(t.MulticastForwTbl[2*(i%MFTBlockSize):], mask)
}

// AttrMod returns the SMP attribute modifier of the record's block: its
// BlockNum.
func (r *LinearForwardingTableRecord) AttrMod() uint32 { return uint32(r.BlockNum) }

// AttrMod returns the SMP attribute modifier of the record's block: its
// BlockNum with its Position in bits 31-28.
func (r *MulticastForwardingTableRecord) AttrMod() uint32 {
	return MFTModifier(int(r.BlockNum), int(r.Position))
}

// MaskPorts appends to ports the ports of mask at position that are at
// most numPorts and at least minPort, lowest first.
func MaskPorts(ports []int, mask uint16, position, minPort, numPorts int) []int {
	for bit := range MFTPortsPerMask {
		if p := position*MFTPortsPerMask + bit; mask&(1<<bit) != 0 && p >= minPort && p <= numPorts {
			ports = append(ports, p)
		}
	}
	return ports
}
