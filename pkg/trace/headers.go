package trace

import (
	"encoding/binary"
	"net/netip"
	"strconv"
)

// LRH is the InfiniBand local routing header (IBA 7.7), the first 8 bytes
// of a native InfiniBand packet:
//
//	bits  0-3 VL   4-7 LVer   8-11 SL   12-13 reserved   14-15 LNH
//	16-31 DLID   32-36 reserved   37-47 PktLen (4-byte words)   48-63 SLID
type LRH struct {
	VL     uint8  `json:"vl"`
	LVer   uint8  `json:"lver"`
	SL     uint8  `json:"sl"`
	LNH    uint8  `json:"lnh"`
	DLID   uint16 `json:"dlid"`
	PktLen uint16 `json:"pktLen"`
	SLID   uint16 `json:"slid"`
}

// The LRH's next-header values (LNH).
const (
	LNHRaw       = 0 // raw packet
	LNHIP        = 1 // IP, not IBA transport
	LNHIBALocal  = 2 // BTH follows
	LNHIBAGlobal = 3 // GRH follows
)

const lrhLen = 8

func (h *LRH) decode(b []byte) {
	h.VL, h.LVer = b[0]>>4, b[0]&0xf
	h.SL, h.LNH = b[1]>>4, b[1]&3
	h.DLID = binary.BigEndian.Uint16(b[2:])
	h.PktLen = binary.BigEndian.Uint16(b[4:]) & 0x7ff
	h.SLID = binary.BigEndian.Uint16(b[6:])
}

func (h *LRH) appendTo(b []byte) []byte {
	b = append(b, h.VL<<4|h.LVer&0xf, h.SL<<4|h.LNH&3)
	b = binary.BigEndian.AppendUint16(b, h.DLID)
	b = binary.BigEndian.AppendUint16(b, h.PktLen&0x7ff)
	return binary.BigEndian.AppendUint16(b, h.SLID)
}

// GRH is the global route header (IBA 8.3), laid out as an IPv6 header: it
// follows the LRH when LNH says so, and starts a RoCEv1 packet.
//
//	bits 0-3 IPVer  4-11 TClass  12-31 FlowLabel  32-47 PayLen  48-55 NxtHdr
//	56-63 HopLmt  64-191 SGID  192-319 DGID
type GRH struct {
	IPVer     uint8      `json:"ipVer"`
	TClass    uint8      `json:"tClass"`
	FlowLabel uint32     `json:"flowLabel"`
	PayLen    uint16     `json:"payLen"`
	NxtHdr    uint8      `json:"nxtHdr"`
	HopLmt    uint8      `json:"hopLmt"`
	SGID      netip.Addr `json:"sgid"`
	DGID      netip.Addr `json:"dgid"`
}

const grhLen = 40

// nxtHdrBTH is the GRH's NxtHdr value for an IBA transport header.
const nxtHdrBTH = 0x1b

func (h *GRH) decode(b []byte) {
	w := binary.BigEndian.Uint32(b)
	h.IPVer, h.TClass, h.FlowLabel = uint8(w>>28), uint8(w>>20), w&0xfffff
	h.PayLen = binary.BigEndian.Uint16(b[4:])
	h.NxtHdr, h.HopLmt = b[6], b[7]
	h.SGID = netip.AddrFrom16([16]byte(b[8:24]))
	h.DGID = netip.AddrFrom16([16]byte(b[24:40]))
}

func (h *GRH) appendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(h.IPVer)<<28|uint32(h.TClass)<<20|h.FlowLabel&0xfffff)
	b = binary.BigEndian.AppendUint16(b, h.PayLen)
	b = append(b, h.NxtHdr, h.HopLmt)
	s, d := h.SGID.As16(), h.DGID.As16()
	b = append(b, s[:]...)
	return append(b, d[:]...)
}

// BTH is the base transport header (IBA 9.2), 12 bytes:
//
//	bits 0-7 OpCode  8 SE  9 M  10-11 PadCnt  12-15 TVer  16-31 P_Key
//	32 FECN  33 BECN  34-39 reserved  40-63 DestQP  64 A  65-71 reserved
//	72-95 PSN
type BTH struct {
	Opcode    Opcode `json:"opcode"`
	SE        bool   `json:"se"`
	MigReq    bool   `json:"m"`
	PadCnt    uint8  `json:"padCnt"`
	TVer      uint8  `json:"tver"`
	PKey      uint16 `json:"pkey"`
	FECN      bool   `json:"fecn"`
	BECN      bool   `json:"becn"`
	DestQP    uint32 `json:"destQP"`
	AckReq    bool   `json:"a"`
	PSN       uint32 `json:"psn"`
	reserved8 uint8  // FECN, BECN and the six reserved bits as captured
}

func (h *BTH) decode(b []byte) {
	h.Opcode = Opcode(b[0])
	h.SE, h.MigReq, h.PadCnt, h.TVer = b[1]&0x80 != 0, b[1]&0x40 != 0, b[1]>>4&3, b[1]&0xf
	h.PKey = binary.BigEndian.Uint16(b[2:])
	h.FECN, h.BECN, h.reserved8 = b[4]&0x80 != 0, b[4]&0x40 != 0, b[4]
	h.DestQP = binary.BigEndian.Uint32(b[4:]) & 0xffffff
	h.AckReq = b[8]&0x80 != 0
	h.PSN = binary.BigEndian.Uint32(b[8:]) & 0xffffff
}

func (h *BTH) appendTo(b []byte) []byte {
	b = append(b, byte(h.Opcode), bit(h.SE, 0x80)|bit(h.MigReq, 0x40)|h.PadCnt&3<<4|h.TVer&0xf)
	b = binary.BigEndian.AppendUint16(b, h.PKey)
	b = binary.BigEndian.AppendUint32(b, uint32(bit(h.FECN, 0x80)|bit(h.BECN, 0x40)|h.reserved8&0x3f)<<24|h.DestQP&0xffffff)
	return binary.BigEndian.AppendUint32(b, uint32(bit(h.AckReq, 0x80))<<24|h.PSN&0xffffff)
}

func bit(v bool, b byte) byte {
	if v {
		return b
	}
	return 0
}

// RETH is the RDMA extended transport header (IBA 9.3.3): where an RDMA
// WRITE or READ goes and how long it is.
type RETH struct {
	VA        uint64 `json:"va"`
	RKey      uint32 `json:"rkey"`
	DMALength uint32 `json:"dmaLength"`
}

// AtomicETH is the atomic extended transport header (IBA 9.3.4).
type AtomicETH struct {
	VA      uint64 `json:"va"`
	RKey    uint32 `json:"rkey"`
	SwapAdd uint64 `json:"swapAddData"`
	Compare uint64 `json:"compareData"`
}

// AETH is the ACK extended transport header (IBA 9.3.5): a syndrome and
// the message sequence number.
type AETH struct {
	Syndrome uint8  `json:"syndrome"`
	MSN      uint32 `json:"msn"`
}

// AckKind is what an AETH syndrome's top three bits say.
type AckKind uint8

// The AETH syndrome kinds (IBA table 43).
const (
	AckACK      AckKind = 0
	AckRNRNAK   AckKind = 1
	AckReserved AckKind = 2
	AckNAK      AckKind = 3
)

// String returns "ACK", "RNR NAK", "NAK" or "reserved".
func (k AckKind) String() string {
	switch k {
	case AckACK:
		return "ACK"
	case AckRNRNAK:
		return "RNR NAK"
	case AckNAK:
		return "NAK"
	}
	return "reserved"
}

// Kind returns the syndrome's kind: ACK, RNR NAK or NAK.
func (a AETH) Kind() AckKind { return AckKind(a.Syndrome >> 5) }

// String describes the syndrome: "ACK (credits 31)", "NAK (PSN sequence
// error)", "RNR NAK (timer 14)".
func (a AETH) String() string {
	v := a.Syndrome & 0x1f
	switch a.Kind() {
	case AckACK:
		if v == 0x1f {
			return "ACK (credits invalid)"
		}
		return "ACK (credits " + strconv.Itoa(int(v)) + ")"
	case AckRNRNAK:
		return "RNR NAK (timer " + strconv.Itoa(int(v)) + ")"
	case AckNAK:
		if s := nakCode(v); s != "" {
			return "NAK (" + s + ")"
		}
		return "NAK (code " + strconv.Itoa(int(v)) + ")"
	}
	return "reserved syndrome " + strconv.Itoa(int(a.Syndrome))
}

// nakCode names a NAK's code (IBA table 43), or gives "" for a reserved one.
func nakCode(v uint8) string {
	switch v {
	case 0:
		return "PSN sequence error"
	case 1:
		return "invalid request"
	case 2:
		return "remote access error"
	case 3:
		return "remote operational error"
	case 4:
		return "invalid RD request"
	}
	return ""
}

// DETH is the datagram extended transport header (IBA 9.3.2).
type DETH struct {
	QKey  uint32 `json:"qkey"`
	SrcQP uint32 `json:"srcQP"`
}

// ExtHeaders holds the extended transport headers a packet carries after
// its BTH; nil pointers are absent headers.
type ExtHeaders struct {
	RDETH        *uint32    `json:"rdeth,omitempty"` // EE context
	DETH         *DETH      `json:"deth,omitempty"`
	XRCETH       *uint32    `json:"xrceth,omitempty"` // XRC SRQ number
	RETH         *RETH      `json:"reth,omitempty"`
	FETH         *uint32    `json:"feth,omitempty"` // FLUSH selectivity and placement type
	AtomicETH    *AtomicETH `json:"atomicETH,omitempty"`
	AETH         *AETH      `json:"aeth,omitempty"`
	AtomicAckETH *uint64    `json:"atomicAckETH,omitempty"` // original remote data
	ImmDt        *uint32    `json:"immDt,omitempty"`
	IETH         *uint32    `json:"ieth,omitempty"` // R_Key to invalidate
}

// decode reads the headers set names from b and returns their length.
// The caller has checked that b holds ethLen(set) bytes.
func (f *ExtHeaders) decode(set ethSet, b []byte) int {
	off := 0
	u32 := func() *uint32 { v := binary.BigEndian.Uint32(b[off:]); off += 4; return &v }
	if set&hasRDETH != 0 {
		v := *u32() & 0xffffff
		f.RDETH = &v
	}
	if set&hasDETH != 0 {
		f.DETH = &DETH{QKey: binary.BigEndian.Uint32(b[off:]), SrcQP: binary.BigEndian.Uint32(b[off+4:]) & 0xffffff}
		off += dethLen
	}
	if set&hasXRCETH != 0 {
		v := *u32() & 0xffffff
		f.XRCETH = &v
	}
	if set&hasFETH != 0 {
		f.FETH = u32()
	}
	if set&hasRETH != 0 {
		f.RETH = &RETH{VA: binary.BigEndian.Uint64(b[off:]), RKey: binary.BigEndian.Uint32(b[off+8:]),
			DMALength: binary.BigEndian.Uint32(b[off+12:])}
		off += rethLen
	}
	if set&hasAtomicETH != 0 {
		f.AtomicETH = &AtomicETH{VA: binary.BigEndian.Uint64(b[off:]), RKey: binary.BigEndian.Uint32(b[off+8:]),
			SwapAdd: binary.BigEndian.Uint64(b[off+12:]), Compare: binary.BigEndian.Uint64(b[off+20:])}
		off += atomicETHLen
	}
	if set&hasAETH != 0 {
		f.AETH = &AETH{Syndrome: b[off], MSN: binary.BigEndian.Uint32(b[off:]) & 0xffffff}
		off += aethLen
	}
	if set&hasAtomicAckETH != 0 {
		v := binary.BigEndian.Uint64(b[off:])
		f.AtomicAckETH = &v
		off += atomicAckETHLen
	}
	if set&hasImmDt != 0 {
		f.ImmDt = u32()
	}
	if set&hasIETH != 0 {
		f.IETH = u32()
	}
	return off
}

// appendTo writes the headers set names, in wire order; absent fields
// write as zeros.
func (f *ExtHeaders) appendTo(set ethSet, b []byte) []byte {
	u32 := func(p *uint32) {
		var v uint32
		if p != nil {
			v = *p
		}
		b = binary.BigEndian.AppendUint32(b, v)
	}
	if set&hasRDETH != 0 {
		u32(f.RDETH)
	}
	if set&hasDETH != 0 {
		d := DETH{}
		if f.DETH != nil {
			d = *f.DETH
		}
		b = binary.BigEndian.AppendUint32(b, d.QKey)
		b = binary.BigEndian.AppendUint32(b, d.SrcQP&0xffffff)
	}
	if set&hasXRCETH != 0 {
		u32(f.XRCETH)
	}
	if set&hasFETH != 0 {
		u32(f.FETH)
	}
	if set&hasRETH != 0 {
		r := RETH{}
		if f.RETH != nil {
			r = *f.RETH
		}
		b = binary.BigEndian.AppendUint64(b, r.VA)
		b = binary.BigEndian.AppendUint32(b, r.RKey)
		b = binary.BigEndian.AppendUint32(b, r.DMALength)
	}
	if set&hasAtomicETH != 0 {
		a := AtomicETH{}
		if f.AtomicETH != nil {
			a = *f.AtomicETH
		}
		b = binary.BigEndian.AppendUint64(b, a.VA)
		b = binary.BigEndian.AppendUint32(b, a.RKey)
		b = binary.BigEndian.AppendUint64(b, a.SwapAdd)
		b = binary.BigEndian.AppendUint64(b, a.Compare)
	}
	if set&hasAETH != 0 {
		a := AETH{}
		if f.AETH != nil {
			a = *f.AETH
		}
		b = binary.BigEndian.AppendUint32(b, uint32(a.Syndrome)<<24|a.MSN&0xffffff)
	}
	if set&hasAtomicAckETH != 0 {
		var v uint64
		if f.AtomicAckETH != nil {
			v = *f.AtomicAckETH
		}
		b = binary.BigEndian.AppendUint64(b, v)
	}
	if set&hasImmDt != 0 {
		u32(f.ImmDt)
	}
	if set&hasIETH != 0 {
		u32(f.IETH)
	}
	return b
}

// ethLen returns the bytes the headers in set take.
func ethLen(set ethSet) int {
	n := 0
	for _, h := range []struct {
		bit ethSet
		n   int
	}{{hasRDETH, rdethLen}, {hasDETH, dethLen}, {hasXRCETH, xrcethLen}, {hasRETH, rethLen}, {hasFETH, fethLen},
		{hasAtomicETH, atomicETHLen}, {hasAETH, aethLen}, {hasAtomicAckETH, atomicAckETHLen}, {hasImmDt, immDtLen},
		{hasIETH, iethLen}} {
		if set&h.bit != 0 {
			n += h.n
		}
	}
	return n
}
