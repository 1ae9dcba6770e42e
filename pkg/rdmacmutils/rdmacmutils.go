package rdmacmutils

import (
	"encoding/binary"
	"fmt"
)

// RpingInfoSize is the size of rping's message on the wire.
const RpingInfoSize = 16

// RpingInfo is rping's one message: where a buffer is, the key that
// reaches it and its size. The client advertises its source buffer (for
// the server to RDMA READ) and then its sink (for the server to RDMA
// WRITE); the server's go-ahead messages carry zeros.
type RpingInfo struct {
	Addr uint64
	RKey uint32
	Size uint32
}

// AppendBinary appends the message's 16 bytes to b.
func (m RpingInfo) AppendBinary(b []byte) ([]byte, error) {
	b = binary.BigEndian.AppendUint64(b, m.Addr)
	b = binary.BigEndian.AppendUint32(b, m.RKey)
	return binary.BigEndian.AppendUint32(b, m.Size), nil
}

// MarshalBinary returns the message's 16 bytes.
func (m RpingInfo) MarshalBinary() ([]byte, error) {
	return m.AppendBinary(make([]byte, 0, RpingInfoSize))
}

// UnmarshalBinary decodes a message received, which must be 16 bytes
// (rping rejects any other size as bogus data); else it returns a
// *SizeError.
func (m *RpingInfo) UnmarshalBinary(b []byte) error {
	if len(b) != RpingInfoSize {
		return &SizeError{What: "rping message", Got: len(b), Want: RpingInfoSize}
	}
	*m = RpingInfo{
		Addr: binary.BigEndian.Uint64(b[0:]),
		RKey: binary.BigEndian.Uint32(b[8:]),
		Size: binary.BigEndian.Uint32(b[12:]),
	}
	return nil
}

// XRCSRQNumberSize is the size of rdma_xserver's private data.
const XRCSRQNumberSize = 4

// XRCSRQNumber is the number of the XRC shared receive queue rdma_xserver
// receives on, which it sends in its accept's private data and which an
// XRC client addresses its sends to.
type XRCSRQNumber uint32

// AppendBinary appends the number's 4 bytes to b.
func (n XRCSRQNumber) AppendBinary(b []byte) ([]byte, error) {
	return binary.BigEndian.AppendUint32(b, uint32(n)), nil
}

// MarshalBinary returns the number's 4 bytes, the private data of
// rdma_xserver's accept.
func (n XRCSRQNumber) MarshalBinary() ([]byte, error) {
	return n.AppendBinary(make([]byte, 0, XRCSRQNumberSize))
}

// UnmarshalBinary decodes the private data of the server's reply: at
// least 4 bytes, of which the first 4 are the number (the transport may
// pad private data: InfiniBand's REP carries 196 bytes of it); fewer is a
// *SizeError.
func (n *XRCSRQNumber) UnmarshalBinary(b []byte) error {
	if len(b) < XRCSRQNumberSize {
		return &SizeError{What: "XRC SRQ number", Got: len(b), Want: XRCSRQNumberSize, AtLeast: true}
	}
	*n = XRCSRQNumber(binary.BigEndian.Uint32(b))
	return nil
}

// SizeError is a message of the wrong size.
type SizeError struct {
	What      string // the message
	Got, Want int    // its size and the size it must have
	AtLeast   bool   // Want is the least it may have
}

func (e *SizeError) Error() string {
	if e.AtLeast {
		return fmt.Sprintf("%s: %d bytes, want at least %d", e.What, e.Got, e.Want)
	}
	return fmt.Sprintf("%s: %d bytes, want %d", e.What, e.Got, e.Want)
}
