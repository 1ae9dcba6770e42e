package trace

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ibtool/ibtool/pkg/mad"
)

// cmpPacket compares decoded packets on what they say, not on where they
// were captured.
var cmpPacket = cmp.Options{
	cmpopts.IgnoreUnexported(BTH{}),
	cmpopts.IgnoreFields(Packet{}, "Frame", "Time", "Err", "ICRC", "WantICRC", "MADData"),
	cmpopts.EquateEmpty(),
	cmp.Comparer(func(a, b netip.Addr) bool { return a == b }),
}

func TestDecodeRoundTrip(t *testing.T) {
	imm := uint32(0x01020304)
	gidA, gidB := netip.MustParseAddr("fe80::2"), netip.MustParseAddr("fe80::3")
	base := func() *Packet {
		return withRETH(rc(OpWriteFirst, 0x11, 0x123456, fill(1, 1027)), 0x7f0000001000, 0xabc, 4096)
	}
	ib := func(grh bool) *Packet {
		p := base()
		p.Encap, p.Src, p.Dst = EncapIB, LIDAddr(1), LIDAddr(2)
		p.LRH = &LRH{SL: 3, DLID: 2, SLID: 1}
		if grh {
			p.GRH = &GRH{IPVer: 6, HopLmt: 1, SGID: gidA, DGID: gidB}
			p.Src, p.Dst = gidA.String(), gidB.String()
		}
		return p
	}
	tests := []struct {
		name string
		p    *Packet
		link LinkType
	}{
		{"RoCEv2 IPv4 on Ethernet", base(), LinkEthernet},
		{"RoCEv2 IPv4 on SLL", base(), LinkLinuxSLL},
		{"RoCEv2 IPv4 on SLL2", base(), LinkLinuxSLL2},
		{"RoCEv2 IPv4 raw", base(), LinkRaw},
		{"RoCEv2 IPv4 LINKTYPE_IPV4", base(), LinkIPv4},
		{"RoCEv2 IPv4 in ERF", base(), LinkERF},
		{"RoCEv2 IPv6 on Ethernet", func() *Packet { p := base(); p.Src, p.Dst = "2001:db8::1", "2001:db8::2"; return p }(), LinkEthernet},
		{"RoCEv2 IPv6 LINKTYPE_IPV6", func() *Packet { p := base(); p.Src, p.Dst = "2001:db8::1", "2001:db8::2"; return p }(), LinkIPv6},
		{"RoCEv1", func() *Packet {
			p := base()
			p.Encap, p.Src, p.Dst = EncapRoCEv1, gidA.String(), gidB.String()
			p.GRH = &GRH{IPVer: 6, TClass: 3, FlowLabel: 7, HopLmt: 1, SGID: gidA, DGID: gidB}
			return p
		}(), LinkEthernet},
		{"InfiniBand LRH only", ib(false), LinkInfiniBand},
		{"InfiniBand with GRH", ib(true), LinkInfiniBand},
		{"InfiniBand in ERF (ibdump)", ib(false), LinkERF},
		{"RC SEND Last with Immediate", func() *Packet { p := rc(OpSendLastImm, 0x11, 5, fill(0, 3)); p.ImmDt = &imm; return p }(), LinkEthernet},
		{"RC SEND Only with Invalidate", func() *Packet { p := rc(OpSendOnlyInvalidate, 0x11, 5, nil); p.IETH = &imm; return p }(), LinkEthernet},
		{"RC RDMA READ Request", withRETH(rc(OpReadRequest, 0x11, 0xffffff, nil), 1, 2, 3), LinkEthernet},
		{"RC ATOMIC Acknowledge", func() *Packet {
			p := reply(OpAtomicAcknowledge, 0x12, 9, nil)
			v := uint64(42)
			p.AtomicAckETH = &v
			return p
		}(), LinkEthernet},
		{"RC CmpSwap", func() *Packet {
			p := rc(OpCompareSwap, 0x11, 9, nil)
			p.AtomicETH = &AtomicETH{VA: 8, RKey: 9, SwapAdd: 10, Compare: 11}
			return p
		}(), LinkEthernet},
		{"RD SEND Only", func() *Packet {
			p := rc(OpSendOnly, 0x11, 9, fill(0, 8))
			p.BTH.Opcode = Opcode(TransportRD)<<5 | Opcode(OpSendOnly)
			ee := uint32(5)
			p.RDETH, p.DETH = &ee, &DETH{QKey: 0x80010000, SrcQP: 0x22}
			return p
		}(), LinkEthernet},
		{"XRC RDMA WRITE Only", func() *Packet {
			p := withRETH(rc(OpWriteOnly, 0x11, 9, fill(0, 8)), 1, 2, 8)
			p.BTH.Opcode = Opcode(TransportXRC)<<5 | Opcode(OpWriteOnly)
			srq := uint32(0x33)
			p.XRCETH = &srq
			return p
		}(), LinkEthernet},
		{"UC RDMA WRITE Only with Immediate", func() *Packet {
			p := withRETH(rc(OpWriteOnlyImm, 0x11, 9, fill(0, 8)), 1, 2, 8)
			p.BTH.Opcode = Opcode(TransportUC)<<5 | Opcode(OpWriteOnlyImm)
			p.ImmDt = &imm
			return p
		}(), LinkEthernet},
		{"CNP", func() *Packet { p := rc(0, 0x11, 0, nil); p.BTH.Opcode = OpcodeCNP; return p }(), LinkEthernet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := encodeAll(t, []*Packet{tt.p}, EncodeOptions{Link: tt.link})
			got := Decode(fs[0], DecodeOptions{})
			if got.Err != nil {
				t.Fatalf("decode: %v", got.Err)
			}
			if got.ICRCStatus != ICRCGood {
				t.Errorf("ICRC %#08x, computed %#08x: want a good ICRC", got.ICRC, got.WantICRC)
			}
			want := *tt.p
			want.BTH.PadCnt = uint8((4 - len(want.Payload)%4) % 4)
			want.PayloadLen = len(want.Payload)
			want.ICRCStatus = ICRCGood
			if want.Encap != EncapRoCEv2 {
				want.UDPSrcPort = 0
			}
			if want.LRH != nil {
				l := *want.LRH
				l.LNH, l.PktLen = got.LRH.LNH, got.LRH.PktLen
				want.LRH = &l
			}
			if want.GRH != nil {
				g := *want.GRH
				g.PayLen, g.NxtHdr = got.GRH.PayLen, nxtHdrBTH
				want.GRH = &g
			}
			if diff := cmp.Diff(&want, got, cmpPacket); diff != "" {
				t.Errorf("unexpected packet (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeFaults(t *testing.T) {
	write := withRETH(rc(OpWriteOnly, 0x11, 7, fill(0, 100)), 1, 2, 100)
	good := encodeAll(t, []*Packet{write}, EncodeOptions{})[0]
	bad := encodeAll(t, []*Packet{write}, EncodeOptions{BadICRC: true})[0]
	cut := good
	cut.Data = good.Data[:len(good.Data)-30] // a snap length
	short := good
	short.Data = good.Data[:len(good.Data)-30]
	short.OrigLen = len(short.Data) // cut, and the capture does not say so
	tiny := good
	tiny.Data, tiny.OrigLen = good.Data[:14+20+8+6], len(good.Data)
	reserved := append([]byte(nil), good.Data...)
	reserved[14+20+8] = 0x1e // RC opcode 0x1e is reserved
	arp := Frame{Number: 1, Link: LinkEthernet, Data: append(make([]byte, 12), 0x08, 0x06, 0, 1), OrigLen: 16}
	tcp := Frame{Number: 1, Link: LinkRaw, Data: append([]byte{0x45}, make([]byte, 39)...), OrigLen: 40}
	tests := []struct {
		name      string
		f         Frame
		encap     Encap
		icrc      ICRCStatus
		truncated bool
		payload   int
		err       string
	}{
		{"good", good, EncapRoCEv2, ICRCGood, false, 100, ""},
		{"bad ICRC", bad, EncapRoCEv2, ICRCBad, false, 100, ""},
		{"snap length", cut, EncapRoCEv2, ICRCUnchecked, true, 74, ""},
		{"cut short", short, EncapRoCEv2, ICRCUnchecked, false, 0, "the headers say"},
		{"cut in the BTH", tiny, EncapRoCEv2, ICRCUnchecked, true, 0, "BTH: the capture kept 6 bytes"},
		{"reserved opcode", Frame{Number: 1, Link: LinkEthernet, Data: reserved, OrigLen: len(reserved)}, EncapRoCEv2, ICRCUnchecked, false, 0, "reserved"},
		{"ARP", arp, EncapNone, ICRCUnchecked, false, 0, ""},
		{"not UDP", tcp, EncapNone, ICRCUnchecked, false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Decode(tt.f, DecodeOptions{})
			errText := ""
			if p.Err != nil {
				errText = p.Err.Error()
			}
			if (tt.err == "") != (errText == "") || !strings.Contains(errText, tt.err) {
				t.Errorf("error %q, want one saying %q", errText, tt.err)
			}
			type out struct {
				Encap     Encap
				ICRC      ICRCStatus
				Truncated bool
				Payload   int
			}
			want := out{tt.encap, tt.icrc, tt.truncated, tt.payload}
			got := out{p.Encap, p.ICRCStatus, p.Truncated, len(p.Payload)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unexpected decoding (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeMAD: a SubnAdm Get on QP1 decodes its MAD header with pkg/mad.
func TestDecodeMAD(t *testing.T) {
	m := make([]byte, mad.Size)
	m[0], m[1], m[2], m[3] = 1, byte(mad.ClassSA), 2, byte(mad.MethodGet)
	binary.BigEndian.PutUint64(m[8:], 0x1234)
	binary.BigEndian.PutUint16(m[16:], 0x11) // NodeRecord
	p := rc(OpSendOnly, 1, 3, m)
	p.BTH.Opcode = Opcode(TransportUD)<<5 | Opcode(OpSendOnly)
	p.DETH = &DETH{QKey: 0x80010000, SrcQP: 1}
	got := Decode(encodeAll(t, []*Packet{p}, EncodeOptions{})[0], DecodeOptions{})
	if got.Err != nil {
		t.Fatal(got.Err)
	}
	want := &mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSA, ClassVersion: 2, Method: mad.MethodGet, TID: 0x1234, AttrID: 0x11}
	if diff := cmp.Diff(want, got.MAD); diff != "" {
		t.Errorf("unexpected MAD header (-want +got):\n%s", diff)
	}
	if !bytes.Equal(got.MADData, m) {
		t.Error("the MAD's bytes differ from those sent")
	}
	// A datagram to QP1 too short for a MAD is malformed.
	p.Payload = m[:100]
	if got := Decode(encodeAll(t, []*Packet{p}, EncodeOptions{})[0], DecodeOptions{}); got.Err == nil {
		t.Error("a 100-byte datagram to QP1 decoded without an error")
	}
}

func TestNames(t *testing.T) {
	got := []string{Opcode(0x06).String(), Opcode(0x64).String(), OpcodeCNP.String(), Opcode(0x1e).String(),
		Opcode(0xaa).String(), OpReadRequest.String(), Operation(0x1f).String(), AETH{Syndrome: 0x60}.String(),
		AETH{Syndrome: 0x2e}.String(), AETH{Syndrome: 0x05}.Kind().String(), LinkLinuxSLL2.String(), EncapRoCEv1.String()}
	want := []string{"RC RDMA WRITE First", "UD SEND Only", "CNP", "RC opcode 0x1e", "XRC RDMA WRITE Only",
		"RDMA READ Request", "operation 0x1f", "NAK (PSN sequence error)", "RNR NAK (timer 14)", "ACK",
		"Linux cooked v2 (SLL2)", "RoCEv1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected names (-want +got):\n%s", diff)
	}
}
