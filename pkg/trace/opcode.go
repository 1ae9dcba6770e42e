package trace

import "fmt"

// Transport is the service a BTH opcode belongs to: its top three bits.
type Transport uint8

// The transports of IBA table 35 (opcode field), with CNP from the RoCEv2
// annex and XRC from the XRC annex.
const (
	TransportRC     Transport = 0 // reliable connection
	TransportUC     Transport = 1 // unreliable connection
	TransportRD     Transport = 2 // reliable datagram
	TransportUD     Transport = 3 // unreliable datagram
	TransportCNP    Transport = 4 // RoCEv2 congestion notification
	TransportXRC    Transport = 5 // extended reliable connection
	TransportVendor Transport = 6 // manufacturer specific (6 and 7)
	// TransportIWARP marks iWARP messages (RDMAP over DDP over MPA over
	// TCP), which have no BTH.
	TransportIWARP Transport = 8
)

var transportNames = [...]string{"RC", "UC", "RD", "UD", "CNP", "XRC", "vendor", "vendor", "iWARP"}

// String returns the transport's abbreviation, "RC", "UD", ...
func (t Transport) String() string {
	if int(t) < len(transportNames) {
		return transportNames[t]
	}
	return fmt.Sprintf("transport(%d)", uint8(t))
}

// MarshalText makes a transport its abbreviation in JSON.
func (t Transport) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// Opcode is the BTH opcode: the transport in the top three bits, the
// operation in the low five.
type Opcode uint8

// Transport returns the opcode's transport.
func (o Opcode) Transport() Transport {
	t := Transport(o >> 5)
	if t > TransportVendor {
		return TransportVendor
	}
	return t
}

// Operation returns the low five bits: the operation within the transport.
func (o Opcode) Operation() Operation { return Operation(o & 0x1f) }

// Operation is an opcode's low five bits.
type Operation uint8

// The operations of IBA table 35 (and FLUSH and ATOMIC WRITE, added by
// the IBA 1.5 memory placement extensions).
const (
	OpSendFirst          Operation = 0x00
	OpSendMiddle         Operation = 0x01
	OpSendLast           Operation = 0x02
	OpSendLastImm        Operation = 0x03
	OpSendOnly           Operation = 0x04
	OpSendOnlyImm        Operation = 0x05
	OpWriteFirst         Operation = 0x06
	OpWriteMiddle        Operation = 0x07
	OpWriteLast          Operation = 0x08
	OpWriteLastImm       Operation = 0x09
	OpWriteOnly          Operation = 0x0a
	OpWriteOnlyImm       Operation = 0x0b
	OpReadRequest        Operation = 0x0c
	OpReadResponseFirst  Operation = 0x0d
	OpReadResponseMiddle Operation = 0x0e
	OpReadResponseLast   Operation = 0x0f
	OpReadResponseOnly   Operation = 0x10
	OpAcknowledge        Operation = 0x11
	OpAtomicAcknowledge  Operation = 0x12
	OpCompareSwap        Operation = 0x13
	OpFetchAdd           Operation = 0x14
	OpResync             Operation = 0x15
	OpSendLastInvalidate Operation = 0x16
	OpSendOnlyInvalidate Operation = 0x17
	OpFlush              Operation = 0x1c
	OpAtomicWrite        Operation = 0x1d
)

// operationNames and opHeaders are arrays indexed by the five-bit
// operation, which the compiler lays out as data: maps would be built by
// the package's init at every start of every tool.
var operationNames = [32]string{
	OpSendFirst:          "SEND First",
	OpSendMiddle:         "SEND Middle",
	OpSendLast:           "SEND Last",
	OpSendLastImm:        "SEND Last with Immediate",
	OpSendOnly:           "SEND Only",
	OpSendOnlyImm:        "SEND Only with Immediate",
	OpWriteFirst:         "RDMA WRITE First",
	OpWriteMiddle:        "RDMA WRITE Middle",
	OpWriteLast:          "RDMA WRITE Last",
	OpWriteLastImm:       "RDMA WRITE Last with Immediate",
	OpWriteOnly:          "RDMA WRITE Only",
	OpWriteOnlyImm:       "RDMA WRITE Only with Immediate",
	OpReadRequest:        "RDMA READ Request",
	OpReadResponseFirst:  "RDMA READ Response First",
	OpReadResponseMiddle: "RDMA READ Response Middle",
	OpReadResponseLast:   "RDMA READ Response Last",
	OpReadResponseOnly:   "RDMA READ Response Only",
	OpAcknowledge:        "Acknowledge",
	OpAtomicAcknowledge:  "ATOMIC Acknowledge",
	OpCompareSwap:        "CmpSwap",
	OpFetchAdd:           "FetchAdd",
	OpResync:             "RESYNC",
	OpSendLastInvalidate: "SEND Last with Invalidate",
	OpSendOnlyInvalidate: "SEND Only with Invalidate",
	OpFlush:              "FLUSH",
	OpAtomicWrite:        "ATOMIC WRITE",
}

// String names the opcode as IBA table 35 does, with its transport:
// "RC RDMA WRITE First", "UD SEND Only", "CNP".
func (o Opcode) String() string {
	if o == OpcodeCNP {
		return "CNP"
	}
	if _, ok := headersOf(o); !ok {
		return fmt.Sprintf("%v opcode %#02x", o.Transport(), uint8(o))
	}
	return o.Transport().String() + " " + operationNames[o.Operation()]
}

// MarshalText makes an opcode its name in JSON.
func (o Opcode) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// OpcodeCNP is the RoCEv2 congestion notification packet's opcode.
const OpcodeCNP Opcode = 0x81

// Header bits: which extended transport headers follow the BTH, in the
// order they appear on the wire.
type ethSet uint16

const (
	hasRDETH ethSet = 1 << iota
	hasDETH
	hasXRCETH
	hasRETH
	hasFETH
	hasAtomicETH
	hasAETH
	hasAtomicAckETH
	hasImmDt
	hasIETH
	hasPayload // the opcode carries data
)

// Sizes of the extended transport headers (IBA 9.3).
const (
	bthLen          = 12
	rdethLen        = 4
	dethLen         = 8
	xrcethLen       = 4
	rethLen         = 16
	fethLen         = 4
	atomicETHLen    = 28
	aethLen         = 4
	atomicAckETHLen = 8
	immDtLen        = 4
	iethLen         = 4
	icrcLen         = 4
	cnpPayloadLen   = 16
)

// opHeaders lists, for the RC transport, the headers each operation
// carries after the BTH (IBA table 38); other transports derive from it.
// An operation it has no entry for (0) is reserved for RC.
var opHeaders = [32]ethSet{
	OpSendFirst:          hasPayload,
	OpSendMiddle:         hasPayload,
	OpSendLast:           hasPayload,
	OpSendLastImm:        hasImmDt | hasPayload,
	OpSendOnly:           hasPayload,
	OpSendOnlyImm:        hasImmDt | hasPayload,
	OpWriteFirst:         hasRETH | hasPayload,
	OpWriteMiddle:        hasPayload,
	OpWriteLast:          hasPayload,
	OpWriteLastImm:       hasImmDt | hasPayload,
	OpWriteOnly:          hasRETH | hasPayload,
	OpWriteOnlyImm:       hasRETH | hasImmDt | hasPayload,
	OpReadRequest:        hasRETH,
	OpReadResponseFirst:  hasAETH | hasPayload,
	OpReadResponseMiddle: hasPayload,
	OpReadResponseLast:   hasAETH | hasPayload,
	OpReadResponseOnly:   hasAETH | hasPayload,
	OpAcknowledge:        hasAETH,
	OpAtomicAcknowledge:  hasAETH | hasAtomicAckETH,
	OpCompareSwap:        hasAtomicETH,
	OpFetchAdd:           hasAtomicETH,
	OpSendLastInvalidate: hasIETH | hasPayload,
	OpSendOnlyInvalidate: hasIETH | hasPayload,
	OpFlush:              hasFETH | hasRETH,
	OpAtomicWrite:        hasRETH | hasPayload,
}

// headersOf returns the headers an opcode carries after its BTH, and
// false for opcodes the spec reserves.
func headersOf(o Opcode) (ethSet, bool) {
	op := o.Operation()
	switch o.Transport() {
	case TransportRC:
		return rcHeaders(op)
	case TransportUC:
		if op > OpWriteOnlyImm {
			return 0, false
		}
		h, _ := rcHeaders(op)
		return h, true
	case TransportRD:
		if op > OpResync || op == OpFlush || op == OpAtomicWrite {
			return 0, false
		}
		if op == OpResync {
			return hasRDETH | hasDETH, true
		}
		h, _ := rcHeaders(op)
		h |= hasRDETH
		if isRequest(op) {
			h |= hasDETH
		}
		return h, true
	case TransportUD:
		switch op {
		case OpSendOnly:
			return hasDETH | hasPayload, true
		case OpSendOnlyImm:
			return hasDETH | hasImmDt | hasPayload, true
		}
		return 0, false
	case TransportCNP:
		return 0, o == OpcodeCNP
	case TransportXRC:
		h, ok := rcHeaders(op)
		if ok && isRequest(op) {
			h |= hasXRCETH
		}
		return h, ok
	}
	return 0, false
}

// rcHeaders returns opHeaders' entry for an operation, and false for one
// RC reserves.
func rcHeaders(op Operation) (ethSet, bool) {
	if int(op) >= len(opHeaders) {
		return 0, false
	}
	h := opHeaders[op]
	return h, h != 0
}

// isRequest reports whether an operation goes from requester to
// responder (everything but read responses and acknowledgements).
func isRequest(op Operation) bool {
	switch op {
	case OpReadResponseFirst, OpReadResponseMiddle, OpReadResponseLast, OpReadResponseOnly,
		OpAcknowledge, OpAtomicAcknowledge:
		return false
	}
	return true
}

// packetPosition says where a packet sits in a multi-packet message.
type packetPosition uint8

const (
	posOnly packetPosition = iota
	posFirst
	posMiddle
	posLast
)

// position returns where an operation's packet sits in its message.
func (op Operation) position() packetPosition {
	switch op {
	case OpSendFirst, OpWriteFirst, OpReadResponseFirst:
		return posFirst
	case OpSendMiddle, OpWriteMiddle, OpReadResponseMiddle:
		return posMiddle
	case OpSendLast, OpSendLastImm, OpSendLastInvalidate, OpWriteLast, OpWriteLastImm, OpReadResponseLast:
		return posLast
	}
	return posOnly
}

// kind returns the message an operation's packet belongs to.
func (op Operation) kind() MessageOp {
	switch {
	case op <= OpSendOnlyImm, op == OpSendLastInvalidate, op == OpSendOnlyInvalidate:
		return MsgSend
	case op <= OpWriteOnlyImm:
		return MsgWrite
	case op <= OpReadResponseOnly:
		return MsgRead
	case op == OpCompareSwap:
		return MsgCompareSwap
	case op == OpFetchAdd:
		return MsgFetchAdd
	case op == OpFlush:
		return MsgFlush
	case op == OpAtomicWrite:
		return MsgAtomicWrite
	case op == OpResync:
		return MsgResync
	}
	return ""
}

// MessageOp names what a reassembled message did.
type MessageOp string

// The message operations.
const (
	MsgSend        MessageOp = "SEND"
	MsgWrite       MessageOp = "RDMA WRITE"
	MsgRead        MessageOp = "RDMA READ"
	MsgCompareSwap MessageOp = "CMP SWAP"
	MsgFetchAdd    MessageOp = "FETCH ADD"
	MsgFlush       MessageOp = "FLUSH"
	MsgAtomicWrite MessageOp = "ATOMIC WRITE"
	MsgResync      MessageOp = "RESYNC"
	MsgMPARequest  MessageOp = "MPA Request" // an iWARP connection's MPA Request frame
	MsgMPAReply    MessageOp = "MPA Reply"   // its MPA Reply frame
)

// String names the operation as IBA table 35 does: "RDMA WRITE First".
func (op Operation) String() string {
	if int(op) < len(operationNames) && operationNames[op] != "" {
		return operationNames[op]
	}
	return fmt.Sprintf("operation %#02x", uint8(op))
}
