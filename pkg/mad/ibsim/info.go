package ibsim

import (
	"bytes"
	"encoding/binary"
)

// clientInfo is struct sim_client_info, the CONNECT payload, in host order:
//
//	0  id (connection id in the request, client number in the reply)
//	4  qp   8  issm   12  nodeid[32] (NUL-terminated)
type clientInfo struct {
	ID     uint32
	QP     uint32
	IsSM   bool
	NodeID string
}

const clientInfoLen = 12 + 32

func (c *clientInfo) marshal(b []byte) {
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], c.ID)
	ne.PutUint32(b[4:], c.QP)
	var issm uint32
	if c.IsSM {
		issm = 1
	}
	ne.PutUint32(b[8:], issm)
	id := b[12:clientInfoLen]
	clear(id)
	copy(id[:MaxNodeIDLen], c.NodeID)
}

func (c *clientInfo) unmarshal(b []byte) {
	ne := binary.NativeEndian
	c.ID = ne.Uint32(b[0:])
	c.QP = ne.Uint32(b[4:])
	c.IsSM = ne.Uint32(b[8:]) != 0
	c.NodeID = cString(b[12:clientInfoLen])
}

// cString returns the bytes of b up to its first NUL.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// Vendor is struct sim_vendor, what GET_VENDOR reports: NodeInfo's vendor
// ID, device ID and revision, and a firmware version ibsim fixes at 1.
type Vendor struct {
	VendorID     uint32
	VendorPartID uint32
	HWVersion    uint32
	FWVersion    uint64
}

// vendorLen is sizeof(struct sim_vendor) on 64-bit Linux: three uint32s,
// four bytes of padding, the uint64 at offset 16.
const vendorLen = 24

func (v *Vendor) unmarshal(b []byte) {
	ne := binary.NativeEndian
	v.VendorID = ne.Uint32(b[0:])
	v.VendorPartID = ne.Uint32(b[4:])
	v.HWVersion = ne.Uint32(b[8:])
	v.FWVersion = ne.Uint64(b[16:])
}
