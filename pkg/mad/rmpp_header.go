package mad

import (
	"encoding/binary"
	"fmt"
)

// RMPP, the reliable multi-packet transaction protocol (IBA 13.6), carries
// general-services messages longer than one MAD: an SA GetTable response
// comes as DATA segments of one MAD each, which the receiver acknowledges
// window by window. Every segment repeats the first bytes of the message
// (the MAD header, the RMPP header and the class header) and carries the
// next slice of the data after them.

// RMPP header layout: bytes 24-35 of a MAD of an RMPP class.
const (
	RMPPHeaderOffset = 24
	RMPPHeaderLen    = 12
	// RMPPDataStart is where a segment's payload (as PayloadLength counts
	// it: the class header and the data) starts.
	RMPPDataStart = RMPPHeaderOffset + RMPPHeaderLen
)

// RMPPType is the RMPP packet type.
type RMPPType uint8

// RMPP packet types.
const (
	RMPPTypeData  RMPPType = 1
	RMPPTypeAck   RMPPType = 2
	RMPPTypeStop  RMPPType = 3
	RMPPTypeAbort RMPPType = 4
)

func (t RMPPType) String() string {
	switch t {
	case RMPPTypeData:
		return "DATA"
	case RMPPTypeAck:
		return "ACK"
	case RMPPTypeStop:
		return "STOP"
	case RMPPTypeAbort:
		return "ABORT"
	}
	return fmt.Sprintf("type %d", uint8(t))
}

// RMPPFlags are the low three bits of the RMPP header's fourth byte.
type RMPPFlags uint8

// RMPP flags.
const (
	RMPPActive RMPPFlags = 1 << 0 // the MAD takes part in an RMPP transfer
	RMPPFirst  RMPPFlags = 1 << 1 // the first segment
	RMPPLast   RMPPFlags = 1 << 2 // the last segment
)

// RMPP status codes (IBA 13.6.2.1, table 172).
const (
	RMPPStatusNormal      uint8 = 0
	RMPPStatusResources   uint8 = 1   // resources exhausted (STOP)
	RMPPStatusTimeTooLong uint8 = 118 // total time too long
	RMPPStatusBadLength   uint8 = 119 // inconsistent last and payload length
	RMPPStatusBadFirst    uint8 = 120 // inconsistent first and segment number
	RMPPStatusBadType     uint8 = 121 // bad RMPP type
	RMPPStatusWindowSmall uint8 = 122 // NewWindowLast too small
	RMPPStatusSegTooBig   uint8 = 123 // segment number too big
	RMPPStatusIllegal     uint8 = 124 // illegal status
	RMPPStatusBadVersion  uint8 = 125 // unsupported version
	RMPPStatusRetries     uint8 = 126 // too many retries
	RMPPStatusUnspecified uint8 = 127 // unspecified
)

// RMPPVersion is the RMPP version this package speaks (IBA 13.6.2.1).
const RMPPVersion uint8 = 1

// RMPPStatusText returns the spec's name of an RMPP status code.
func RMPPStatusText(s uint8) string {
	switch s {
	case RMPPStatusNormal:
		return "normal"
	case RMPPStatusResources:
		return "resources exhausted"
	case RMPPStatusTimeTooLong:
		return "total time too long"
	case RMPPStatusBadLength:
		return "inconsistent last and payload length"
	case RMPPStatusBadFirst:
		return "inconsistent first and segment number"
	case RMPPStatusBadType:
		return "bad RMPP type"
	case RMPPStatusWindowSmall:
		return "NewWindowLast too small"
	case RMPPStatusSegTooBig:
		return "segment number too big"
	case RMPPStatusIllegal:
		return "illegal status"
	case RMPPStatusBadVersion:
		return "unsupported version"
	case RMPPStatusRetries:
		return "too many retries"
	case RMPPStatusUnspecified:
		return "unspecified"
	}
	return fmt.Sprintf("status %d", s)
}

// RMPPHeader is the RMPP header of a MAD of an RMPP class.
type RMPPHeader struct {
	Version  uint8
	Type     RMPPType
	RespTime uint8 // RRespTime, 5 bits
	Flags    RMPPFlags
	Status   uint8
	// SegmentNumber numbers a DATA segment from 1; in an ACK it is the
	// last segment received in order.
	SegmentNumber uint32
	// PayloadLength is the DATA payload's length (in the first segment
	// the whole message's, in the last that segment's); in an ACK it is
	// NewWindowLast.
	PayloadLength uint32
}

// UnmarshalBinary decodes the RMPP header from a whole MAD.
func (h *RMPPHeader) UnmarshalBinary(m []byte) error {
	if len(m) < RMPPDataStart {
		return &ShortError{What: "RMPP header", Need: RMPPDataStart, Have: len(m)}
	}
	b := m[RMPPHeaderOffset:]
	h.Version = b[0]
	h.Type = RMPPType(b[1])
	h.RespTime = b[2] >> 3
	h.Flags = RMPPFlags(b[2] & 7)
	h.Status = b[3]
	h.SegmentNumber = binary.BigEndian.Uint32(b[4:])
	h.PayloadLength = binary.BigEndian.Uint32(b[8:])
	return nil
}

// MarshalTo encodes the RMPP header into a whole MAD m.
func (h *RMPPHeader) MarshalTo(m []byte) error {
	if len(m) < RMPPDataStart {
		return &ShortError{What: "RMPP header", Need: RMPPDataStart, Have: len(m)}
	}
	b := m[RMPPHeaderOffset:]
	b[0] = h.Version
	b[1] = byte(h.Type)
	b[2] = h.RespTime<<3 | byte(h.Flags&7)
	b[3] = h.Status
	binary.BigEndian.PutUint32(b[4:], h.SegmentNumber)
	binary.BigEndian.PutUint32(b[8:], h.PayloadLength)
	return nil
}

// IsRMPPActive reports whether MAD m of class c is part of an RMPP
// transfer: c is a class whose MADs carry the RMPP header and the header's
// Active flag is set.
func IsRMPPActive(c Class, m []byte) bool {
	return c.HasRMPP() && len(m) >= RMPPDataStart && RMPPFlags(m[RMPPHeaderOffset+2])&RMPPActive != 0
}

// HasRMPP reports whether the class's MADs carry the RMPP header and may
// come in RMPP transfers, among the classes ibtool speaks: the SA and
// vendor range 2 (ibsysstat's CPU list), as the kernel's
// ib_is_mad_class_rmpp.
func (c Class) HasRMPP() bool { return c == ClassSA || c.IsVendorRange2() }
