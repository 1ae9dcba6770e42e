package trace

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
)

// EncodeOptions say how Encode frames a packet.
type EncodeOptions struct {
	// Link is the capture's link type: Ethernet (the default), Linux
	// cooked (SLL, SLL2), raw IP, or InfiniBand or ERF for native packets.
	Link LinkType
	// BadICRC writes an ICRC that does not match.
	BadICRC bool
	// RoCEv2Port is the UDP destination port (4791 when 0).
	RoCEv2Port uint16
}

// Encode builds the frame that carries p: the link header, the outer
// headers its Encap calls for (IPv4 or IPv6 and UDP for RoCEv2, a GRH for
// RoCEv1, an LRH and optional GRH for InfiniBand), the BTH and extended
// headers its opcode calls for, the payload, pad and ICRC. Lengths, PadCnt
// and the ICRC are computed; Src and Dst are IP addresses or GIDs (for
// InfiniBand without a GRH, LRH holds the LIDs).
func Encode(p *Packet, o EncodeOptions) ([]byte, error) {
	if o.Link == 0 {
		o.Link = LinkEthernet
	}
	if o.RoCEv2Port == 0 {
		o.RoCEv2Port = RoCEv2Port
	}
	set, ok := headersOf(p.BTH.Opcode)
	if !ok {
		return nil, fmt.Errorf("opcode %#02x is reserved", uint8(p.BTH.Opcode))
	}
	bth := p.BTH
	bth.PadCnt = uint8((4 - len(p.Payload)%4) % 4)
	t := bth.appendTo(nil)
	t = p.ExtHeaders.appendTo(set, t)
	if p.BTH.Opcode == OpcodeCNP {
		t = append(t, make([]byte, cnpPayloadLen)...)
	}
	t = append(t, p.Payload...)
	t = append(t, make([]byte, bth.PadCnt)...)
	n := len(t) + icrcLen // the transport packet on the wire

	var outer, prefix []byte
	var ethertype uint16
	switch p.Encap {
	case EncapRoCEv2:
		src, dst, err := addrs(p)
		if err != nil {
			return nil, err
		}
		udp := binary.BigEndian.AppendUint16(nil, p.UDPSrcPort)
		udp = binary.BigEndian.AppendUint16(udp, o.RoCEv2Port)
		udp = binary.BigEndian.AppendUint16(udp, uint16(8+n))
		udp = append(udp, 0, 0)
		if src.Is4() && dst.Is4() {
			ip := []byte{0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0}
			binary.BigEndian.PutUint16(ip[2:], uint16(20+8+n))
			s, d := src.As4(), dst.As4()
			ip = append(append(ip, s[:]...), d[:]...)
			binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip))
			outer, ethertype = append(ip, udp...), etherIPv4
			prefix = append(append([]byte(nil), ones8[:]...), ip...)
			prefix[8+1], prefix[8+8], prefix[8+10], prefix[8+11] = 0xff, 0xff, 0xff, 0xff
		} else {
			ip := binary.BigEndian.AppendUint32(nil, 6<<28)
			ip = binary.BigEndian.AppendUint16(ip, uint16(8+n))
			ip = append(ip, 17, 64)
			s, d := src.As16(), dst.As16()
			ip = append(append(ip, s[:]...), d[:]...)
			outer, ethertype = append(ip, udp...), etherIPv6
			prefix = append(append([]byte(nil), ones8[:]...), ip...)
			maskGRH(prefix[8:])
		}
		u := append([]byte(nil), udp...)
		u[6], u[7] = 0xff, 0xff
		prefix = append(prefix, u...)
	case EncapRoCEv1:
		g, err := grhFor(p, n)
		if err != nil {
			return nil, err
		}
		outer, ethertype = g.appendTo(nil), etherRoCEv1
		prefix = append(append([]byte(nil), ones8[:]...), outer...)
		maskGRH(prefix[8:])
	case EncapIB:
		l := LRH{LNH: LNHIBALocal}
		if p.LRH != nil {
			l = *p.LRH
		}
		var g []byte
		if l.LNH == LNHIBAGlobal || p.GRH != nil {
			gr, err := grhFor(p, n)
			if err != nil {
				return nil, err
			}
			g, l.LNH = gr.appendTo(nil), LNHIBAGlobal
		} else {
			l.LNH = LNHIBALocal
		}
		l.PktLen = uint16((lrhLen + len(g) + n) / 4)
		outer = l.appendTo(nil)
		prefix = append([]byte(nil), outer...)
		prefix[0] |= 0xf0
		outer = append(outer, g...)
		if len(g) > 0 {
			mg := append([]byte(nil), g...)
			maskGRH(mg)
			prefix = append(prefix, mg...)
		}
	default:
		return nil, fmt.Errorf("encapsulation %v cannot be encoded", p.Encap)
	}
	icrc := computeICRC(prefix, t)
	if o.BadICRC {
		icrc ^= 0xdeadbeef
	}
	pkt := binary.LittleEndian.AppendUint32(append(outer, t...), icrc)
	if p.Encap == EncapIB {
		pkt = append(pkt, 0, 0) // the VCRC: ibtool neither needs nor checks it
	}
	return frameFor(o.Link, p.Encap, ethertype, pkt)
}

// frameFor wraps a packet in the link type's header.
func frameFor(link LinkType, e Encap, ethertype uint16, pkt []byte) ([]byte, error) {
	if e == EncapIB {
		switch link {
		case LinkInfiniBand:
			return pkt, nil
		case LinkERF:
			h := make([]byte, 16)
			h[8], h[9] = erfTypeInfiniBand, 4
			binary.BigEndian.PutUint16(h[10:], uint16(16+len(pkt)))
			binary.BigEndian.PutUint16(h[14:], uint16(len(pkt)))
			return append(h, pkt...), nil
		}
		return nil, fmt.Errorf("an InfiniBand packet cannot go in a %v capture", link)
	}
	switch link {
	case LinkEthernet:
		h := []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1}
		return append(binary.BigEndian.AppendUint16(h, ethertype), pkt...), nil
	case LinkLinuxSLL:
		h := []byte{0, 4, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0}
		return append(binary.BigEndian.AppendUint16(h, ethertype), pkt...), nil
	case LinkLinuxSLL2:
		h := binary.BigEndian.AppendUint16(nil, ethertype)
		h = append(h, 0, 0, 0, 0, 0, 1, 0, 1, 4, 6, 2, 0, 0, 0, 0, 1, 0, 0)
		return append(h, pkt...), nil
	case LinkRaw, LinkIPv4, LinkIPv6:
		if e != EncapRoCEv2 {
			return nil, fmt.Errorf("a %v packet cannot go in a %v capture", e, link)
		}
		return pkt, nil
	case LinkERF:
		h := make([]byte, 18)
		h[8], h[9] = erfTypeEthernet, 4
		binary.BigEndian.PutUint16(h[10:], uint16(18+14+len(pkt)))
		binary.BigEndian.PutUint16(h[14:], uint16(14+len(pkt)))
		f, _ := frameFor(LinkEthernet, e, ethertype, pkt)
		return append(h, f...), nil
	}
	return nil, fmt.Errorf("link type %v cannot be written", link)
}

// addrs parses a packet's Src and Dst as IP addresses or GIDs.
func addrs(p *Packet) (netip.Addr, netip.Addr, error) {
	src, err := netip.ParseAddr(p.Src)
	if err != nil {
		return src, src, fmt.Errorf("source %q: %v", p.Src, err)
	}
	dst, err := netip.ParseAddr(p.Dst)
	if err != nil {
		return src, dst, fmt.Errorf("destination %q: %v", p.Dst, err)
	}
	return src, dst, nil
}

// grhFor returns p's GRH with its payload length set, or one built from
// Src and Dst.
func grhFor(p *Packet, n int) (GRH, error) {
	var g GRH
	if p.GRH != nil {
		g = *p.GRH
	} else {
		src, dst, err := addrs(p)
		if err != nil {
			return g, err
		}
		g = GRH{IPVer: 6, HopLmt: 64, SGID: as16(src), DGID: as16(dst)}
	}
	g.PayLen, g.NxtHdr = uint16(n), nxtHdrBTH
	return g, nil
}

func as16(a netip.Addr) netip.Addr { return netip.AddrFrom16(a.As16()) }

// ipChecksum is the IPv4 header checksum.
func ipChecksum(h []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(h); i += 2 {
		s += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// LIDAddr returns the end-point name Decode gives an InfiniBand port
// without a GRH: "LID 5".
func LIDAddr(lid uint16) string { return "LID " + strconv.Itoa(int(lid)) }
