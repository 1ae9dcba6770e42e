package mad

import (
	"encoding/binary"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// MaxHops is the number of entries in a directed-route path, index 0
// included; a DR SMP crosses at most MaxHops-1 links.
const MaxHops = 64

// Byte offsets inside a directed-route SMP (IBA 14.2.1.2).
const (
	// MKeyOffset is where an SMP's M_Key is, LID routed or directed.
	MKeyOffset          = 24
	drSLIDOffset        = 32
	drDLIDOffset        = 34
	drInitialPathOffset = 128
	drReturnPathOffset  = 192
	// SMPDataOffset is where the 64-byte SMP attribute data starts, in
	// LID-routed and directed-route SMPs alike.
	SMPDataOffset = 64
	// SMPDataLen is the size of the SMP attribute data.
	SMPDataLen = 64
)

// DRSMPHeader holds the fields a directed-route SMP adds to or reinterprets
// in the common header (IBA 14.2.1.2):
//
//	byte   4: D | Status (15 bits) ... 6: HopPointer  7: HopCount
//	byte  24: M_Key (64 bits)
//	byte  32: DrSLID (16 bits)   34: DrDLID (16 bits)
//	byte 128: InitialPath[64]   192: ReturnPath[64]
//
// The 15-bit status stays in Header.Status. Encode a DR SMP by marshaling
// the Header first and the DRSMPHeader after it: MarshalTo sets the D bit and
// overwrites bytes 6-7 (Header.ClassSpecific).
type DRSMPHeader struct {
	Direction   bool // the D bit: false outbound (requests), true on the way back
	HopPointer  uint8
	HopCount    uint8
	MKey        uint64
	DrSLID      rdma.LID // PermissiveLID while the path starts at the sender
	DrDLID      rdma.LID // PermissiveLID while the path runs to the destination
	InitialPath [MaxHops]byte
	ReturnPath  [MaxHops]byte
}

// UnmarshalBinary decodes the directed-route fields from a whole MAD.
func (d *DRSMPHeader) UnmarshalBinary(mad []byte) error {
	if len(mad) < Size {
		return &ShortError{What: "directed-route SMP", Need: Size, Have: len(mad)}
	}
	d.Direction = mad[4]&0x80 != 0
	d.HopPointer = mad[6]
	d.HopCount = mad[7]
	d.MKey = binary.BigEndian.Uint64(mad[MKeyOffset:])
	d.DrSLID = rdma.LID(binary.BigEndian.Uint16(mad[drSLIDOffset:]))
	d.DrDLID = rdma.LID(binary.BigEndian.Uint16(mad[drDLIDOffset:]))
	copy(d.InitialPath[:], mad[drInitialPathOffset:])
	copy(d.ReturnPath[:], mad[drReturnPathOffset:])
	return nil
}

// MarshalTo encodes the directed-route fields into a whole MAD whose common
// header is already in place, zeroing the reserved bytes 36-63.
func (d *DRSMPHeader) MarshalTo(mad []byte) error {
	if len(mad) < Size {
		return &ShortError{What: "directed-route SMP", Need: Size, Have: len(mad)}
	}
	if d.Direction {
		mad[4] |= 0x80
	} else {
		mad[4] &^= 0x80
	}
	mad[6] = d.HopPointer
	mad[7] = d.HopCount
	binary.BigEndian.PutUint64(mad[MKeyOffset:], d.MKey)
	binary.BigEndian.PutUint16(mad[drSLIDOffset:], uint16(d.DrSLID))
	binary.BigEndian.PutUint16(mad[drDLIDOffset:], uint16(d.DrDLID))
	clear(mad[drDLIDOffset+2 : SMPDataOffset])
	copy(mad[drInitialPathOffset:], d.InitialPath[:])
	copy(mad[drReturnPathOffset:], d.ReturnPath[:])
	return nil
}
