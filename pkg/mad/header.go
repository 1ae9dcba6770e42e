package mad

import (
	"encoding/binary"
	"fmt"
)

// Sizes of a MAD and of its common header.
const (
	Size      = 256 // bytes in one MAD (one RMPP segment)
	HeaderLen = 24  // bytes in the common MAD header
)

// BaseVersion is the only MAD base version InfiniBand defines.
const BaseVersion = 1

// AttrID is a MAD attribute ID (bytes 16-17 of the header). Its meaning
// depends on the class.
type AttrID uint16

// Header is the common MAD header, the first 24 bytes of every MAD
// (IBA 13.4.2):
//
//	byte    0            1           2              3
//	     +------------+-----------+--------------+---+---------+
//	   0 | BaseVersion| MgmtClass | ClassVersion | R |  Method |
//	     +------------+-----------+--------------+---+---------+
//	   4 |          Status        |       ClassSpecific        |
//	     +------------------------+----------------------------+
//	   8 |                 TransactionID (64 bits)             |
//	     +------------------------+----------------------------+
//	  16 |        AttributeID     |          Reserved          |
//	     +------------------------+----------------------------+
//	  20 |                 AttributeModifier                   |
//	     +-----------------------------------------------------+
//
// In a directed-route SMP bytes 4-7 hold the D bit, a 15-bit status, the hop
// pointer and the hop count; Header keeps them as raw Status and
// ClassSpecific and DRSMPHeader interprets them.
type Header struct {
	BaseVersion   uint8
	MgmtClass     Class
	ClassVersion  uint8
	Method        Method // with the R bit
	Status        Status
	ClassSpecific uint16
	TID           uint64
	AttrID        AttrID
	AttrMod       uint32
}

// ShortError reports a buffer too short for what was to be read or written.
type ShortError struct {
	What string // "MAD header", "directed-route SMP", ...
	Need int    // bytes required
	Have int    // bytes given
}

func (e *ShortError) Error() string {
	return fmt.Sprintf("%s: need %d bytes, have %d", e.What, e.Need, e.Have)
}

// UnmarshalBinary decodes the header from the first HeaderLen bytes of b.
// The reserved bytes 18-19 are ignored.
func (h *Header) UnmarshalBinary(b []byte) error {
	if len(b) < HeaderLen {
		return &ShortError{What: "MAD header", Need: HeaderLen, Have: len(b)}
	}
	h.BaseVersion = b[0]
	h.MgmtClass = Class(b[1])
	h.ClassVersion = b[2]
	h.Method = Method(b[3])
	h.Status = Status(binary.BigEndian.Uint16(b[4:]))
	h.ClassSpecific = binary.BigEndian.Uint16(b[6:])
	h.TID = binary.BigEndian.Uint64(b[8:])
	h.AttrID = AttrID(binary.BigEndian.Uint16(b[16:]))
	h.AttrMod = binary.BigEndian.Uint32(b[20:])
	return nil
}

// MarshalTo encodes the header into the first HeaderLen bytes of b, which is
// usually a whole MAD buffer. The reserved bytes 18-19 are zeroed.
func (h *Header) MarshalTo(b []byte) error {
	if len(b) < HeaderLen {
		return &ShortError{What: "MAD header", Need: HeaderLen, Have: len(b)}
	}
	b[0] = h.BaseVersion
	b[1] = byte(h.MgmtClass)
	b[2] = h.ClassVersion
	b[3] = byte(h.Method)
	binary.BigEndian.PutUint16(b[4:], uint16(h.Status))
	binary.BigEndian.PutUint16(b[6:], h.ClassSpecific)
	binary.BigEndian.PutUint64(b[8:], h.TID)
	binary.BigEndian.PutUint16(b[16:], uint16(h.AttrID))
	b[18], b[19] = 0, 0
	binary.BigEndian.PutUint32(b[20:], h.AttrMod)
	return nil
}

// AppendBinary appends the HeaderLen-byte encoding of the header to b.
func (h *Header) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, make([]byte, HeaderLen)...)
	return b, h.MarshalTo(b[len(b)-HeaderLen:])
}

// MarshalBinary returns the HeaderLen-byte encoding of the header.
func (h *Header) MarshalBinary() ([]byte, error) {
	return h.AppendBinary(make([]byte, 0, HeaderLen))
}
