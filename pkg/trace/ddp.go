package trace

import (
	"encoding/binary"
	"fmt"
)

// RDMAPOpcode is an RDMAP (RFC 5040, RFC 7306) message type, carried in
// the DDP header's upper-layer byte.
type RDMAPOpcode uint8

// The RDMAP opcodes.
const (
	RDMAPWrite        RDMAPOpcode = 0
	RDMAPReadRequest  RDMAPOpcode = 1
	RDMAPReadResponse RDMAPOpcode = 2
	RDMAPSend         RDMAPOpcode = 3
	RDMAPSendInv      RDMAPOpcode = 4
	RDMAPSendSE       RDMAPOpcode = 5
	RDMAPSendSEInv    RDMAPOpcode = 6
	RDMAPTerminate    RDMAPOpcode = 7
	RDMAPImmediate    RDMAPOpcode = 8
	RDMAPImmediateSE  RDMAPOpcode = 9
	RDMAPAtomicReq    RDMAPOpcode = 10
	RDMAPAtomicResp   RDMAPOpcode = 11
)

var rdmapNames = [...]string{"RDMA Write", "RDMA Read Request", "RDMA Read Response", "Send", "Send with Invalidate",
	"Send with SE", "Send with SE and Invalidate", "Terminate", "Immediate Data", "Immediate Data with SE",
	"Atomic Request", "Atomic Response"}

// String returns the message type's name, "Send", "RDMA Write", ...
func (o RDMAPOpcode) String() string {
	if int(o) < len(rdmapNames) {
		return rdmapNames[o]
	}
	return fmt.Sprintf("RDMAP opcode %d", uint8(o))
}

// MarshalText names the opcode in JSON.
func (o RDMAPOpcode) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// ReadRequest is the body of an RDMA Read Request: read Size bytes at
// SrcTO of the responder's SrcSTag into SinkTO of the requester's SinkSTag.
type ReadRequest struct {
	SinkSTag uint32 `json:"sinkSTag"`
	SinkTO   uint64 `json:"sinkTO"`
	Size     uint32 `json:"size"`
	SrcSTag  uint32 `json:"srcSTag"`
	SrcTO    uint64 `json:"srcTO"`
}

// DDPSegment is a DDP segment (RFC 5041) with its RDMAP header: tagged
// (STag and tagged offset) or untagged (queue, message sequence number and
// offset), and its payload.
type DDPSegment struct {
	Tagged bool        `json:"tagged"`
	Last   bool        `json:"last"`
	Opcode RDMAPOpcode `json:"opcode"`
	STag   uint32      `json:"stag,omitempty"`
	TO     uint64      `json:"to,omitempty"`
	// RsvdULP carries a Send with Invalidate's STag.
	RsvdULP uint32       `json:"rsvdULP,omitempty"`
	QN      uint32       `json:"qn,omitempty"`
	MSN     uint32       `json:"msn,omitempty"`
	MO      uint32       `json:"mo,omitempty"`
	Read    *ReadRequest `json:"read,omitempty"`
	Payload []byte       `json:"-"`
}

const (
	ddpTaggedLen   = 14
	ddpUntaggedLen = 18
	readRequestLen = 28
)

// plausibleDDP reports whether b starts like a DDP segment with an RDMAP
// header: DDP version 1, RDMAP version 1, reserved bits clear.
func plausibleDDP(b []byte) bool {
	return len(b) >= ddpTaggedLen && b[0]&0x3f == 0x01 && b[1]&0xf0 == 0x40 && b[1]&0x0f <= uint8(RDMAPAtomicResp)
}

// DecodeDDP decodes a DDP segment and its RDMAP header.
func DecodeDDP(b []byte) (*DDPSegment, error) {
	if len(b) < 2 {
		return nil, fmt.Errorf("DDP header: %w", errShort)
	}
	if v := b[0] & 0x03; v != 1 {
		return nil, fmt.Errorf("DDP version %d, not 1", v)
	}
	if v := b[1] >> 6; v != 1 {
		return nil, fmt.Errorf("RDMAP version %d, not 1", v)
	}
	d := &DDPSegment{Tagged: b[0]&0x80 != 0, Last: b[0]&0x40 != 0, Opcode: RDMAPOpcode(b[1] & 0x0f)}
	if d.Tagged {
		if len(b) < ddpTaggedLen {
			return nil, fmt.Errorf("DDP tagged header: %w", errShort)
		}
		d.STag, d.TO = binary.BigEndian.Uint32(b[2:]), binary.BigEndian.Uint64(b[6:])
		d.Payload = b[ddpTaggedLen:]
		return d, nil
	}
	if len(b) < ddpUntaggedLen {
		return nil, fmt.Errorf("DDP untagged header: %w", errShort)
	}
	d.RsvdULP, d.QN = binary.BigEndian.Uint32(b[2:]), binary.BigEndian.Uint32(b[6:])
	d.MSN, d.MO = binary.BigEndian.Uint32(b[10:]), binary.BigEndian.Uint32(b[14:])
	d.Payload = b[ddpUntaggedLen:]
	if d.Opcode == RDMAPReadRequest {
		if len(d.Payload) < readRequestLen {
			return nil, fmt.Errorf("RDMA Read Request: %w", errShort)
		}
		d.Payload = d.Payload[:readRequestLen]
		p := d.Payload
		d.Read = &ReadRequest{SinkSTag: binary.BigEndian.Uint32(p), SinkTO: binary.BigEndian.Uint64(p[4:]),
			Size: binary.BigEndian.Uint32(p[12:]), SrcSTag: binary.BigEndian.Uint32(p[16:]), SrcTO: binary.BigEndian.Uint64(p[20:])}
	}
	return d, nil
}

// AppendBinary encodes the segment after b (a Read Request's body from
// Read, its Payload ignored).
func (d *DDPSegment) AppendBinary(b []byte) []byte {
	c := byte(0x01)
	if d.Tagged {
		c |= 0x80
	}
	if d.Last {
		c |= 0x40
	}
	b = append(b, c, 0x40|byte(d.Opcode)&0x0f)
	if d.Tagged {
		b = binary.BigEndian.AppendUint32(b, d.STag)
		b = binary.BigEndian.AppendUint64(b, d.TO)
		return append(b, d.Payload...)
	}
	for _, v := range []uint32{d.RsvdULP, d.QN, d.MSN, d.MO} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	if r := d.Read; r != nil {
		b = binary.BigEndian.AppendUint32(b, r.SinkSTag)
		b = binary.BigEndian.AppendUint64(b, r.SinkTO)
		b = binary.BigEndian.AppendUint32(b, r.Size)
		b = binary.BigEndian.AppendUint32(b, r.SrcSTag)
		return binary.BigEndian.AppendUint64(b, r.SrcTO)
	}
	return append(b, d.Payload...)
}
