package madrpc

import "github.com/ibtool/ibtool/pkg/mad"

// RMPPTestReceiver exposes the Transactor's RMPP receiver to the external
// tests, which drive it against an RMPPSender.
type RMPPTestReceiver struct{ r *rmppReceiver }

// NewRMPPTestReceiver returns a receiver of data after hdrLen header
// bytes that grants window segments per ACK.
func NewRMPPTestReceiver(hdrLen int, window uint32) *RMPPTestReceiver {
	r := newRMPPReceiver(hdrLen)
	r.window = window
	return &RMPPTestReceiver{r: r}
}

// Add takes one segment and returns the ACK the receiver sends, or nil.
func (t *RMPPTestReceiver) Add(m []byte) []byte {
	step, err := t.r.add(m)
	if err != nil || !step.ack {
		return nil
	}
	return rmppReply(m, t.r.hdrLen, mad.RMPPHeader{Type: mad.RMPPTypeAck, SegmentNumber: step.seg, PayloadLength: step.win})
}

// Message returns the message reassembled so far.
func (t *RMPPTestReceiver) Message() []byte { return t.r.message() }
