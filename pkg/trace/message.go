package trace

import (
	"fmt"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
)

// Message is one reassembled message: an RDMA WRITE, SEND, RDMA READ
// (request and responses), atomic or UD datagram, with what it carried.
type Message struct {
	// Index numbers messages from 1 in the order their first packet was
	// captured.
	Index     int       `json:"index"`
	Frame     int       `json:"frame"`     // the first packet's frame
	LastFrame int       `json:"lastFrame"` // the last packet's frame
	Time      time.Time `json:"time"`
	// Src and Dst are the requester and the responder.
	Src       string    `json:"src"`
	Dst       string    `json:"dst"`
	Transport Transport `json:"transport"`
	Op        MessageOp `json:"op"`
	// QP is the responder's QP (the requests' destination QP); SrcQP the
	// requester's, from the DETH of a datagram, from the responses of an
	// RDMA READ or atomic, or from the CM messages that set the QP up.
	QP    uint32  `json:"qp"`
	SrcQP *uint32 `json:"srcQP,omitempty"`
	// FirstPSN and LastPSN are the message's PSN range; an RDMA READ's
	// responses reuse the request's PSNs from FirstPSN on.
	FirstPSN uint32 `json:"firstPSN"`
	LastPSN  uint32 `json:"lastPSN"`
	// Packets counts the distinct packets (duplicates are events, not
	// counted here); Responses the RDMA READ responses among them.
	Packets   int `json:"packets"`
	Responses int `json:"responses,omitempty"`
	// RETH: where an RDMA WRITE or READ went.
	RKey      *uint32 `json:"rkey,omitempty"`
	VA        *uint64 `json:"va,omitempty"`
	DMALength *uint32 `json:"dmaLength,omitempty"`
	// Immediate data and the R_Key a SEND with Invalidate invalidates.
	Immediate      *uint32 `json:"immediate,omitempty"`
	InvalidateRKey *uint32 `json:"invalidateRKey,omitempty"`
	// Atomic is an atomic request's header; OriginalData what the
	// responder's atomic acknowledgement returned.
	Atomic       *AtomicETH `json:"atomic,omitempty"`
	OriginalData *uint64    `json:"originalData,omitempty"`
	// Length is the bytes of payload the message moved on the wire;
	// Payload holds them (bytes the capture did not keep are zeros).
	Length  int    `json:"length"`
	Payload []byte `json:"-"`
	// Complete is true when every packet from first to last was
	// captured, with good ICRCs, and the length agrees with the RETH.
	Complete bool `json:"complete"`
	// Problems say what is wrong with the message, one sentence each.
	Problems []string `json:"problems,omitempty"`
	// MAD is the MAD header of a datagram to or from QP0 or QP1.
	MAD *mad.Header `json:"mad,omitempty"`
	// CM is the Communication Management message of a CM MAD; MPA an
	// iWARP connection's MPA Request or Reply.
	CM  *CMMessage     `json:"cm,omitempty"`
	MPA *MPAStartFrame `json:"mpa,omitempty"`
	// Connection is the index in Result.Connections of the connection
	// that set up the message's QP (or that its CM message or MPA frame
	// belongs to); 0 when the capture does not show one.
	Connection int `json:"connection,omitempty"`

	pmtuKnown bool
}

func (m *Message) problem(format string, a ...any) {
	m.Problems = append(m.Problems, fmt.Sprintf(format, a...))
}

// newMessage starts a message with its first packet.
func newMessage(p *Packet, op MessageOp) *Message {
	m := &Message{Frame: p.Frame, LastFrame: p.Frame, Time: p.Time, Src: p.Src, Dst: p.Dst,
		Transport: p.BTH.Opcode.Transport(), Op: op, QP: p.BTH.DestQP,
		FirstPSN: p.BTH.PSN, LastPSN: p.BTH.PSN, Complete: true}
	if r := p.RETH; r != nil {
		m.RKey, m.VA, m.DMALength = &r.RKey, &r.VA, &r.DMALength
	}
	if a := p.AtomicETH; a != nil {
		m.Atomic = a
		m.RKey, m.VA = &a.RKey, &a.VA
	}
	if p.DETH != nil {
		q := p.DETH.SrcQP
		m.SrcQP = &q
	}
	return m
}

// add appends a packet's data to the message.
func (m *Message) add(p *Packet) {
	m.Packets++
	m.LastFrame = max(m.LastFrame, p.Frame)
	m.LastPSN = p.BTH.PSN
	if p.ImmDt != nil {
		m.Immediate = p.ImmDt
	}
	if p.IETH != nil {
		m.InvalidateRKey = p.IETH
	}
	m.Length += p.PayloadLen
	m.Payload = append(m.Payload, p.Payload...)
	if missing := p.PayloadLen - len(p.Payload); missing > 0 {
		m.Payload = append(m.Payload, make([]byte, missing)...)
		m.problem("frame %d: %d bytes of payload not in the capture (snap length)", p.Frame, missing)
		m.Complete = false
	}
}

// finish checks the length against the RETH.
func (m *Message) finish() {
	if m.DMALength != nil && m.Complete && (m.Op == MsgWrite || m.Op == MsgRead) && uint32(m.Length) != *m.DMALength {
		m.problem("%d bytes moved, the RETH says %d", m.Length, *m.DMALength)
		m.Complete = false
	}
}

// incomplete marks the message incomplete for a reason.
func (m *Message) incomplete(format string, a ...any) {
	m.problem(format, a...)
	m.Complete = false
}
