package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// cmMADBytes is a CM MAD (class 0x07, version 2, Send) with attribute
// attr and the CM data set field by field at the byte offsets IBA 12.6
// gives (offsets from the start of the CM data, after the 24-byte MAD
// header), written here independently of CMMessage.AppendBinary.
func cmMADBytes(attr uint16, fields func(d []byte)) []byte {
	m := make([]byte, mad.Size)
	m[0], m[1], m[2], m[3] = 1, byte(mad.ClassCM), 2, byte(mad.MethodSend)
	binary.BigEndian.PutUint64(m[8:], 0x461ad8203)
	binary.BigEndian.PutUint16(m[16:], attr)
	fields(m[mad.HeaderLen:])
	return m
}

var (
	gidA = netip.MustParseAddr("::ffff:203.0.113.1")
	gidB = netip.MustParseAddr("::ffff:203.0.113.2")
)

// reqFields writes a REQ from rdma_cm for TCP port 20049 at
// 203.0.113.2 from 203.0.113.1 port 55716, RPC-over-RDMA private data
// after rdma_cm's header: the fields of the REQ in nfs-rxe-v41.pcap.
func reqFields(d []byte) {
	be := binary.BigEndian
	be.PutUint32(d[0:], 0x0382ad61)           // Local Communication ID
	be.PutUint64(d[8:], 0x0000000001064e51)   // ServiceID
	be.PutUint64(d[16:], 0xf86be2fffee7b4e4)  // Local CA GUID
	be.PutUint32(d[28:], 0)                   // Local Q_Key
	be.PutUint32(d[32:], 0x000011<<8|128)     // Local QPN, Responder Resources
	be.PutUint32(d[36:], 0<<8|0)              // Local EECN, Initiator Depth
	be.PutUint32(d[40:], 0<<8|20<<3|0<<1|0)   // Remote EECN, Remote CM Response Timeout, RC, no E2E flow control
	be.PutUint32(d[44:], 0xdf090d<<8|20<<3|6) // Starting PSN, Local CM Response Timeout, Retry Count
	be.PutUint16(d[48:], 0xffff)              // Partition Key
	d[50] = 3 << 4                            // Path MTU 1024, no RDC, RNR Retry Count 0
	d[51] = 15 << 4                           // Max CM Retries, no SRQ
	be.PutUint16(d[52:], 0xffff)              // Primary Local Port LID
	be.PutUint16(d[54:], 0xffff)              // Primary Remote Port LID
	copy(d[56:72], gidA.AsSlice())            // Primary Local Port GID
	copy(d[72:88], gidB.AsSlice())            // Primary Remote Port GID
	be.PutUint32(d[88:], 0xaa92d<<12|0)       // Primary Flow Label, Packet Rate
	d[92], d[93] = 0, 64                      // Primary Traffic Class, Hop Limit
	d[94], d[95] = 0, 19<<3                   // Primary SL, Local ACK Timeout
	pd := d[140:232]                          // Private Data
	pd[0], pd[1] = 0, 4<<4                    // rdma_cm version, IP version
	be.PutUint16(pd[2:], 55716)               // source port
	copy(pd[16:20], []byte{203, 0, 113, 1})   // source address (IPv4 in the last 4 of 16)
	copy(pd[32:36], []byte{203, 0, 113, 2})   // destination address
	copy(pd[36:], []byte{0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3})
}

func TestDecodeCM(t *testing.T) {
	be := binary.BigEndian
	reqData := make([]byte, 232)
	reqFields(reqData)
	reqPD := HexBytes(reqData[140:])
	tests := []struct {
		name   string
		attr   uint16
		fields func(d []byte)
		want   *CMMessage
	}{
		{"REQ from rdma_cm", 0x10, reqFields, &CMMessage{Type: CMREQ,
			REQ: &CMReq{LocalCommID: 0x0382ad61, ServiceID: 0x1064e51, LocalCAGUID: rdma.GUID(0xf86be2fffee7b4e4),
				LocalQPN: 0x11, ResponderResources: 128, RemoteCMResponseTimeout: 20, StartingPSN: 0xdf090d,
				LocalCMResponseTimeout: 20, RetryCount: 6, PKey: 0xffff, PathMTU: 3, MaxCMRetries: 15,
				Primary: CMPath{LocalLID: 0xffff, RemoteLID: 0xffff, LocalGID: gidA, RemoteGID: gidB, FlowLabel: 0xaa92d,
					HopLimit: 64, LocalACKTimeout: 19}},
			PrivateData: reqPD, PrivateDataUsed: 44,
			RDMACM: &RDMACMHeader{IPVersion: 4, Protocol: 6, SrcPort: 55716, DstPort: 20049,
				Src: netip.MustParseAddr("203.0.113.1"), Dst: netip.MustParseAddr("203.0.113.2")},
			ULP: &ConnectPrivate{Protocol: "RPC-over-RDMA", Version: 1, RemoteInvalidate: true, InlineSend: 4096, InlineRecv: 4096}}},
		{"REQ with an alternate path, UC, SRQ, no IP service", 0x10, func(d []byte) {
			be.PutUint32(d[0:], 7)
			be.PutUint64(d[8:], 0x0002c90300001234) // not rdma_cm's IP form
			be.PutUint32(d[28:], 0x11111111)
			be.PutUint32(d[32:], 0xabcdef<<8|4)
			be.PutUint32(d[36:], 0x123456<<8|2)
			be.PutUint32(d[40:], 0x654321<<8|31<<3|1<<1|1)
			be.PutUint32(d[44:], 0x000001<<8|1<<3|7)
			d[50], d[51] = 5<<4|8|7, 1<<4|8|1
			be.PutUint16(d[96:], 5) // Alternate Local Port LID
			be.PutUint16(d[98:], 6)
			be.PutUint32(d[132:], 0x12345<<12|0x3f)
			d[136], d[137], d[138], d[139] = 7, 2, 0xf<<4|8, 31<<3
			d[140] = 0xee // private data: not rdma_cm's header
		}, &CMMessage{Type: CMREQ,
			REQ: &CMReq{LocalCommID: 7, ServiceID: 0x0002c90300001234, LocalQKey: 0x11111111, LocalQPN: 0xabcdef,
				ResponderResources: 4, LocalEECN: 0x123456, InitiatorDepth: 2, RemoteEECN: 0x654321,
				RemoteCMResponseTimeout: 31, TransportType: 1, EndToEndFlowControl: true, StartingPSN: 1,
				LocalCMResponseTimeout: 1, RetryCount: 7, PathMTU: 5, RDCExists: true, RNRRetryCount: 7,
				MaxCMRetries: 1, SRQ: true, ExtendedTransportType: 1,
				Primary: CMPath{LocalGID: netip.IPv6Unspecified(), RemoteGID: netip.IPv6Unspecified()},
				Alternate: &CMPath{LocalLID: 5, RemoteLID: 6, LocalGID: netip.IPv6Unspecified(), RemoteGID: netip.IPv6Unspecified(),
					FlowLabel: 0x12345, PacketRate: 0x3f, TrafficClass: 7, HopLimit: 2, SL: 15, SubnetLocal: true, LocalACKTimeout: 31}},
			PrivateData: append(HexBytes{0xee}, make([]byte, 91)...), PrivateDataUsed: 1}},
		{"REP", 0x13, func(d []byte) {
			be.PutUint32(d[0:], 0x0282ad61)
			be.PutUint32(d[4:], 0x0382ad61)
			be.PutUint32(d[8:], 0x22)
			be.PutUint32(d[12:], 0x000012<<8)
			be.PutUint32(d[16:], 0x000005<<8)
			be.PutUint32(d[20:], 0x190c2c<<8)
			d[24], d[25], d[26], d[27] = 0, 128, 17<<3|2<<1|1, 7<<5|0x10
			be.PutUint64(d[28:], 0x88269dfffee2631a)
			copy(d[36:], []byte{0xf6, 0xab, 0x0e, 0x18, 1, 0, 3, 3})
		}, &CMMessage{Type: CMREP,
			REP: &CMRep{CMCommIDs: CMCommIDs{0x0282ad61, 0x0382ad61}, LocalQKey: 0x22, LocalQPN: 0x12, LocalEECN: 5,
				StartingPSN: 0x190c2c, InitiatorDepth: 128, TargetACKDelay: 17, FailoverAccepted: 2,
				EndToEndFlowControl: true, RNRRetryCount: 7, SRQ: true, LocalCAGUID: rdma.GUID(0x88269dfffee2631a)},
			PrivateData:     append(HexBytes{0xf6, 0xab, 0x0e, 0x18, 1, 0, 3, 3}, make([]byte, 188)...),
			PrivateDataUsed: 8,
			ULP:             &ConnectPrivate{Protocol: "RPC-over-RDMA", Version: 1, InlineSend: 4096, InlineRecv: 4096}}},
		{"RTU", 0x14, func(d []byte) { be.PutUint32(d[0:], 1); be.PutUint32(d[4:], 2) },
			&CMMessage{Type: CMRTU, RTU: &CMCommIDs{1, 2}, PrivateData: make(HexBytes, 224)}},
		{"REJ of a REQ, consumer reject, ARI", 0x12, func(d []byte) {
			be.PutUint32(d[0:], 0)
			be.PutUint32(d[4:], 9)
			d[8], d[9] = 0<<6, 3<<1
			be.PutUint16(d[10:], 28)
			copy(d[12:], []byte{1, 2, 3})
			d[84] = 0x42 // private data
		}, &CMMessage{Type: CMREJ, REJ: &CMRej{CMCommIDs: CMCommIDs{0, 9}, RejectInfoLength: 3, Reason: 28, ARI: HexBytes{1, 2, 3}},
			PrivateData: append(HexBytes{0x42}, make([]byte, 147)...), PrivateDataUsed: 1}},
		{"MRA of a REP", 0x11, func(d []byte) {
			be.PutUint32(d[0:], 3)
			be.PutUint32(d[4:], 4)
			d[8], d[9] = 1<<6, 21<<3
		}, &CMMessage{Type: CMMRA, MRA: &CMMra{CMCommIDs: CMCommIDs{3, 4}, MessageMRAed: 1, ServiceTimeout: 21},
			PrivateData: make(HexBytes, 222)}},
		{"DREQ", 0x15, func(d []byte) {
			be.PutUint32(d[0:], 5)
			be.PutUint32(d[4:], 6)
			be.PutUint32(d[8:], 0x000011<<8)
		}, &CMMessage{Type: CMDREQ, DREQ: &CMDreq{CMCommIDs: CMCommIDs{5, 6}, RemoteQPN: 0x11}, PrivateData: make(HexBytes, 220)}},
		{"DREP", 0x16, func(d []byte) { be.PutUint32(d[0:], 6); be.PutUint32(d[4:], 5) },
			&CMMessage{Type: CMDREP, DREP: &CMCommIDs{6, 5}, PrivateData: make(HexBytes, 224)}},
		{"SIDR_REQ", 0x17, func(d []byte) {
			be.PutUint32(d[0:], 0x77)
			be.PutUint16(d[4:], 0x8001)
			be.PutUint64(d[8:], 0x0000000001110000|4791)
		}, &CMMessage{Type: CMSIDRREQ, SIDRREQ: &CMSIDRReq{RequestID: 0x77, PKey: 0x8001, ServiceID: 0x11112b7},
			PrivateData: make(HexBytes, 216)}},
		{"SIDR_REP", 0x18, func(d []byte) {
			be.PutUint32(d[0:], 0x77)
			d[4], d[5] = 0, 2
			be.PutUint32(d[8:], 0x000099<<8)
			be.PutUint64(d[12:], 0x11112b7)
			be.PutUint32(d[20:], 0x80010000)
			d[24], d[25] = 0xaa, 0xbb
		}, &CMMessage{Type: CMSIDRREP, SIDRREP: &CMSIDRRep{RequestID: 0x77, AdditionalInfoLength: 2, QPN: 0x99,
			ServiceID: 0x11112b7, QKey: 0x80010000, ClassPortInfo: HexBytes{0xaa, 0xbb}}, PrivateData: make(HexBytes, 136)}},
		{"LAP", 0x19, func(d []byte) {
			be.PutUint32(d[0:], 1)
			be.PutUint32(d[4:], 2)
			be.PutUint32(d[12:], 0x000011<<8|9<<3)
			be.PutUint16(d[20:], 3)
			be.PutUint16(d[22:], 4)
			copy(d[24:40], gidA.AsSlice())
			copy(d[40:56], gidB.AsSlice())
			be.PutUint32(d[56:], 0x54321<<12|0x20)
			d[60], d[61], d[62], d[63] = 5, 0x3f, 2<<4|8, 14<<3
		}, &CMMessage{Type: CMLAP, LAP: &CMLap{CMCommIDs: CMCommIDs{1, 2}, RemoteQPN: 0x11, RemoteCMResponseTimeout: 9,
			Alternate: CMPath{LocalLID: 3, RemoteLID: 4, LocalGID: gidA, RemoteGID: gidB, FlowLabel: 0x54321, TrafficClass: 0x20,
				HopLimit: 5, PacketRate: 0x3f, SL: 2, SubnetLocal: true, LocalACKTimeout: 14}},
			PrivateData: make(HexBytes, 168)}},
		{"APR", 0x1a, func(d []byte) {
			be.PutUint32(d[0:], 2)
			be.PutUint32(d[4:], 1)
			d[8], d[9] = 1, 4
			d[12] = 0x5a
		}, &CMMessage{Type: CMAPR, APR: &CMApr{CMCommIDs: CMCommIDs{2, 1}, AdditionalInfoLength: 1, Status: 4,
			AdditionalInfo: HexBytes{0x5a}}, PrivateData: make(HexBytes, 148)}},
		{"ClassPortInfo", 0x01, func([]byte) {}, &CMMessage{Type: CMClassPortInfo}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := cmMADBytes(tt.attr, tt.fields)
			got, err := DecodeCM(b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("unexpected message (-want +got):\n%s", diff)
			}
			if enc := got.AppendBinary(nil); !bytes.Equal(enc, b[mad.HeaderLen:]) {
				t.Errorf("encoded back:\n%x\nwant\n%x", enc, b[mad.HeaderLen:])
			}
		})
	}
}

func TestDecodeCMErrors(t *testing.T) {
	sa := cmMADBytes(0x10, reqFields)
	sa[1] = byte(mad.ClassSA)
	if _, err := DecodeCM(sa); !errors.Is(err, errNotCM) {
		t.Errorf("an SA MAD: %v, want %v", err, errNotCM)
	}
	if _, err := DecodeCM(cmMADBytes(0x10, reqFields)[:200]); !errors.Is(err, errShort) {
		t.Errorf("200 bytes: %v, want %v", err, errShort)
	}
}

// TestRDMACMHeader: rdma_cm's header is read only for its IP service IDs
// and header versions; IPv6 addresses take all 16 bytes.
func TestRDMACMHeader(t *testing.T) {
	v6 := func(pd []byte) {
		pd[1] = 6 << 4
		binary.BigEndian.PutUint16(pd[2:], 40000)
		copy(pd[4:20], netip.MustParseAddr("2001:db8::1").AsSlice())
		copy(pd[20:36], netip.MustParseAddr("2001:db8::2").AsSlice())
	}
	tests := []struct {
		name string
		sid  uint64
		pd   func([]byte)
		want *RDMACMHeader
	}{
		{"IPv6, UDP port space", 0x0000000001114000, v6, &RDMACMHeader{IPVersion: 6, Protocol: 0x11, SrcPort: 40000, DstPort: 0x4000,
			Src: netip.MustParseAddr("2001:db8::1"), Dst: netip.MustParseAddr("2001:db8::2")}},
		{"not an IP service ID", 0x0002c90300001234, v6, nil},
		{"a header version rdma_cm does not send", 0x0000000001064e51, func(pd []byte) { v6(pd); pd[0] = 1 }, nil},
		{"IP version 5", 0x0000000001064e51, func(pd []byte) { pd[1] = 5 << 4 }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pd := make([]byte, 92)
			tt.pd(pd)
			got, _ := decodeRDMACMHeader(tt.sid, pd)
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("unexpected header (-want +got):\n%s", diff)
			}
			if got != nil {
				if enc := got.AppendBinary(nil); !bytes.Equal(enc, pd[:rdmaCMHeaderLen]) {
					t.Errorf("encoded back %x, want %x", enc, pd[:rdmaCMHeaderLen])
				}
			}
		})
	}
}

func TestCMNames(t *testing.T) {
	got := []string{CMREQ.String(), CMSIDRREP.String(), CMType(0x99).String(), CMRejectReason(28).String(),
		CMRejectReason(8).String(), CMRejectReason(34).String(), CMRejectReason(1000).String(),
		(&CMRej{MessageRejected: 2}).RejectedName(), (&CMMra{MessageMRAed: 2}).MRAedName(),
		CMTransportType(1).String(), CMTransportType(3).String(),
		ServiceName(0x0000000001064e51), ServiceName(0x00000000013f0001), ServiceName(0x0000000001840007),
		ServiceName(0x1000000000000001)}
	want := []string{"REQ", "SIDR_REP", "attr 0x0099", "consumer reject", "invalid service ID", "reason 34",
		"reason 1000", "no message", "LAP", "UC", "reserved",
		"rdma_cm TCP port 20049", "rdma_cm IB port 1", "rdma_cm port space 0x84 port 7", "service 0x1000000000000001"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected names (-want +got):\n%s", diff)
	}
}

// TestMPAStartV2: a revision 2 start frame's private data starts with
// the IRD and ORD (RFC 6581) and its flags, then what rdma_cm's user
// sent; the Enhanced flag round-trips. The bytes are siw's MPA Request in
// nfs-siw-v41.pcap.
func TestMPAStartV2(t *testing.T) {
	b := append([]byte("MPA ID Req Frame"), 0x10, 2, 0, 12, 0x80, 0x80, 0xc0, 0,
		0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3)
	got, n, err := DecodeMPAStart(b)
	if err != nil || n != len(b) {
		t.Fatalf("%d bytes, %v", n, err)
	}
	want := &MPAStartFrame{Request: true, Enhanced: true, Rev: 2, PrivateData: b[20:],
		V2:  &MPAV2Control{IRD: 128, PeerToPeer: true, WriteRTR: true, ReadRTR: true},
		ULP: &ConnectPrivate{Protocol: "RPC-over-RDMA", Version: 1, RemoteInvalidate: true, InlineSend: 4096, InlineRecv: 4096}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected frame (-want +got):\n%s", diff)
	}
	if enc := got.AppendBinary(nil); !bytes.Equal(enc, b) {
		t.Errorf("encoded back %x, want %x", enc, b)
	}
	// Revision 1: the private data is the user's from its first byte.
	b[16], b[17] = 0x40, 1
	got, _, _ = DecodeMPAStart(b)
	if got.V2 != nil || got.ULP != nil || !got.CRC {
		t.Errorf("revision 1: v2 %+v ulp %+v crc %v", got.V2, got.ULP, got.CRC)
	}
}

// FuzzDecodeCM feeds arbitrary MADs to DecodeCM: it must not panic, and a
// message that decodes must encode into bytes that decode the same.
func FuzzDecodeCM(f *testing.F) {
	for _, attr := range []uint16{0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x01} {
		f.Add(cmMADBytes(attr, reqFields))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeCM(b)
		if err != nil {
			return
		}
		again, err := DecodeCM(append(append([]byte(nil), b[:mad.HeaderLen]...), m.AppendBinary(nil)...))
		if err != nil {
			t.Fatalf("the encoded message does not decode: %v", err)
		}
		if diff := cmp.Diff(m, again, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
			t.Errorf("decode, encode, decode differs (-first +second):\n%s", diff)
		}
	})
}

// FuzzDecodeMPAStart feeds arbitrary bytes to DecodeMPAStart: it must not
// panic, and a frame that decodes must encode back into the same bytes.
func FuzzDecodeMPAStart(f *testing.F) {
	f.Add(append([]byte("MPA ID Req Frame"), 0x10, 2, 0, 12, 0x80, 0x80, 0xc0, 0, 0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3))
	f.Add(append([]byte("MPA ID Rep Frame"), 0xe0, 1, 0, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, err := DecodeMPAStart(b)
		if err != nil {
			return
		}
		enc := fr.AppendBinary(nil)
		// Reserved flag bits are not kept.
		want := append([]byte(nil), b[:n]...)
		want[16] &= mpaFlagMarkers | mpaFlagCRC | mpaFlagReject | mpaFlagEnhanced
		if !bytes.Equal(enc, want) {
			t.Errorf("encoded back %x, want %x", enc, want)
		}
	})
}
