package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// CMType is a Communication Management message's attribute ID (IBA
// 12.6): which message a CM MAD carries.
type CMType uint16

// The CM attribute IDs.
const (
	CMClassPortInfo CMType = 0x0001
	CMREQ           CMType = 0x0010 // ConnectRequest
	CMMRA           CMType = 0x0011 // MsgRcptAck
	CMREJ           CMType = 0x0012 // ConnectReject
	CMREP           CMType = 0x0013 // ConnectReply
	CMRTU           CMType = 0x0014 // ReadyToUse
	CMDREQ          CMType = 0x0015 // DisconnectRequest
	CMDREP          CMType = 0x0016 // DisconnectReply
	CMSIDRREQ       CMType = 0x0017 // ServiceIDResReq
	CMSIDRREP       CMType = 0x0018 // ServiceIDResReqResp
	CMLAP           CMType = 0x0019 // LoadAlternatePath
	CMAPR           CMType = 0x001a // AlternatePathResponse
)

// String names the message ("REQ", "SIDR_REP"), or gives its attribute ID.
func (t CMType) String() string {
	switch t {
	case CMClassPortInfo:
		return "ClassPortInfo"
	case CMREQ:
		return "REQ"
	case CMMRA:
		return "MRA"
	case CMREJ:
		return "REJ"
	case CMREP:
		return "REP"
	case CMRTU:
		return "RTU"
	case CMDREQ:
		return "DREQ"
	case CMDREP:
		return "DREP"
	case CMSIDRREQ:
		return "SIDR_REQ"
	case CMSIDRREP:
		return "SIDR_REP"
	case CMLAP:
		return "LAP"
	case CMAPR:
		return "APR"
	}
	return fmt.Sprintf("attr %#04x", uint16(t))
}

// MarshalText makes the type its name in JSON.
func (t CMType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// cmDataLen is the CM message after the 24-byte MAD header.
const cmDataLen = mad.Size - mad.HeaderLen

// cmPrivate returns where a message's private data starts in the CM
// data and how long it is (IBA 12.6.5-12.6.13, 12.8, 12.11: the rest of
// the 232 bytes); false for a type without one. A switch, not a map: a
// map literal is built at init, which every tool pays (init_test.go).
func cmPrivate(t CMType) (off, n int, ok bool) {
	switch t {
	case CMREQ:
		return 140, 92, true
	case CMMRA:
		return 10, 222, true
	case CMREJ, CMAPR:
		return 84, 148, true
	case CMREP:
		return 36, 196, true
	case CMRTU, CMDREP:
		return 8, 224, true
	case CMDREQ:
		return 12, 220, true
	case CMSIDRREQ:
		return 16, 216, true
	case CMSIDRREP:
		return 96, 136, true
	case CMLAP:
		return 64, 168, true
	}
	return 0, 0, false
}

// CMMessage is one Communication Management message: the MAD's attribute
// says which, and the matching field holds its body. PrivateData is the
// message's whole private data field (the CM sends it zero-padded to its
// size); RDMACM and ULP are what rdma_cm and its users put in it.
type CMMessage struct {
	Type    CMType     `json:"type"`
	REQ     *CMReq     `json:"req,omitempty"`
	MRA     *CMMra     `json:"mra,omitempty"`
	REJ     *CMRej     `json:"rej,omitempty"`
	REP     *CMRep     `json:"rep,omitempty"`
	RTU     *CMCommIDs `json:"rtu,omitempty"`
	DREQ    *CMDreq    `json:"dreq,omitempty"`
	DREP    *CMCommIDs `json:"drep,omitempty"`
	SIDRREQ *CMSIDRReq `json:"sidrReq,omitempty"`
	SIDRREP *CMSIDRRep `json:"sidrRep,omitempty"`
	LAP     *CMLap     `json:"lap,omitempty"`
	APR     *CMApr     `json:"apr,omitempty"`
	// PrivateData is the private data field; PrivateDataUsed the bytes up
	// to the last one that is not zero.
	PrivateData     HexBytes `json:"privateData,omitempty"`
	PrivateDataUsed int      `json:"privateDataUsed"`
	// RDMACM is the rdma_cm header a REQ or SIDR_REQ to an IP service ID
	// carries.
	RDMACM *RDMACMHeader `json:"rdmaCM,omitempty"`
	// ULP is what the connection's user said in its private data, when
	// trace knows the format.
	ULP *ConnectPrivate `json:"ulp,omitempty"`
}

// CMCommIDs are the two communication IDs every connected-mode message
// but the REQ starts with: the sender's and the receiver's.
type CMCommIDs struct {
	LocalCommID  uint32 `json:"localCommID"`
	RemoteCommID uint32 `json:"remoteCommID"`
}

// CMPath is a path a REQ or LAP describes (IBA 12.6.5).
type CMPath struct {
	LocalLID        uint16     `json:"localLID"`
	RemoteLID       uint16     `json:"remoteLID"`
	LocalGID        netip.Addr `json:"localGID"`
	RemoteGID       netip.Addr `json:"remoteGID"`
	FlowLabel       uint32     `json:"flowLabel"`
	PacketRate      uint8      `json:"packetRate"`
	TrafficClass    uint8      `json:"trafficClass"`
	HopLimit        uint8      `json:"hopLimit"`
	SL              uint8      `json:"sl"`
	SubnetLocal     bool       `json:"subnetLocal"`
	LocalACKTimeout uint8      `json:"localACKTimeout"`
}

// CMTransportType is a REQ's transport service type.
type CMTransportType uint8

// String returns "RC", "UC", "RD" or "reserved".
func (t CMTransportType) String() string {
	switch t {
	case 0:
		return "RC"
	case 1:
		return "UC"
	case 2:
		return "RD"
	}
	return "reserved"
}

// MarshalText makes the type its name in JSON.
func (t CMTransportType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// CMReq is a ConnectRequest (REQ, IBA 12.6.5). StartingPSN is the PSN the
// sender's QP expects first, the one its peer starts sending with.
type CMReq struct {
	LocalCommID             uint32          `json:"localCommID"`
	ServiceID               uint64          `json:"serviceID"`
	LocalCAGUID             rdma.GUID       `json:"localCAGUID"`
	LocalQKey               uint32          `json:"localQKey"`
	LocalQPN                uint32          `json:"localQPN"`
	ResponderResources      uint8           `json:"responderResources"`
	LocalEECN               uint32          `json:"localEECN"`
	InitiatorDepth          uint8           `json:"initiatorDepth"`
	RemoteEECN              uint32          `json:"remoteEECN"`
	RemoteCMResponseTimeout uint8           `json:"remoteCMResponseTimeout"`
	TransportType           CMTransportType `json:"transportServiceType"`
	EndToEndFlowControl     bool            `json:"endToEndFlowControl"`
	StartingPSN             uint32          `json:"startingPSN"`
	LocalCMResponseTimeout  uint8           `json:"localCMResponseTimeout"`
	RetryCount              uint8           `json:"retryCount"`
	PKey                    uint16          `json:"pkey"`
	PathMTU                 uint8           `json:"pathMTU"` // 1 256 bytes ... 5 4096 bytes
	RDCExists               bool            `json:"rdcExists"`
	RNRRetryCount           uint8           `json:"rnrRetryCount"`
	MaxCMRetries            uint8           `json:"maxCMRetries"`
	SRQ                     bool            `json:"srq"`
	ExtendedTransportType   uint8           `json:"extendedTransportType"`
	Primary                 CMPath          `json:"primaryPath"`
	// Alternate is nil when the REQ's alternate path is all zeros, its
	// reserved bits aside.
	Alternate *CMPath `json:"alternatePath,omitempty"`
}

// CMMra is a MsgRcptAck (MRA, IBA 12.6.6): the receiver needs more time.
type CMMra struct {
	CMCommIDs
	MessageMRAed   uint8 `json:"messageMRAed"` // 0 REQ, 1 REP, 2 LAP
	ServiceTimeout uint8 `json:"serviceTimeout"`
}

// CMRej is a ConnectReject (REJ, IBA 12.6.7).
type CMRej struct {
	CMCommIDs
	MessageRejected  uint8          `json:"messageRejected"` // 0 REQ, 1 REP, 2 none
	RejectInfoLength uint8          `json:"rejectInfoLength"`
	Reason           CMRejectReason `json:"reason"`
	// ARI is the additional reject information, RejectInfoLength bytes.
	ARI HexBytes `json:"ari,omitempty"`
}

// CMRep is a ConnectReply (REP, IBA 12.6.8). StartingPSN is the PSN the
// sender's QP expects first, the one the REQ's sender starts with.
type CMRep struct {
	CMCommIDs
	LocalQKey           uint32    `json:"localQKey"`
	LocalQPN            uint32    `json:"localQPN"`
	LocalEECN           uint32    `json:"localEECN"`
	StartingPSN         uint32    `json:"startingPSN"`
	ResponderResources  uint8     `json:"responderResources"`
	InitiatorDepth      uint8     `json:"initiatorDepth"`
	TargetACKDelay      uint8     `json:"targetACKDelay"`
	FailoverAccepted    uint8     `json:"failoverAccepted"`
	EndToEndFlowControl bool      `json:"endToEndFlowControl"`
	RNRRetryCount       uint8     `json:"rnrRetryCount"`
	SRQ                 bool      `json:"srq"`
	LocalCAGUID         rdma.GUID `json:"localCAGUID"`
}

// CMDreq is a DisconnectRequest (DREQ, IBA 12.6.10).
type CMDreq struct {
	CMCommIDs
	RemoteQPN uint32 `json:"remoteQPN"`
}

// CMSIDRReq is a ServiceIDResReq (SIDR_REQ, IBA 12.11.1): which UD QP
// serves a service ID.
type CMSIDRReq struct {
	RequestID uint32 `json:"requestID"`
	PKey      uint16 `json:"pkey"`
	ServiceID uint64 `json:"serviceID"`
}

// CMSIDRRep is a ServiceIDResReqResp (SIDR_REP, IBA 12.11.2).
type CMSIDRRep struct {
	RequestID            uint32   `json:"requestID"`
	Status               uint8    `json:"status"`
	AdditionalInfoLength uint8    `json:"additionalInfoLength"`
	QPN                  uint32   `json:"qpn"`
	ServiceID            uint64   `json:"serviceID"`
	QKey                 uint32   `json:"qkey"`
	ClassPortInfo        HexBytes `json:"classPortInfo,omitempty"`
}

// SIDRStatusName names a SIDR_REP's status (IBA 12.11.2).
func SIDRStatusName(s uint8) string {
	switch s {
	case 0:
		return "valid"
	case 1:
		return "service ID not supported"
	case 2:
		return "rejected by the service provider"
	case 3:
		return "no QP available"
	case 4:
		return "redirect"
	case 5:
		return "unsupported class version"
	}
	return fmt.Sprintf("status %d", s)
}

// CMLap is a LoadAlternatePath (LAP, IBA 12.8.1).
type CMLap struct {
	CMCommIDs
	RemoteQPN               uint32 `json:"remoteQPN"`
	RemoteCMResponseTimeout uint8  `json:"remoteCMResponseTimeout"`
	Alternate               CMPath `json:"alternatePath"`
}

// CMApr is an AlternatePathResponse (APR, IBA 12.8.2).
type CMApr struct {
	CMCommIDs
	AdditionalInfoLength uint8    `json:"additionalInfoLength"`
	Status               uint8    `json:"apStatus"`
	AdditionalInfo       HexBytes `json:"additionalInfo,omitempty"`
}

// CMRejectReason is a REJ's reason code (IBA 12.6.7, the REJ message's reason codes).
type CMRejectReason uint16

var cmRejectReasons = [...]string{1: "no QP available", 2: "no EE available", 3: "no resources available",
	4: "timeout", 5: "unsupported request", 6: "invalid communication ID", 7: "invalid communication instance",
	8: "invalid service ID", 9: "invalid transport service type", 10: "stale connection",
	11: "RDC does not exist", 12: "primary remote port GID rejected", 13: "primary remote port LID rejected",
	14: "invalid primary SL", 15: "invalid primary traffic class", 16: "invalid primary hop limit",
	17: "invalid primary packet rate", 18: "alternate remote port GID rejected",
	19: "alternate remote port LID rejected", 20: "invalid alternate SL", 21: "invalid alternate traffic class",
	22: "invalid alternate hop limit", 23: "invalid alternate packet rate", 24: "port CM redirect",
	25: "port redirect", 26: "invalid path MTU", 27: "insufficient responder resources", 28: "consumer reject",
	29: "RNR retry count reject", 30: "duplicate local communication ID", 31: "unsupported class version",
	32: "invalid primary flow label", 33: "invalid alternate flow label", 35: "vendor option not supported"}

// String names the reason ("consumer reject"), or gives its code.
func (r CMRejectReason) String() string {
	if int(r) < len(cmRejectReasons) && cmRejectReasons[r] != "" {
		return cmRejectReasons[r]
	}
	return fmt.Sprintf("reason %d", uint16(r))
}

// cmMessageRef names what a REJ's "message rejected" or an MRA's "message
// MRAed" field points at.
func cmMessageRef(v uint8, mra bool) string {
	switch v {
	case 0:
		return "REQ"
	case 1:
		return "REP"
	case 2:
		if mra {
			return "LAP"
		}
		return "no message"
	}
	return "reserved"
}

// RejectedName names the message a REJ rejects: "REQ", "REP" or "no
// message".
func (r *CMRej) RejectedName() string { return cmMessageRef(r.MessageRejected, false) }

// MRAedName names the message an MRA acknowledges: "REQ", "REP" or "LAP".
func (m *CMMra) MRAedName() string { return cmMessageRef(m.MessageMRAed, true) }

// errNotCM marks a MAD of another management class.
var errNotCM = errors.New("not a Communication Management MAD")

// DecodeCM decodes the Communication Management message in a MAD (class
// 0x07): b is the MAD, header included. A CM attribute trace does not
// know (ClassPortInfo) returns a message with its type only.
func DecodeCM(b []byte) (*CMMessage, error) {
	if len(b) < mad.Size {
		return nil, fmt.Errorf("CM MAD: %d bytes, a MAD has %d: %w", len(b), mad.Size, errShort)
	}
	if mad.Class(b[1]) != mad.ClassCM {
		return nil, errNotCM
	}
	m := &CMMessage{Type: CMType(binary.BigEndian.Uint16(b[16:]))}
	d := b[mad.HeaderLen:mad.Size]
	m.decodeBody(d)
	if off, n, ok := cmPrivate(m.Type); ok {
		m.PrivateData = append(HexBytes(nil), d[off:off+n]...)
		m.PrivateDataUsed = usedLen(m.PrivateData)
		m.decodePrivate()
	}
	return m, nil
}

// usedLen returns the length of b up to its last byte that is not zero.
func usedLen(b []byte) int {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return n
}

func commIDs(d []byte) CMCommIDs {
	return CMCommIDs{LocalCommID: binary.BigEndian.Uint32(d), RemoteCommID: binary.BigEndian.Uint32(d[4:])}
}

func u24(b []byte) uint32 { return binary.BigEndian.Uint32(b) >> 8 }

// decodeBody reads the message's fields from d, the 232 bytes after the
// MAD header.
func (m *CMMessage) decodeBody(d []byte) {
	be := binary.BigEndian
	switch m.Type {
	case CMREQ:
		r := &CMReq{LocalCommID: be.Uint32(d), ServiceID: be.Uint64(d[8:]), LocalCAGUID: rdma.GUID(be.Uint64(d[16:])),
			LocalQKey: be.Uint32(d[28:]), LocalQPN: u24(d[32:]), ResponderResources: d[35],
			LocalEECN: u24(d[36:]), InitiatorDepth: d[39], RemoteEECN: u24(d[40:]),
			RemoteCMResponseTimeout: d[43] >> 3, TransportType: CMTransportType(d[43] >> 1 & 3),
			EndToEndFlowControl: d[43]&1 != 0, StartingPSN: u24(d[44:]), LocalCMResponseTimeout: d[47] >> 3,
			RetryCount: d[47] & 7, PKey: be.Uint16(d[48:]), PathMTU: d[50] >> 4, RDCExists: d[50]&8 != 0,
			RNRRetryCount: d[50] & 7, MaxCMRetries: d[51] >> 4, SRQ: d[51]&8 != 0, ExtendedTransportType: d[51] & 7}
		r.Primary = decodeREQPath(d[52:96])
		// Reserved bits aside: a path with nothing but them set is no
		// path, and encodes as all zeros.
		if a := decodeREQPath(d[96:140]); a != noREQPath {
			r.Alternate = &a
		}
		m.REQ = r
	case CMMRA:
		m.MRA = &CMMra{CMCommIDs: commIDs(d), MessageMRAed: d[8] >> 6, ServiceTimeout: d[9] >> 3}
	case CMREJ:
		r := &CMRej{CMCommIDs: commIDs(d), MessageRejected: d[8] >> 6, RejectInfoLength: d[9] >> 1,
			Reason: CMRejectReason(be.Uint16(d[10:]))}
		if n := min(int(r.RejectInfoLength), 72); n > 0 {
			r.ARI = append(HexBytes(nil), d[12:12+n]...)
		}
		m.REJ = r
	case CMREP:
		m.REP = &CMRep{CMCommIDs: commIDs(d), LocalQKey: be.Uint32(d[8:]), LocalQPN: u24(d[12:]),
			LocalEECN: u24(d[16:]), StartingPSN: u24(d[20:]), ResponderResources: d[24], InitiatorDepth: d[25],
			TargetACKDelay: d[26] >> 3, FailoverAccepted: d[26] >> 1 & 3, EndToEndFlowControl: d[26]&1 != 0,
			RNRRetryCount: d[27] >> 5, SRQ: d[27]&0x10 != 0, LocalCAGUID: rdma.GUID(be.Uint64(d[28:]))}
	case CMRTU:
		c := commIDs(d)
		m.RTU = &c
	case CMDREQ:
		m.DREQ = &CMDreq{CMCommIDs: commIDs(d), RemoteQPN: u24(d[8:])}
	case CMDREP:
		c := commIDs(d)
		m.DREP = &c
	case CMSIDRREQ:
		m.SIDRREQ = &CMSIDRReq{RequestID: be.Uint32(d), PKey: be.Uint16(d[4:]), ServiceID: be.Uint64(d[8:])}
	case CMSIDRREP:
		r := &CMSIDRRep{RequestID: be.Uint32(d), Status: d[4], AdditionalInfoLength: d[5], QPN: u24(d[8:]),
			ServiceID: be.Uint64(d[12:]), QKey: be.Uint32(d[20:])}
		if n := min(int(r.AdditionalInfoLength), 72); n > 0 {
			r.ClassPortInfo = append(HexBytes(nil), d[24:24+n]...)
		}
		m.SIDRREP = r
	case CMLAP:
		l := &CMLap{CMCommIDs: commIDs(d), RemoteQPN: u24(d[12:]), RemoteCMResponseTimeout: d[15] >> 3}
		p := &l.Alternate
		p.LocalLID, p.RemoteLID = be.Uint16(d[20:]), be.Uint16(d[22:])
		p.LocalGID, p.RemoteGID = netip.AddrFrom16([16]byte(d[24:40])), netip.AddrFrom16([16]byte(d[40:56]))
		w := be.Uint32(d[56:])
		p.FlowLabel, p.TrafficClass = w>>12, uint8(w)
		p.HopLimit, p.PacketRate = d[60], d[61]&0x3f
		p.SL, p.SubnetLocal, p.LocalACKTimeout = d[62]>>4, d[62]&8 != 0, d[63]>>3
		m.LAP = l
	case CMAPR:
		a := &CMApr{CMCommIDs: commIDs(d), AdditionalInfoLength: d[8], Status: d[9]}
		if n := min(int(a.AdditionalInfoLength), 72); n > 0 {
			a.AdditionalInfo = append(HexBytes(nil), d[12:12+n]...)
		}
		m.APR = a
	}
}

// noREQPath is what decodeREQPath makes of a path of zeros.
var noREQPath = CMPath{LocalGID: netip.IPv6Unspecified(), RemoteGID: netip.IPv6Unspecified()}

// decodeREQPath reads one of a REQ's two 44-byte paths.
func decodeREQPath(d []byte) CMPath {
	w := binary.BigEndian.Uint32(d[36:])
	return CMPath{LocalLID: binary.BigEndian.Uint16(d), RemoteLID: binary.BigEndian.Uint16(d[2:]),
		LocalGID: netip.AddrFrom16([16]byte(d[4:20])), RemoteGID: netip.AddrFrom16([16]byte(d[20:36])),
		FlowLabel: w >> 12, PacketRate: uint8(w) & 0x3f, TrafficClass: d[40], HopLimit: d[41],
		SL: d[42] >> 4, SubnetLocal: d[42]&8 != 0, LocalACKTimeout: d[43] >> 3}
}

// decodePrivate finds rdma_cm's header and a known ULP format in the
// private data.
func (m *CMMessage) decodePrivate() {
	pd := []byte(m.PrivateData)
	sid, ok := uint64(0), false
	switch {
	case m.REQ != nil:
		sid, ok = m.REQ.ServiceID, true
	case m.SIDRREQ != nil:
		sid, ok = m.SIDRREQ.ServiceID, true
	}
	if ok {
		if h, ok := decodeRDMACMHeader(sid, pd); ok {
			m.RDMACM = h
			pd = pd[rdmaCMHeaderLen:]
		}
	}
	switch m.Type {
	case CMREQ, CMREP:
		m.ULP = decodeConnectPrivate(pd)
	}
}
