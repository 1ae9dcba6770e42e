package trace

import (
	"encoding/binary"
	"fmt"
)

// RDMAProc is an RPC-over-RDMA version 1 message type (RFC 8166, rdma_proc).
type RDMAProc uint32

// The RPC-over-RDMA version 1 procedures. RDMA_MSGP and RDMA_DONE were
// deprecated by RFC 8166 but are still decoded.
const (
	RDMAMsg   RDMAProc = 0
	RDMANoMsg RDMAProc = 1
	RDMAMsgP  RDMAProc = 2
	RDMADone  RDMAProc = 3
	RDMAError RDMAProc = 4
)

// String returns the procedure's name, "RDMA_MSG", ...
func (p RDMAProc) String() string {
	switch p {
	case RDMAMsg:
		return "RDMA_MSG"
	case RDMANoMsg:
		return "RDMA_NOMSG"
	case RDMAMsgP:
		return "RDMA_MSGP"
	case RDMADone:
		return "RDMA_DONE"
	case RDMAError:
		return "RDMA_ERROR"
	}
	return fmt.Sprintf("proc %d", uint32(p))
}

// MarshalText prints the procedure by name in JSON.
func (p RDMAProc) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// RDMAErrCode is an RDMA_ERROR's reason (RFC 8166, rpc_rdma_errcode).
type RDMAErrCode uint32

// The RDMA_ERROR codes.
const (
	ErrVers  RDMAErrCode = 1
	ErrChunk RDMAErrCode = 2
)

// String returns the error's name, "ERR_VERS" or "ERR_CHUNK".
func (e RDMAErrCode) String() string {
	switch e {
	case ErrVers:
		return "ERR_VERS"
	case ErrChunk:
		return "ERR_CHUNK"
	}
	return fmt.Sprintf("error %d", uint32(e))
}

// MarshalText prints the error code by name in JSON.
func (e RDMAErrCode) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// RDMASegment is one registered memory region a chunk names: its handle
// (the R_Key, or the STag on iWARP), length and offset (the virtual
// address).
type RDMASegment struct {
	Handle uint32 `json:"handle"`
	Length uint32 `json:"length"`
	Offset uint64 `json:"offset"`
}

// ReadSegment is a read list entry: a segment and the XDR position of the
// data it holds in the RPC call.
type ReadSegment struct {
	Position uint32 `json:"position"`
	RDMASegment
}

// RPCRDMAHeader is an RPC-over-RDMA version 1 transport header, the start
// of every SEND on a connection that carries it.
type RPCRDMAHeader struct {
	XID     uint32   `json:"xid"`
	Vers    uint32   `json:"vers"`
	Credits uint32   `json:"credits"`
	Proc    RDMAProc `json:"proc"`
	// ReadList, WriteList and ReplyChunk are the chunk lists of
	// RDMA_MSG, RDMA_NOMSG and RDMA_MSGP. HasReplyChunk tells an empty
	// reply chunk from none.
	ReadList      []ReadSegment   `json:"readList,omitempty"`
	WriteList     [][]RDMASegment `json:"writeList,omitempty"`
	HasReplyChunk bool            `json:"hasReplyChunk,omitempty"`
	ReplyChunk    []RDMASegment   `json:"replyChunk,omitempty"`
	// Align and Thresh are RDMA_MSGP's padding parameters.
	Align  uint32 `json:"align,omitempty"`
	Thresh uint32 `json:"thresh,omitempty"`
	// Err is an RDMA_ERROR's code; VersLow and VersHigh the versions an
	// ERR_VERS says the peer supports.
	Err      RDMAErrCode `json:"err,omitempty"`
	VersLow  uint32      `json:"versLow,omitempty"`
	VersHigh uint32      `json:"versHigh,omitempty"`
	// Length is the header's size in bytes: what follows is RDMA_MSG's
	// RPC message.
	Length int `json:"length"`
}

// maxListItems bounds a chunk list so that a damaged header cannot make the
// decoder loop long; real ones carry a handful.
const maxListItems = 4096

// DecodeRPCRDMA decodes an RPC-over-RDMA version 1 transport header from
// the start of a SEND's payload. A header of another version decodes only
// its four fixed words.
func DecodeRPCRDMA(b []byte) (*RPCRDMAHeader, error) {
	x := &xdrReader{b: b}
	h := &RPCRDMAHeader{XID: x.u32(), Vers: x.u32(), Credits: x.u32(), Proc: RDMAProc(x.u32())}
	if x.err != nil {
		return nil, fmt.Errorf("RPC-over-RDMA header: %w", x.err)
	}
	if h.Vers != 1 {
		h.Length = x.off
		return h, fmt.Errorf("RPC-over-RDMA version %d, not 1", h.Vers)
	}
	switch h.Proc {
	case RDMAMsg, RDMANoMsg, RDMAMsgP:
		h.decodeChunks(x)
		if h.Proc == RDMAMsgP {
			h.Align, h.Thresh = x.u32(), x.u32()
		}
	case RDMADone:
	case RDMAError:
		h.Err = RDMAErrCode(x.u32())
		switch h.Err {
		case ErrVers:
			h.VersLow, h.VersHigh = x.u32(), x.u32()
		case ErrChunk:
		default:
			x.fail("unknown RDMA_ERROR code %d", uint32(h.Err))
		}
	default:
		x.fail("unknown procedure %d", uint32(h.Proc))
	}
	if x.err != nil {
		return nil, fmt.Errorf("RPC-over-RDMA header: %w", x.err)
	}
	h.Length = x.off
	return h, nil
}

func (h *RPCRDMAHeader) decodeChunks(x *xdrReader) {
	for n := 0; x.err == nil && x.bool(); n++ {
		if n == maxListItems {
			x.fail("more than %d read segments", maxListItems)
			return
		}
		h.ReadList = append(h.ReadList, ReadSegment{Position: x.u32(), RDMASegment: segment(x)})
	}
	for n := 0; x.err == nil && x.bool(); n++ {
		if n == maxListItems {
			x.fail("more than %d write chunks", maxListItems)
			return
		}
		h.WriteList = append(h.WriteList, segments(x))
	}
	if x.err == nil && x.bool() {
		h.HasReplyChunk = true
		h.ReplyChunk = segments(x)
	}
}

func segment(x *xdrReader) RDMASegment {
	return RDMASegment{Handle: x.u32(), Length: x.u32(), Offset: x.u64()}
}

// segments reads a write chunk: a counted array of segments.
func segments(x *xdrReader) []RDMASegment {
	n := x.u32()
	if x.err != nil {
		return nil
	}
	if uint64(n)*16 > uint64(x.rest()) {
		x.fail("a chunk of %d segments in %d bytes: %w", n, x.rest(), errShort)
		return nil
	}
	s := make([]RDMASegment, 0, n)
	for range n {
		s = append(s, segment(x))
	}
	return s
}

// AppendBinary encodes the header (its Length is not used) after b.
func (h *RPCRDMAHeader) AppendBinary(b []byte) []byte {
	w := &xdrWriter{b: b}
	w.u32(h.XID)
	w.u32(h.Vers)
	w.u32(h.Credits)
	w.u32(uint32(h.Proc))
	seg := func(s RDMASegment) {
		w.u32(s.Handle)
		w.u32(s.Length)
		w.u64(s.Offset)
	}
	chunk := func(c []RDMASegment) {
		w.u32(uint32(len(c)))
		for _, s := range c {
			seg(s)
		}
	}
	switch h.Proc {
	case RDMAMsg, RDMANoMsg, RDMAMsgP:
		for _, r := range h.ReadList {
			w.u32(1)
			w.u32(r.Position)
			seg(r.RDMASegment)
		}
		w.u32(0)
		for _, c := range h.WriteList {
			w.u32(1)
			chunk(c)
		}
		w.u32(0)
		if h.HasReplyChunk {
			w.u32(1)
			chunk(h.ReplyChunk)
		} else {
			w.u32(0)
		}
		if h.Proc == RDMAMsgP {
			w.u32(h.Align)
			w.u32(h.Thresh)
		}
	case RDMAError:
		w.u32(uint32(h.Err))
		if h.Err == ErrVers {
			w.u32(h.VersLow)
			w.u32(h.VersHigh)
		}
	}
	return w.b
}

// LooksLikeRPCRDMA reports whether a SEND's payload has the shape of an
// RPC-over-RDMA version 1 message, for finding the connections that carry
// it without being told: a header that decodes whole, and after it either
// an RPC message with the same XID (RDMA_MSG) or nothing (RDMA_NOMSG,
// RDMA_ERROR, RDMA_DONE).
func LooksLikeRPCRDMA(payload []byte) bool {
	h, err := DecodeRPCRDMA(payload)
	if err != nil {
		return false
	}
	rest := payload[h.Length:]
	switch h.Proc {
	case RDMAMsg, RDMAMsgP:
		if len(rest) < 8 {
			return false
		}
		xid, typ := binary.BigEndian.Uint32(rest), binary.BigEndian.Uint32(rest[4:])
		return xid == h.XID && typ <= 1
	case RDMANoMsg:
		return len(rest) == 0 && (len(h.ReadList) > 0 || h.HasReplyChunk)
	default:
		return len(rest) == 0
	}
}
