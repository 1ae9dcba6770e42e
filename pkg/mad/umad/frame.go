package umad

import (
	"encoding/binary"
	"fmt"
	"math"
	"syscall"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// ABIVersion is the user MAD ABI (class/infiniband_mad/abi_version) this
// package speaks, IB_USER_MAD_ABI_VERSION.
const ABIVersion = 5

// HeaderLen is the size of struct ib_user_mad_hdr, the header in front of
// every MAD read from or written to the device in P_Key-index mode.
const HeaderLen = 64

// Offsets of the fields of struct ib_user_mad_hdr. The first five and
// pkey_index are in host byte order, the address fields in network order.
const (
	offAgentID      = 0  // __u32 id
	offStatus       = 4  // __u32 status
	offTimeoutMS    = 8  // __u32 timeout_ms
	offRetries      = 12 // __u32 retries
	offLength       = 16 // __u32 length: header plus MAD
	offQPN          = 20 // __be32 qpn
	offQKey         = 24 // __be32 qkey
	offLID          = 28 // __be16 lid
	offSL           = 30 // __u8 sl
	offPathBits     = 31 // __u8 path_bits
	offGRHPresent   = 32 // __u8 grh_present
	offGIDIndex     = 33 // __u8 gid_index
	offHopLimit     = 34 // __u8 hop_limit
	offTrafficClass = 35 // __u8 traffic_class
	offGID          = 36 // __u8 gid[16]
	offFlowLabel    = 52 // __be32 flow_label
	offPKeyIndex    = 56 // __u16 pkey_index, then __u8 reserved[6]
)

// minSendLen is the shortest MAD the kernel takes on write: the common MAD
// header and the RMPP header (IB_MGMT_RMPP_HDR).
const minSendLen = 36

// flowLabelMask keeps the 20 bits of a flow label.
const flowLabelMask = 0xfffff

// hostOrder is the byte order of the host-order header fields.
var hostOrder = binary.NativeEndian

// frameLen returns the length of the frame carrying a MAD of madLen bytes.
func frameLen(madLen int) int { return HeaderLen + madLen }

// encodeFrame writes the frame for p, sent by agent, into b, which holds
// exactly frameLen(len(p.MAD)) bytes. The kernel does no retries; the
// transactor retries itself.
func encodeFrame(b []byte, agent uint32, p *mad.Packet) {
	clear(b[:HeaderLen])
	hostOrder.PutUint32(b[offAgentID:], agent)
	hostOrder.PutUint32(b[offTimeoutMS:], timeoutMS(p.Timeout))
	hostOrder.PutUint32(b[offLength:], uint32(len(b)))
	encodeAddr(b, &p.Addr)
	copy(b[HeaderLen:], p.MAD)
}

// encodeAddr writes a into the address fields of header b.
func encodeAddr(b []byte, a *mad.Address) {
	binary.BigEndian.PutUint32(b[offQPN:], a.QPN)
	binary.BigEndian.PutUint32(b[offQKey:], a.QKey)
	binary.BigEndian.PutUint16(b[offLID:], uint16(a.LID))
	b[offSL] = a.SL
	b[offPathBits] = a.PathBits
	hostOrder.PutUint16(b[offPKeyIndex:], a.PKeyIndex)
	if !a.HasGRH {
		return
	}
	b[offGRHPresent] = 1
	b[offGIDIndex] = a.GRH.GIDIndex
	b[offHopLimit] = a.GRH.HopLimit
	b[offTrafficClass] = a.GRH.TrafficClass
	copy(b[offGID:offGID+16], a.GRH.GID[:])
	binary.BigEndian.PutUint32(b[offFlowLabel:], a.GRH.FlowLabel&flowLabelMask)
}

// timeoutMS converts a response timeout to whole milliseconds, rounding up
// so that a positive timeout never becomes 0 (which asks for no response).
func timeoutMS(d time.Duration) uint32 {
	if d <= 0 {
		return 0
	}
	ms := d / time.Millisecond
	if d%time.Millisecond != 0 {
		ms++
	}
	return uint32(min(ms, math.MaxUint32))
}

// FrameError reports a frame read from the device that cannot be decoded.
type FrameError struct {
	Len    int    // bytes read
	Reason string // what is wrong
}

func (e *FrameError) Error() string {
	return fmt.Sprintf("bad user MAD frame of %d bytes: %s", e.Len, e.Reason)
}

// decodeFrame stores the frame b in p: the MAD after the header (reusing
// p.MAD's storage), the source address and the status. The frame's length
// field is not trusted: the MAD is whatever follows the header.
func decodeFrame(b []byte, p *mad.Packet) error {
	if len(b) < HeaderLen {
		return &FrameError{Len: len(b), Reason: fmt.Sprintf("shorter than the %d-byte header", HeaderLen)}
	}
	p.MAD = append(p.MAD[:0], b[HeaderLen:]...)
	p.Addr = decodeAddr(b)
	p.Status = syscall.Errno(hostOrder.Uint32(b[offStatus:]))
	p.Timeout = 0
	return nil
}

// DecodeFrame returns the packet a frame read from the device holds: its
// MAD, source address and status (decode_mad --umad shows them).
func DecodeFrame(b []byte) (mad.Packet, error) {
	var p mad.Packet
	err := decodeFrame(b, &p)
	return p, err
}

// decodeAddr reads the address fields of header b.
func decodeAddr(b []byte) mad.Address {
	a := mad.Address{
		QPN:       binary.BigEndian.Uint32(b[offQPN:]),
		QKey:      binary.BigEndian.Uint32(b[offQKey:]),
		LID:       rdma.LID(binary.BigEndian.Uint16(b[offLID:])),
		SL:        b[offSL],
		PathBits:  b[offPathBits],
		PKeyIndex: hostOrder.Uint16(b[offPKeyIndex:]),
		HasGRH:    b[offGRHPresent] != 0,
	}
	if a.HasGRH {
		a.GRH = mad.GRH{
			GIDIndex:     b[offGIDIndex],
			HopLimit:     b[offHopLimit],
			TrafficClass: b[offTrafficClass],
			FlowLabel:    binary.BigEndian.Uint32(b[offFlowLabel:]) & flowLabelMask,
		}
		copy(a.GRH.GID[:], b[offGID:offGID+16])
	}
	return a
}
