package verbs

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// GRHSize is the room a UD receive buffer keeps at its start for the
// datagram's GRH (struct ibv_grh), whether or not the datagram has one.
const GRHSize = 40

// ErrNoReplyGID is wrapped by ReplyAHAttr's error when the port has no
// GID the datagram was sent to: the reply could not come from it.
var ErrNoReplyGID = errors.New("no GID of the port is the datagram's destination")

// ReplyAHAttr is the address vector of a reply to the UD datagram of
// completion wc received on port port (number portNum), whose receive
// buffer began with grh (GRHSize bytes), as libibverbs'
// ibv_init_ah_from_wc builds it: back to the sender's LID and SL, and
// with a GRH when the datagram had one (RoCE always: on RoCE v2 over
// IPv4 the IPv4 header in the GRH's last 20 bytes), from the port's GID
// the datagram was sent to (of the same RoCE version) to its source GID.
func ReplyAHAttr(port Port, portNum int, wc WorkCompletion, grh []byte) (AHAttr, error) {
	if len(grh) < GRHSize {
		panic(fmt.Sprintf("verbs: ReplyAHAttr with %d bytes of GRH, want %d", len(grh), GRHSize))
	}
	a := AHAttr{Port: portNum, DLID: wc.SLID, SL: wc.SL}
	if !wc.GRH {
		return a, nil
	}
	flow := binary.BigEndian.Uint32(grh[0:])
	g := &GRH{FlowLabel: flow & 0xfffff}
	var dgid [16]byte
	gidType := GIDTypeRoCEv2
	switch grhVersion(grh) {
	case 4:
		ip := grh[20:40]
		if ip[16]&0xf0 == 0xe0 {
			return AHAttr{}, fmt.Errorf("a reply to IPv4 multicast %d.%d.%d.%d: %w", ip[16], ip[17], ip[18], ip[19], ErrNoReplyGID)
		}
		dgid = v4Mapped(ip[16:20])
		g.DGID = v4Mapped(ip[12:16])
		g.HopLimit, g.TrafficClass = ip[8], ip[1]
	case 6:
		copy(dgid[:], grh[24:40])
		if dgid[0] == 0xff {
			return AHAttr{}, fmt.Errorf("a reply to multicast GID %x: %w", dgid, ErrNoReplyGID)
		}
		copy(g.DGID[:], grh[8:24])
		switch grh[6] { // next header
		case 17: // UDP: RoCE v2
		case 0x1b: // IB: InfiniBand or RoCE v1
			gidType = GIDTypeIBRoCEv1
		default:
			return AHAttr{}, fmt.Errorf("GRH next header %#x: neither InfiniBand nor RoCE", grh[6])
		}
		g.HopLimit, g.TrafficClass = grh[7], uint8(flow>>20)
	default:
		return AHAttr{}, fmt.Errorf("GRH version %d: neither IPv6 nor IPv4", grh[0]>>4)
	}
	for _, gid := range port.GIDs {
		if gid.Raw == dgid && gid.Type == gidType {
			g.SGIDIndex = gid.Index
			a.GRH = g
			return a, nil
		}
	}
	return AHAttr{}, fmt.Errorf("port %d: %x: %w", portNum, dgid, ErrNoReplyGID)
}

// grhVersion is 6 for an IPv6-formed GRH and 4 for RoCE v2's IPv4 header
// in its last 20 bytes, as libibverbs tells them apart: a GRH whose
// version is not 6 is IPv4's when the header there says 4; one whose
// version is 6 is still IPv4's when that header is 20 bytes long and its
// checksum holds. 0 for neither.
func grhVersion(grh []byte) int {
	ip := grh[20:40]
	if grh[0]>>4 != 6 {
		if ip[0]>>4 == 4 {
			return 4
		}
		return 0
	}
	if ip[0]&0xf != 5 {
		return 6
	}
	var sum uint32
	for i := 0; i < 20; i += 2 {
		if i != 10 {
			sum += uint32(binary.BigEndian.Uint16(ip[i:]))
		}
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	if uint16(^sum) == binary.BigEndian.Uint16(ip[10:]) {
		return 4
	}
	return 6
}

func v4Mapped(ip []byte) [16]byte {
	var g [16]byte
	g[10], g[11] = 0xff, 0xff
	copy(g[12:], ip)
	return g
}
