package verbs

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ipv4GRH is a receive buffer's first 40 bytes for a RoCE v2 datagram
// over IPv4 from src to dst: 20 bytes of nothing, then the IPv4 header
// (with its checksum when sum is set).
func ipv4GRH(src, dst string, tos, ttl uint8, sum bool) []byte {
	b := make([]byte, GRHSize)
	ip := b[20:]
	ip[0], ip[1], ip[8], ip[9] = 0x45, tos, ttl, 17
	binary.BigEndian.PutUint16(ip[2:], 100)
	s, d := netip.MustParseAddr(src).As4(), netip.MustParseAddr(dst).As4()
	copy(ip[12:], s[:])
	copy(ip[16:], d[:])
	if sum {
		var x uint32
		for i := 0; i < 20; i += 2 {
			x += uint32(binary.BigEndian.Uint16(ip[i:]))
		}
		for x>>16 != 0 {
			x = x&0xffff + x>>16
		}
		binary.BigEndian.PutUint16(ip[10:], ^uint16(x))
	}
	return b
}

// ipv6GRH is a GRH from src to dst with next header nh.
func ipv6GRH(src, dst string, tclass uint8, flow uint32, hop, nh uint8) []byte {
	b := make([]byte, GRHSize)
	binary.BigEndian.PutUint32(b[0:], 6<<28|uint32(tclass)<<20|flow)
	b[6], b[7] = nh, hop
	s, d := netip.MustParseAddr(src).As16(), netip.MustParseAddr(dst).As16()
	copy(b[8:], s[:])
	copy(b[24:], d[:])
	return b
}

func TestReplyAHAttr(t *testing.T) {
	gid := func(i int, a string, typ int) GID {
		return GID{Index: i, Raw: netip.MustParseAddr(a).As16(), Type: typ}
	}
	port := Port{GIDs: []GID{
		gid(0, "fe80::1", GIDTypeIBRoCEv1), gid(1, "fe80::1", GIDTypeRoCEv2),
		gid(2, "::ffff:198.51.100.2", GIDTypeIBRoCEv1), gid(3, "::ffff:198.51.100.2", GIDTypeRoCEv2),
	}}
	v4 := ipv4GRH("198.51.100.1", "198.51.100.2", 0x48, 64, true)
	// A version-6 first nibble in front of a whole IPv4 header: the
	// checksum says IPv4.
	v4six := ipv4GRH("198.51.100.1", "198.51.100.2", 0, 64, true)
	v4six[0] = 0x60
	tests := []struct {
		name string
		wc   WorkCompletion
		grh  []byte
		want AHAttr
		err  error
	}{
		{"RoCE v2 over IPv4", WorkCompletion{GRH: true}, v4,
			AHAttr{Port: 1, GRH: &GRH{DGID: netip.MustParseAddr("::ffff:198.51.100.1").As16(), SGIDIndex: 3, HopLimit: 64, TrafficClass: 0x48}}, nil},
		{"IPv4 header behind version 6", WorkCompletion{GRH: true}, v4six,
			AHAttr{Port: 1, GRH: &GRH{DGID: netip.MustParseAddr("::ffff:198.51.100.1").As16(), SGIDIndex: 3, HopLimit: 64, FlowLabel: 0}}, nil},
		{"RoCE v2 over IPv6", WorkCompletion{GRH: true}, ipv6GRH("fe80::2", "fe80::1", 0x10, 0x12345, 1, 17),
			AHAttr{Port: 1, GRH: &GRH{DGID: netip.MustParseAddr("fe80::2").As16(), SGIDIndex: 1, HopLimit: 1, TrafficClass: 0x10, FlowLabel: 0x12345}}, nil},
		{"RoCE v1", WorkCompletion{GRH: true}, ipv6GRH("fe80::2", "fe80::1", 0, 0, 1, 0x1b),
			AHAttr{Port: 1, GRH: &GRH{DGID: netip.MustParseAddr("fe80::2").As16(), SGIDIndex: 0, HopLimit: 1}}, nil},
		{"InfiniBand without a GRH", WorkCompletion{SLID: 0x12, SL: 3}, make([]byte, GRHSize), AHAttr{Port: 1, DLID: 0x12, SL: 3}, nil},
		{"to a GID the port has not", WorkCompletion{GRH: true}, ipv4GRH("198.51.100.1", "198.51.100.9", 0, 64, true), AHAttr{}, ErrNoReplyGID},
		{"to IPv4 multicast", WorkCompletion{GRH: true}, ipv4GRH("198.51.100.1", "239.1.2.3", 0, 64, true), AHAttr{}, ErrNoReplyGID},
		{"to a multicast GID", WorkCompletion{GRH: true}, ipv6GRH("fe80::2", "ff0e::1", 0, 0, 1, 0x1b), AHAttr{}, ErrNoReplyGID},
	}
	for _, tt := range tests {
		got, err := ReplyAHAttr(port, 1, tt.wc, tt.grh)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("%s: error %v, want %v", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: unexpected address vector (-want +got):\n%s", tt.name, diff)
		}
	}
	bad := ipv6GRH("fe80::2", "fe80::1", 0, 0, 1, 6)
	if _, err := ReplyAHAttr(port, 1, WorkCompletion{GRH: true}, bad); err == nil {
		t.Errorf("next header TCP: no error")
	}
}

// TestCreateQPFlags: the QP's creation settings reach libibverbs.
func TestCreateQPFlags(t *testing.T) {
	r := newRig(t)
	if _, err := r.pd.CreateQP(QPConfig{Type: QPTypeUD, SendCQ: r.cq, RecvCQ: r.cq, SignalAll: true, BlockSelfMulticastLoopback: true,
		Caps: QPCaps{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}}); err != nil {
		t.Fatal(err)
	}
	got := r.f.created[len(r.f.created)-1]
	if diff := cmp.Diff([]bool{true, true, false}, []bool{got.signalAll, got.blockSelfMcastLB, r.f.created[0].blockSelfMcastLB}); diff != "" {
		t.Errorf("unexpected creation flags: signal all, block self multicast loopback; the rig's QP's (-want +got):\n%s", diff)
	}
}

// TestMulticastAttach: a UD QP is attached to a group and detached from
// it by GID and LID; a refused attach names the verb.
func TestMulticastAttach(t *testing.T) {
	r := newRig(t)
	gid := netip.MustParseAddr("::ffff:239.1.2.3").As16()
	if err := r.qp.AttachMulticast(gid, 0xc001); err != nil {
		t.Fatal(err)
	}
	if err := r.qp.DetachMulticast(gid, 0xc001); err != nil {
		t.Fatal(err)
	}
	want := []fakeMcast{{gid, 0xc001, true}, {gid, 0xc001, false}}
	if diff := cmp.Diff(want, r.f.mcasts); diff != "" {
		t.Errorf("unexpected attaches (-want +got):\n%s", diff)
	}
	r.f.fail["attachMcast"] = syscall.EINVAL
	var ve *VerbError
	if err := r.qp.AttachMulticast(gid, 0); !errors.As(err, &ve) || ve.Verb != "ibv_attach_mcast" || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("refused attach: %v, want ibv_attach_mcast's EINVAL", err)
	}
}
