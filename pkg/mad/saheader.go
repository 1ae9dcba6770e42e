package mad

import "encoding/binary"

// SAHeaderEnd is where an SA MAD's data (its records) starts: after the
// common, RMPP and SA headers.
const SAHeaderEnd = 56

// SAHeader is the SA class header of a subnet administration MAD
// (IBA 15.2.1.1), after the common and RMPP headers:
//
//	byte 36: SM_Key (64 bits)
//	byte 44: AttributeOffset (16 bits)   46: reserved (16 bits)
//	byte 48: ComponentMask (64 bits)
type SAHeader struct {
	SMKey uint64
	// AttributeOffset is the distance between records in a GetTable
	// response, in 8-byte words.
	AttributeOffset uint16
	// ComponentMask says which record components select, in a request.
	ComponentMask uint64
}

// UnmarshalBinary decodes the SA header from a whole MAD m (at least its
// first SAHeaderEnd bytes).
func (h *SAHeader) UnmarshalBinary(m []byte) error {
	if len(m) < SAHeaderEnd {
		return &ShortError{What: "SA header", Need: SAHeaderEnd, Have: len(m)}
	}
	h.SMKey = binary.BigEndian.Uint64(m[SASMKeyOffset:])
	h.AttributeOffset = binary.BigEndian.Uint16(m[SAAttributeOffsetOffset:])
	h.ComponentMask = binary.BigEndian.Uint64(m[SAComponentMaskOffset:])
	return nil
}

// MarshalTo encodes the SA header into a whole MAD m, zeroing its
// reserved bytes 46-47.
func (h *SAHeader) MarshalTo(m []byte) error {
	if len(m) < SAHeaderEnd {
		return &ShortError{What: "SA header", Need: SAHeaderEnd, Have: len(m)}
	}
	binary.BigEndian.PutUint64(m[SASMKeyOffset:], h.SMKey)
	binary.BigEndian.PutUint16(m[SAAttributeOffsetOffset:], h.AttributeOffset)
	clear(m[SAAttributeOffsetOffset+2 : SAComponentMaskOffset])
	binary.BigEndian.PutUint64(m[SAComponentMaskOffset:], h.ComponentMask)
	return nil
}

// RecordLen is the distance between records in bytes, from
// AttributeOffset.
func (h *SAHeader) RecordLen() int { return int(h.AttributeOffset) * 8 }

// The SA header (IBA 15.2.1.1): after the RMPP header, the SM_Key, the
// AttributeOffset (in 8-byte words) and the ComponentMask.
const (
	// SASMKeyOffset is where the SM_Key is.
	SASMKeyOffset = 36
	// SAAttributeOffsetOffset is where the AttributeOffset is.
	SAAttributeOffsetOffset = 44
	// SAComponentMaskOffset is where the ComponentMask is.
	SAComponentMaskOffset = 48
)
