package rdmacm

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// The ucma ABI, version 4: each command is one write() to
// /dev/infiniband/rdma_cm of a header (command, input size, output size)
// and a fixed-layout struct; a command with a reply names a buffer the
// kernel fills by its address. Layouts and numbers are those of the
// kernel's include/uapi/rdma/rdma_user_cm.h (all fields host order,
// x86-64 and the other 64-bit little-endian machines; addresses inside
// sockaddrs in network order).
const abiVersion = 4

// Command numbers (RDMA_USER_CM_CMD_*).
const (
	cmdCreateID     = 0
	cmdDestroyID    = 1
	cmdResolveRoute = 4
	cmdQueryRoute   = 5
	cmdConnect      = 6
	cmdListen       = 7
	cmdAccept       = 8
	cmdReject       = 9
	cmdDisconnect   = 10
	cmdInitQPAttr   = 11
	cmdGetEvent     = 12
	cmdSetOption    = 14
	cmdNotify       = 15
	cmdLeaveMcast   = 17
	cmdMigrateID    = 18
	cmdQuery        = 19
	cmdBind         = 20
	cmdResolveAddr  = 21
	cmdJoinMcast    = 22
)

// Sizes of the command structs (in) and replies (out).
const (
	hdrSize          = 8
	createIDSize     = 24 // uid, response, ps, qp_type, reserved[5]
	createIDResp     = 4
	destroyIDSize    = 16 // response, id, reserved
	destroyIDResp    = 4
	bindSize         = 136
	resolveAddrSize  = 272
	resolveRouteSize = 8
	querySize        = 16
	queryAddrResp    = 280
	connParamSize    = 272
	connectSize      = 288 // conn_param, id, reserved, ece
	listenSize       = 8
	acceptSize       = 296 // uid, conn_param, id, reserved, ece
	rejectSize       = 264
	disconnectSize   = 4
	initQPAttrSize   = 16
	qpAttrResp       = 144 // struct ib_uverbs_qp_attr
	getEventSize     = 8
	eventResp        = 336 // struct rdma_ucm_event_resp with its ECE
	eventRespMin     = 324 // without reserved and ECE: what old kernels fill
	setOptionSize    = 24
	migrateIDSize    = 16 // response, id, fd
	migrateIDResp    = 4  // events_reported
	joinMcastSize    = 152
	joinMcastResp    = 4
	leaveMcastSize   = 16
	sockaddrStorage  = 128
	maxPrivateData   = 256
	ahAttrSize       = 32
	udParamSize      = 304
)

// Address families as the kernel numbers them.
const (
	afInet  = 2
	afInet6 = 10
	afIB    = 27
)

var le = binary.LittleEndian

// putSockaddr writes a as a sockaddr_in (IPv4) or sockaddr_in6 into b
// and returns its size. An invalid a writes nothing and returns 0.
func putSockaddr(b []byte, a netip.AddrPort) int {
	ip := a.Addr()
	switch {
	case !ip.IsValid():
		return 0
	case ip.Is4():
		le.PutUint16(b[0:], afInet)
		binary.BigEndian.PutUint16(b[2:], a.Port())
		v := ip.As4()
		copy(b[4:8], v[:])
		return 16
	default:
		le.PutUint16(b[0:], afInet6)
		binary.BigEndian.PutUint16(b[2:], a.Port())
		v := ip.As16()
		copy(b[8:24], v[:])
		le.PutUint32(b[24:], zoneIndex(ip.Zone()))
		return 28
	}
}

// sockaddr decodes the sockaddr at the start of b: IPv4, IPv6 or AF_IB
// (whose GID is returned as an IPv6 address and whose service ID's low
// 16 bits as the port, as librdmacm's rdma_get_src_port reads it). An
// unknown family or a short b is an error.
func sockaddr(b []byte) (netip.AddrPort, error) {
	if len(b) < 2 {
		return netip.AddrPort{}, fmt.Errorf("%w: sockaddr of %d bytes", errShort, len(b))
	}
	switch f := le.Uint16(b); f {
	case 0:
		return netip.AddrPort{}, nil
	case afInet:
		if len(b) < 16 {
			return netip.AddrPort{}, fmt.Errorf("%w: sockaddr_in of %d bytes", errShort, len(b))
		}
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:])), nil
	case afInet6:
		if len(b) < 28 {
			return netip.AddrPort{}, fmt.Errorf("%w: sockaddr_in6 of %d bytes", errShort, len(b))
		}
		ip := netip.AddrFrom16([16]byte(b[8:24]))
		if z := le.Uint32(b[24:]); z != 0 && ip.IsLinkLocalUnicast() {
			ip = ip.WithZone(zoneName(z))
		}
		return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[2:])), nil
	case afIB:
		// sib_family, sib_pkey, sib_flowinfo, sib_addr (16), sib_sid (8), ...
		if len(b) < 32 {
			return netip.AddrPort{}, fmt.Errorf("%w: sockaddr_ib of %d bytes", errShort, len(b))
		}
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[30:])), nil
	default:
		return netip.AddrPort{}, fmt.Errorf("%w: address family %d", errMalformed, f)
	}
}

// ConnParam are the connection parameters of a connect, an accept and
// the connection events (struct rdma_conn_param).
type ConnParam struct {
	// PrivateData goes to the peer with the request or the reply: up to
	// 56 bytes on InfiniBand and RoCE less the CM's own header (in the
	// TCP port space 36 bytes of it), 196 in an accept, 512 on iWARP
	// (the kernel takes 256).
	PrivateData []byte
	// ResponderResources and InitiatorDepth are the RDMA READs this side
	// lets the peer have outstanding, and has outstanding itself.
	ResponderResources uint8
	InitiatorDepth     uint8
	FlowControl        bool
	// RetryCount and RNRRetryCount are the transport and RNR retries
	// (at most 7; 7 is "forever" for RNR).
	RetryCount    uint8
	RNRRetryCount uint8
	// SRQ says the QP takes its receives from a shared receive queue.
	SRQ bool
	// QPNum is the QP (the ID's own when it has one) or, in an event, the
	// peer's QP number.
	QPNum uint32
	// QKey is the Q_Key of a UD exchange (RDMA_PS_UDP and IPoIB).
	QKey uint32
}

// putConnParam writes p as struct rdma_ucm_conn_param (valid set).
func putConnParam(b []byte, p ConnParam) error {
	if len(p.PrivateData) > maxPrivateData {
		return fmt.Errorf("%d bytes of private data, the kernel takes at most %d", len(p.PrivateData), maxPrivateData)
	}
	le.PutUint32(b[0:], p.QPNum)
	le.PutUint32(b[4:], p.QKey)
	copy(b[8:8+maxPrivateData], p.PrivateData)
	o := 8 + maxPrivateData
	b[o] = uint8(len(p.PrivateData))
	b[o+1] = boolByte(p.SRQ)
	b[o+2] = p.ResponderResources
	b[o+3] = p.InitiatorDepth
	b[o+4] = boolByte(p.FlowControl)
	b[o+5] = p.RetryCount
	b[o+6] = p.RNRRetryCount
	b[o+7] = 1 // valid
	return nil
}

// connParam decodes a struct rdma_ucm_conn_param of an event.
func connParam(b []byte) ConnParam {
	o := 8 + maxPrivateData
	n := int(b[o])
	p := ConnParam{QPNum: le.Uint32(b[0:]), QKey: le.Uint32(b[4:]), SRQ: b[o+1] != 0,
		ResponderResources: b[o+2], InitiatorDepth: b[o+3], FlowControl: b[o+4] != 0,
		RetryCount: b[o+5], RNRRetryCount: b[o+6]}
	if n > 0 {
		p.PrivateData = append([]byte(nil), b[8:8+n]...)
	}
	return p
}

// AHAttr is an address vector as the CM gives it for UD and multicast
// (struct ib_uverbs_ah_attr): where datagrams to the peer or the group
// go.
type AHAttr struct {
	DGID         [16]byte
	FlowLabel    uint32
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
	DLID         uint16
	SL           uint8
	SrcPathBits  uint8
	StaticRate   uint8
	IsGlobal     bool
	PortNum      uint8
}

func ahAttr(b []byte) AHAttr {
	return AHAttr{DGID: [16]byte(b[0:16]), FlowLabel: le.Uint32(b[16:]), SGIDIndex: b[20], HopLimit: b[21],
		TrafficClass: b[22], DLID: le.Uint16(b[24:]), SL: b[26], SrcPathBits: b[27], StaticRate: b[28],
		IsGlobal: b[29] != 0, PortNum: b[30]}
}

// UDParam is what a UD ID's events carry (struct rdma_ucm_ud_param): the
// peer's (or the group's) QP number and Q_Key and the address vector to
// reach it.
type UDParam struct {
	QPNum       uint32
	QKey        uint32
	AH          AHAttr
	PrivateData []byte
}

func udParam(b []byte) UDParam {
	p := UDParam{QPNum: le.Uint32(b[0:]), QKey: le.Uint32(b[4:]), AH: ahAttr(b[8 : 8+ahAttrSize])}
	o := 8 + ahAttrSize
	if n := int(b[o+maxPrivateData]); n > 0 {
		p.PrivateData = append([]byte(nil), b[o:o+n]...)
	}
	return p
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// VerbsAHAttr is the address vector as pkg/verbs' CreateAH takes it:
// where a UD ID's datagrams to the peer (or a group's) go.
func (a AHAttr) VerbsAHAttr() verbs.AHAttr {
	v := verbs.AHAttr{Port: int(a.PortNum), DLID: a.DLID, SL: a.SL}
	if a.IsGlobal {
		v.GRH = &verbs.GRH{DGID: a.DGID, SGIDIndex: int(a.SGIDIndex), HopLimit: a.HopLimit,
			TrafficClass: a.TrafficClass, FlowLabel: a.FlowLabel}
	}
	return v
}
