package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/netip"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
)

// Encap is how an InfiniBand transport packet travelled.
type Encap uint8

// The encapsulations.
const (
	EncapNone   Encap = iota // not an RDMA packet
	EncapIB                  // native InfiniBand: LRH [GRH] BTH ...
	EncapRoCEv1              // Ethernet, Ethertype 0x8915: GRH BTH ...
	EncapRoCEv2              // UDP port 4791 over IPv4 or IPv6: BTH ...
)

var encapNames = [...]string{"none", "IB", "RoCEv1", "RoCEv2"}

// String names the encapsulation.
func (e Encap) String() string {
	if int(e) < len(encapNames) {
		return encapNames[e]
	}
	return fmt.Sprintf("encap(%d)", uint8(e))
}

// MarshalText makes an encapsulation its name in JSON.
func (e Encap) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// ICRCStatus says whether a packet's invariant CRC was checked and held.
type ICRCStatus uint8

// The ICRC outcomes.
const (
	ICRCUnchecked ICRCStatus = iota // the capture cut the packet short, or it did not decode
	ICRCGood
	ICRCBad
)

// String returns "ok", "bad" or "unchecked".
func (s ICRCStatus) String() string {
	switch s {
	case ICRCGood:
		return "ok"
	case ICRCBad:
		return "bad"
	}
	return "unchecked"
}

// MarshalText makes the status its name in JSON.
func (s ICRCStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Packet is one decoded frame. Err is set when the frame is an RDMA packet
// that does not decode (cut short, malformed); the fields before the fault
// are filled in.
type Packet struct {
	Frame int       `json:"frame"`
	Time  time.Time `json:"time"`
	Encap Encap     `json:"encap"`
	// Src and Dst name the end points: IP addresses for RoCEv2, GIDs for
	// packets with a GRH, "LID n" for InfiniBand packets without one.
	Src string `json:"src"`
	Dst string `json:"dst"`
	// UDPSrcPort is the RoCEv2 UDP source port (the flow's entropy).
	UDPSrcPort uint16 `json:"udpSrcPort,omitempty"`
	LRH        *LRH   `json:"lrh,omitempty"`
	GRH        *GRH   `json:"grh,omitempty"`
	BTH        BTH    `json:"bth"`
	ExtHeaders
	// Payload is the packet's data as captured, without pad and ICRC;
	// PayloadLen its length on the wire (larger when the capture cut it).
	Payload    []byte `json:"-"`
	PayloadLen int    `json:"payloadLength"`
	// Truncated is set when the capture holds less than the packet.
	Truncated bool `json:"truncated,omitempty"`
	// ICRC is the CRC the packet carries, WantICRC the one computed.
	ICRC       uint32     `json:"icrc"`
	WantICRC   uint32     `json:"wantIcrc"`
	ICRCStatus ICRCStatus `json:"icrcStatus"`
	// MAD is the header of a MAD sent to or from QP0 or QP1, MADData its
	// 256 bytes.
	MAD     *mad.Header `json:"mad,omitempty"`
	MADData []byte      `json:"-"`
	// CM is the Communication Management message a CM MAD carries.
	CM  *CMMessage `json:"cm,omitempty"`
	Err error      `json:"-"`
}

// DecodeOptions tune Decode.
type DecodeOptions struct {
	// RoCEv2Port is the UDP destination port of RoCEv2 (4791 when 0).
	RoCEv2Port uint16
}

// RoCEv2Port is the IANA port of RoCEv2.
const RoCEv2Port = 4791

// Ethertypes a frame may carry.
const (
	etherIPv4   = 0x0800
	etherIPv6   = 0x86dd
	etherRoCEv1 = 0x8915
	etherVLAN   = 0x8100
	etherQinQ   = 0x88a8
)

// ERF record types ibdump writes (Endace's ERF types 21 and 22) and the
// Ethernet one.
const (
	erfTypeEthernet       = 2
	erfTypeInfiniBand     = 21
	erfTypeInfiniBandLink = 22
)

// errNotRDMA marks frames that are not RDMA traffic (ARP, TCP, ...): they
// are skipped, not reported.
var errNotRDMA = errors.New("not an RDMA packet")

// IsRDMA reports whether p is an RDMA packet (decoded or not), as opposed
// to other traffic in the capture.
func (p *Packet) IsRDMA() bool { return p.Encap != EncapNone }

// Decode decodes one frame. It returns a Packet with Encap EncapNone for
// frames that are not RDMA packets, and one with Err set for RDMA packets
// that are malformed or cut short.
func Decode(f Frame, o DecodeOptions) *Packet {
	if o.RoCEv2Port == 0 {
		o.RoCEv2Port = RoCEv2Port
	}
	p := &Packet{Frame: f.Number, Time: f.Time}
	d := decoder{p: p, o: o, truncated: f.OrigLen > len(f.Data)}
	err := d.link(f.Link, f.Data)
	if errors.Is(err, errNotRDMA) {
		p.Encap = EncapNone
		return p
	}
	if err != nil {
		p.Err = err
	}
	return p
}

// decoder carries what the outer headers say down to the transport.
type decoder struct {
	p         *Packet
	o         DecodeOptions
	truncated bool
	// icrcPrefix is the masked outer headers the ICRC covers ahead of the
	// BTH (the masked LRH, or eight bytes of ones for RoCE, and the masked
	// GRH or IP and UDP headers).
	icrcPrefix []byte
}

func (d *decoder) link(l LinkType, b []byte) error {
	switch l {
	case LinkEthernet:
		return d.ethernet(b)
	case LinkLinuxSLL:
		if len(b) < 16 {
			return d.short("Linux cooked header", 16, len(b))
		}
		return d.ethertype(binary.BigEndian.Uint16(b[14:]), b[16:])
	case LinkLinuxSLL2:
		if len(b) < 20 {
			return d.short("Linux cooked v2 header", 20, len(b))
		}
		return d.ethertype(binary.BigEndian.Uint16(b), b[20:])
	case LinkRaw:
		if len(b) == 0 {
			return errNotRDMA
		}
		switch b[0] >> 4 {
		case 4:
			return d.ipv4(b)
		case 6:
			return d.ipv6(b)
		}
		return errNotRDMA
	case LinkIPv4:
		return d.ipv4(b)
	case LinkIPv6:
		return d.ipv6(b)
	case LinkInfiniBand:
		return d.infiniband(b)
	case LinkERF:
		return d.erf(b)
	}
	return errNotRDMA
}

func (d *decoder) short(what string, need, have int) error {
	if d.truncated {
		d.p.Truncated = true
		return fmt.Errorf("%s: the capture kept %d bytes, %d needed (snap length too small)", what, have, need)
	}
	return fmt.Errorf("%s: %d bytes, %d needed", what, have, need)
}

func (d *decoder) ethernet(b []byte) error {
	if len(b) < 14 {
		return errNotRDMA
	}
	typ, b := binary.BigEndian.Uint16(b[12:]), b[14:]
	for (typ == etherVLAN || typ == etherQinQ) && len(b) >= 4 {
		typ, b = binary.BigEndian.Uint16(b[2:]), b[4:]
	}
	return d.ethertype(typ, b)
}

func (d *decoder) ethertype(typ uint16, b []byte) error {
	switch typ {
	case etherIPv4:
		return d.ipv4(b)
	case etherIPv6:
		return d.ipv6(b)
	case etherRoCEv1:
		d.p.Encap = EncapRoCEv1
		d.icrcPrefix = append(d.icrcPrefix, ones8[:]...)
		return d.grh(b)
	}
	return errNotRDMA
}

var ones8 = [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// ipv4 decodes an IPv4 header and, for UDP to the RoCEv2 port, the packet.
func (d *decoder) ipv4(b []byte) error {
	if len(b) < 20 || b[9] != 17 {
		return errNotRDMA
	}
	ihl := int(b[0]&0xf) * 4
	total := int(binary.BigEndian.Uint16(b[2:]))
	if ihl < 20 || len(b) < ihl+8 {
		return errNotRDMA
	}
	if binary.BigEndian.Uint16(b[ihl+2:]) != d.o.RoCEv2Port {
		return errNotRDMA
	}
	d.p.Encap = EncapRoCEv2
	src, dst := netip.AddrFrom4([4]byte(b[12:16])), netip.AddrFrom4([4]byte(b[16:20]))
	d.p.Src, d.p.Dst = src.String(), dst.String()
	if frag := binary.BigEndian.Uint16(b[6:]); frag&0x3fff != 0 {
		return errors.New("IPv4: a fragment (RoCEv2 packets are never fragmented)")
	}
	if total < ihl+8 {
		return fmt.Errorf("IPv4: total length %d is shorter than its headers", total)
	}
	// The ICRC covers the IP header with TOS, TTL and checksum as ones.
	m := append(append([]byte(nil), ones8[:]...), b[:ihl]...)
	m[8+1], m[8+8], m[8+10], m[8+11] = 0xff, 0xff, 0xff, 0xff
	d.icrcPrefix = m
	return d.udp(b[ihl:], total-ihl)
}

// ipv6 decodes an IPv6 header and, for UDP to the RoCEv2 port, the packet.
func (d *decoder) ipv6(b []byte) error {
	if len(b) < 48 || b[6] != 17 {
		return errNotRDMA
	}
	if binary.BigEndian.Uint16(b[42:]) != d.o.RoCEv2Port {
		return errNotRDMA
	}
	d.p.Encap = EncapRoCEv2
	src, dst := netip.AddrFrom16([16]byte(b[8:24])), netip.AddrFrom16([16]byte(b[24:40]))
	d.p.Src, d.p.Dst = src.Unmap().String(), dst.Unmap().String()
	m := append(append([]byte(nil), ones8[:]...), b[:40]...)
	maskGRH(m[8:])
	d.icrcPrefix = m
	return d.udp(b[40:], int(binary.BigEndian.Uint16(b[4:])))
}

// maskGRH sets a GRH's (or IPv6 header's) traffic class, flow label and
// hop limit to ones, as the ICRC sees them.
func maskGRH(h []byte) {
	h[0] |= 0x0f
	h[1], h[2], h[3], h[7] = 0xff, 0xff, 0xff, 0xff
}

// udp decodes the UDP header; ipLen is what the IP header says follows it.
func (d *decoder) udp(b []byte, ipLen int) error {
	d.p.UDPSrcPort = binary.BigEndian.Uint16(b)
	ulen := int(binary.BigEndian.Uint16(b[4:]))
	if ulen < 8 || ulen > ipLen {
		return fmt.Errorf("UDP: length %d does not fit the IP packet (%d bytes)", ulen, ipLen)
	}
	h := append([]byte(nil), b[:8]...)
	h[6], h[7] = 0xff, 0xff
	d.icrcPrefix = append(d.icrcPrefix, h...)
	return d.transport(b[8:], ulen-8)
}

// grh decodes a GRH (RoCEv1, or after an LRH) and the transport after it.
func (d *decoder) grh(b []byte) error {
	if len(b) < grhLen {
		return d.short("GRH", grhLen, len(b))
	}
	g := &GRH{}
	g.decode(b)
	d.p.GRH = g
	d.p.Src, d.p.Dst = g.SGID.Unmap().String(), g.DGID.Unmap().String()
	m := append([]byte(nil), b[:grhLen]...)
	maskGRH(m)
	d.icrcPrefix = append(d.icrcPrefix, m...)
	if g.NxtHdr != nxtHdrBTH {
		return fmt.Errorf("GRH: next header %#02x is not an IBA transport header", g.NxtHdr)
	}
	return d.transport(b[grhLen:], int(g.PayLen))
}

// infiniband decodes a native InfiniBand packet from its LRH.
func (d *decoder) infiniband(b []byte) error {
	d.p.Encap = EncapIB
	if len(b) < lrhLen {
		return d.short("LRH", lrhLen, len(b))
	}
	l := &LRH{}
	l.decode(b)
	d.p.LRH = l
	d.p.Src, d.p.Dst = LIDAddr(l.SLID), LIDAddr(l.DLID)
	m := append([]byte(nil), b[:lrhLen]...)
	m[0] |= 0xf0 // VL
	d.icrcPrefix = m
	n := int(l.PktLen)*4 - lrhLen // what follows the LRH up to the ICRC (the VCRC is not counted)
	switch l.LNH {
	case LNHIBAGlobal:
		if len(b) >= lrhLen+grhLen {
			// The GRH's PayLen is what counts; PktLen must agree.
			if want := int(binary.BigEndian.Uint16(b[lrhLen+4:])) + grhLen; n != want {
				return fmt.Errorf("LRH: packet length %d words disagrees with the GRH's payload length %d", l.PktLen, want-grhLen)
			}
		}
		return d.grh(b[lrhLen:])
	case LNHIBALocal:
		return d.transport(b[lrhLen:], n)
	}
	return errNotRDMA
}

// erf decodes an Endace ERF record, as ibdump writes them around
// InfiniBand packets.
func (d *decoder) erf(b []byte) error {
	if len(b) < 16 {
		return errNotRDMA
	}
	typ, off := b[8], 16
	for ext := typ&0x80 != 0; ext; off += 8 {
		if len(b) < off+8 {
			return errNotRDMA
		}
		ext = b[off]&0x80 != 0
	}
	switch typ & 0x7f {
	case erfTypeInfiniBand, erfTypeInfiniBandLink:
		return d.infiniband(b[off:])
	case erfTypeEthernet:
		if len(b) < off+2 {
			return errNotRDMA
		}
		return d.ethernet(b[off+2:])
	}
	return errNotRDMA
}

// transport decodes the BTH and what follows. b is what the capture holds,
// n the transport packet's length on the wire from the BTH through the
// ICRC.
func (d *decoder) transport(b []byte, n int) error {
	p := d.p
	if n < bthLen+icrcLen {
		return fmt.Errorf("transport: %d bytes, less than a BTH and ICRC", n)
	}
	if len(b) > n {
		b = b[:n] // Ethernet padding, the VCRC
	}
	if len(b) < n {
		if !d.truncated {
			return fmt.Errorf("transport: %d bytes, the headers say %d", len(b), n)
		}
		p.Truncated = true
	}
	if len(b) < bthLen {
		return d.short("BTH", bthLen, len(b))
	}
	p.BTH.decode(b)
	set, ok := headersOf(p.BTH.Opcode)
	if !ok {
		return fmt.Errorf("BTH: opcode %#02x is reserved", uint8(p.BTH.Opcode))
	}
	hl := bthLen + ethLen(set)
	if p.BTH.Opcode == OpcodeCNP {
		hl += cnpPayloadLen
	}
	if hl+icrcLen > n {
		return fmt.Errorf("%v: %d bytes, its headers and ICRC need %d", p.BTH.Opcode, n, hl+icrcLen)
	}
	if len(b) < hl {
		return d.short(p.BTH.Opcode.String()+" headers", hl, len(b))
	}
	p.ExtHeaders.decode(set, b[bthLen:])
	pad := int(p.BTH.PadCnt)
	end := n - icrcLen - pad
	if end < hl {
		return fmt.Errorf("%v: pad count %d leaves no room for the payload", p.BTH.Opcode, pad)
	}
	if set&hasPayload == 0 && end > hl {
		return fmt.Errorf("%v: %d bytes of payload where none belong", p.BTH.Opcode, end-hl)
	}
	p.PayloadLen = end - hl
	p.Payload = b[hl:min(end, len(b))]
	if !p.Truncated {
		p.ICRC = binary.LittleEndian.Uint32(b[n-icrcLen:])
		p.WantICRC = computeICRC(d.icrcPrefix, b[:n-icrcLen])
		p.ICRCStatus = ICRCBad
		if p.ICRC == p.WantICRC {
			p.ICRCStatus = ICRCGood
		}
	}
	return d.mad()
}

// computeICRC returns the invariant CRC (IBA 7.8.1): CRC-32 as Ethernet's
// over the masked outer headers, the BTH with its reserved byte (FECN, BECN)
// as ones, and the rest of the packet up to the ICRC. The packet carries it
// least significant byte first.
func computeICRC(prefix, transport []byte) uint32 {
	crc := crc32.Update(0, crc32.IEEETable, prefix)
	var bth [bthLen]byte
	copy(bth[:], transport)
	bth[4] = 0xff
	crc = crc32.Update(crc, crc32.IEEETable, bth[:])
	return crc32.Update(crc, crc32.IEEETable, transport[bthLen:])
}

// mad decodes the MAD header of a UD datagram to or from QP0 or QP1.
func (d *decoder) mad() error {
	p := d.p
	if p.BTH.Opcode.Transport() != TransportUD || p.DETH == nil || (p.BTH.DestQP > 1 && p.DETH.SrcQP > 1) {
		return nil
	}
	if p.PayloadLen < mad.Size {
		return fmt.Errorf("MAD: %d bytes, a MAD has %d", p.PayloadLen, mad.Size)
	}
	if len(p.Payload) < mad.HeaderLen {
		return nil // cut by the capture; said already
	}
	h := &mad.Header{}
	if err := h.UnmarshalBinary(p.Payload); err != nil {
		return err
	}
	p.MAD, p.MADData = h, p.Payload[:min(len(p.Payload), mad.Size)]
	if h.MgmtClass == mad.ClassCM && len(p.MADData) == mad.Size {
		p.CM, _ = DecodeCM(p.MADData) // a whole MAD of the CM class always decodes
	}
	return nil
}
