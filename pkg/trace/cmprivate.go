package trace

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// rdmaCMHeaderLen is the size of the header rdma_cm puts at the start of
// a REQ's private data for an IP service ID (IBA annex A11): version,
// IP version, source port, source and destination address.
const rdmaCMHeaderLen = 36

// RDMACMHeader is the IP addressing rdma_cm sends in a REQ's private data
// (IBA annex A11, "RDMA IP CM Service"): the connecting side's address
// and port and the address it connected to; the port it connected to is
// in the service ID.
type RDMACMHeader struct {
	Version   uint8      `json:"version"`
	IPVersion uint8      `json:"ipVersion"`
	Protocol  uint8      `json:"protocol"` // the service ID's IP protocol (6 TCP, 17 UDP, 0x3f IB)
	SrcPort   uint16     `json:"srcPort"`
	DstPort   uint16     `json:"dstPort"` // from the service ID
	Src       netip.Addr `json:"src"`
	Dst       netip.Addr `json:"dst"`
}

// IPService splits a service ID of rdma_cm's IP form,
// 0x0000000001PPpppp: the port space (PP, an IP protocol number: 0x06
// TCP, 0x11 UDP, 0x3f IB) and the port.
func IPService(sid uint64) (protocol uint8, port uint16, ok bool) {
	if sid>>24 != 1 {
		return 0, 0, false
	}
	return uint8(sid >> 16), uint16(sid), true
}

// ServiceName describes a service ID: "rdma_cm TCP port 20049" for
// rdma_cm's IP services, the hex number otherwise.
func ServiceName(sid uint64) string {
	proto, port, ok := IPService(sid)
	if !ok {
		return fmt.Sprintf("service %#016x", sid)
	}
	return fmt.Sprintf("rdma_cm %s port %d", portSpaceName(proto), port)
}

func portSpaceName(p uint8) string {
	switch p {
	case 0x06:
		return "TCP"
	case 0x11:
		return "UDP"
	case 0x3f:
		return "IB"
	}
	return fmt.Sprintf("port space %#02x", p)
}

// decodeRDMACMHeader reads rdma_cm's header from a REQ's private data
// when the service ID is of the IP form and the header's version fields
// say it is one.
func decodeRDMACMHeader(sid uint64, pd []byte) (*RDMACMHeader, bool) {
	proto, port, ok := IPService(sid)
	if !ok || len(pd) < rdmaCMHeaderLen || pd[0] != 0 {
		return nil, false
	}
	h := &RDMACMHeader{Version: pd[0], IPVersion: pd[1] >> 4, Protocol: proto, DstPort: port,
		SrcPort: binary.BigEndian.Uint16(pd[2:])}
	switch h.IPVersion {
	case 4:
		h.Src = netip.AddrFrom4([4]byte(pd[16:20]))
		h.Dst = netip.AddrFrom4([4]byte(pd[32:36]))
	case 6:
		h.Src = netip.AddrFrom16([16]byte(pd[4:20]))
		h.Dst = netip.AddrFrom16([16]byte(pd[20:36]))
	default:
		return nil, false
	}
	return h, true
}

// AppendBinary appends the header as rdma_cm sends it.
func (h *RDMACMHeader) AppendBinary(b []byte) []byte {
	var d [rdmaCMHeaderLen]byte
	d[0], d[1] = h.Version, h.IPVersion<<4
	binary.BigEndian.PutUint16(d[2:], h.SrcPort)
	if h.IPVersion == 4 {
		s, t := h.Src.As4(), h.Dst.As4()
		copy(d[16:20], s[:])
		copy(d[32:36], t[:])
	} else {
		s, t := h.Src.As16(), h.Dst.As16()
		copy(d[4:20], s[:])
		copy(d[20:36], t[:])
	}
	return append(b, d[:]...)
}

// rpcRDMAConnectMagic starts the private data of an RPC-over-RDMA
// connection (RFC 8797).
const rpcRDMAConnectMagic = 0xf6ab0e18

// ConnectPrivate is what a connection's user put in its private data, when
// trace knows the format. RPC-over-RDMA (RFC 8797) is the one it knows:
// the version, whether the sender accepts Remote Invalidation, and the
// largest inline message it sends and receives.
type ConnectPrivate struct {
	Protocol         string `json:"protocol"` // "RPC-over-RDMA"
	Version          uint8  `json:"version"`
	RemoteInvalidate bool   `json:"remoteInvalidate"`
	InlineSend       int    `json:"inlineSend"` // bytes
	InlineRecv       int    `json:"inlineRecv"` // bytes
}

// decodeConnectPrivate recognizes RPC-over-RDMA's connection private
// data at the start of b; nil for anything else.
func decodeConnectPrivate(b []byte) *ConnectPrivate {
	if len(b) < 8 || binary.BigEndian.Uint32(b) != rpcRDMAConnectMagic {
		return nil
	}
	return &ConnectPrivate{Protocol: "RPC-over-RDMA", Version: b[4], RemoteInvalidate: b[5]&1 != 0,
		InlineSend: (int(b[6]) + 1) * 1024, InlineRecv: (int(b[7]) + 1) * 1024}
}

// MPAV2Control is the enhanced connection setup an MPA revision 2 start
// frame carries at the front of its private data (RFC 6581): the IRD and
// ORD the sender offers and the ready-to-receive message it wants.
type MPAV2Control struct {
	IRD           uint16 `json:"ird"`
	ORD           uint16 `json:"ord"`
	PeerToPeer    bool   `json:"peerToPeer"`
	ZeroLengthRTR bool   `json:"zeroLengthRTR"` // IRD's second bit
	WriteRTR      bool   `json:"writeRTR"`      // ORD's first bit
	ReadRTR       bool   `json:"readRTR"`       // ORD's second bit
}

const mpaV2ControlLen = 4

func decodeMPAV2Control(b []byte) *MPAV2Control {
	ird, ord := binary.BigEndian.Uint16(b), binary.BigEndian.Uint16(b[2:])
	return &MPAV2Control{IRD: ird & 0x3fff, ORD: ord & 0x3fff, PeerToPeer: ird&0x8000 != 0,
		ZeroLengthRTR: ird&0x4000 != 0, WriteRTR: ord&0x8000 != 0, ReadRTR: ord&0x4000 != 0}
}
