package ibsim

import (
	"encoding/binary"
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// The data frame, struct sim_request in ibsim.h, as umad2sim.c fills it:
//
//	 0  dlid   4  slid    host-order uint32 holding the network-order LID
//	 8  dqp   12  sqp     network order
//	16  status            network order; ibsim sets 110 (ETIMEDOUT) on a drop
//	20  (padding)
//	24  length            big-endian uint64, bytes of MAD in use
//	32  mad[256]
//
// ibsim accepts only frames of exactly requestLen bytes.
const (
	requestLen       = 32 + mad.Size
	requestMADOffset = 32
)

// request is one decoded data frame.
type request struct {
	DLID, SLID rdma.LID
	DQP, SQP   uint32
	Status     uint32
	Length     uint64
	MAD        [mad.Size]byte
}

// marshal encodes r into b[:requestLen], zeroing the padding.
func (r *request) marshal(b []byte) {
	putLID(b[0:], r.DLID)
	putLID(b[4:], r.SLID)
	be := binary.BigEndian
	be.PutUint32(b[8:], r.DQP)
	be.PutUint32(b[12:], r.SQP)
	be.PutUint32(b[16:], r.Status)
	clear(b[20:24])
	be.PutUint64(b[24:], r.Length)
	copy(b[requestMADOffset:requestLen], r.MAD[:])
}

// unmarshal decodes one data datagram, which must be exactly requestLen
// bytes. The padding is ignored (the shim leaves stack garbage there and
// ibsim echoes it).
func (r *request) unmarshal(b []byte) error {
	if len(b) != requestLen {
		return fmt.Errorf("data frame of %d bytes, want %d", len(b), requestLen)
	}
	r.DLID = getLID(b[0:])
	r.SLID = getLID(b[4:])
	be := binary.BigEndian
	r.DQP = be.Uint32(b[8:])
	r.SQP = be.Uint32(b[12:])
	r.Status = be.Uint32(b[16:])
	r.Length = be.Uint64(b[24:])
	copy(r.MAD[:], b[requestMADOffset:])
	return nil
}

// putLID stores a LID the way the shim does (req.dlid = umad->addr.lid, a
// __be16 assigned to a uint32): a host-order word whose value is htons(lid).
// ibsim reads it back with ntohs(r->dlid), which takes the word's low half.
func putLID(b []byte, l rdma.LID) {
	var n [2]byte
	binary.BigEndian.PutUint16(n[:], uint16(l))
	binary.NativeEndian.PutUint32(b, uint32(binary.NativeEndian.Uint16(n[:])))
}

// getLID reverses putLID.
func getLID(b []byte) rdma.LID {
	var n [2]byte
	binary.NativeEndian.PutUint16(n[:], uint16(binary.NativeEndian.Uint32(b)))
	return rdma.LID(binary.BigEndian.Uint16(n[:]))
}
