package ibsim

import (
	"encoding/binary"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// NumPKeys is how many P_Key table entries GET_PKEYS returns (64 bytes).
const NumPKeys = ctlDataLen / 2

// AttachInfo is what ibsim reports about the port a client is attached to,
// read once by Dial, as the shim reads it.
type AttachInfo struct {
	// Requested is the node asked for (Config.Host), "" for the default.
	Requested string
	// NodeID is the ibsim node ID of the node attached to.
	NodeID string
	// ClientID is ibsim's slot number for this client, 0-9.
	ClientID int
	// Vendor is the GET_VENDOR reply.
	Vendor Vendor
	// NodeInfo is the node's NodeInfo attribute as ibsim stores it.
	NodeInfo NodeInfo
	// PortInfo is the attach port's PortInfo attribute (GET_PORTINFO for
	// port 0, which ibsim takes as "the attach port").
	PortInfo PortInfo
	// PKeys is the attach port's P_Key table, zero-filled past the node's
	// partition capacity.
	PKeys [NumPKeys]uint16
}

// MatchedByDescription reports whether ibsim attached to a node whose ID
// differs from the one requested, which happens when the request matched a
// node description instead of a node ID.
func (a *AttachInfo) MatchedByDescription() bool {
	return a.Requested != "" && a.Requested != a.NodeID
}

// DeviceName is the name the attach point has as an RDMA device, as the shim
// names it.
const DeviceName = "ibsim0"

// NodeInfo is the 64-byte NodeInfo attribute (IBA 14.2.5.3) with the fields
// the device view needs decoded. pkg/mad's attribute types decode Raw fully.
type NodeInfo struct {
	Raw             [64]byte
	NodeType        mad.NodeType
	NumPorts        uint8
	SystemImageGUID rdma.GUID
	NodeGUID        rdma.GUID
	PortGUID        rdma.GUID
	LocalPort       uint8
}

// UnmarshalBinary decodes the first 64 bytes of b.
func (n *NodeInfo) UnmarshalBinary(b []byte) error {
	if len(b) < len(n.Raw) {
		return shortAttr("NodeInfo", len(b))
	}
	copy(n.Raw[:], b)
	be := binary.BigEndian
	n.NodeType = mad.NodeType(b[2])
	n.NumPorts = b[3]
	n.SystemImageGUID = rdma.GUID(be.Uint64(b[4:]))
	n.NodeGUID = rdma.GUID(be.Uint64(b[12:]))
	n.PortGUID = rdma.GUID(be.Uint64(b[20:]))
	n.LocalPort = b[36]
	return nil
}

// Port states in PortInfo.
const (
	PortStateDown   = 1
	PortStateInit   = 2
	PortStateArmed  = 3
	PortStateActive = 4
)

// CapMaskExtSpeeds is the PortInfo capability bit (14) that says
// LinkSpeedExtActive is valid.
const CapMaskExtSpeeds = 1 << 14

// PortInfo is the 64-byte PortInfo attribute (IBA 14.2.5.6) with the fields
// the device view needs decoded. pkg/mad's attribute types decode Raw fully.
type PortInfo struct {
	Raw                [64]byte
	GIDPrefix          uint64
	LID                rdma.LID
	SMLID              rdma.LID
	CapMask            uint32
	LocalPort          uint8
	LinkWidthActive    uint8 // 1: 1X, 2: 4X, 4: 8X, 8: 12X
	State              uint8 // PortStateDown ... PortStateActive
	PhysState          uint8 // 5: LinkUp
	LMC                uint8
	LinkSpeedActive    uint8 // 1: SDR, 2: DDR, 4: QDR
	SMSL               uint8
	LinkSpeedExtActive uint8 // 1: FDR, 2: EDR, 4: HDR; valid with CapMaskExtSpeeds
}

// UnmarshalBinary decodes the first 64 bytes of b.
func (p *PortInfo) UnmarshalBinary(b []byte) error {
	if len(b) < len(p.Raw) {
		return shortAttr("PortInfo", len(b))
	}
	copy(p.Raw[:], b)
	be := binary.BigEndian
	p.GIDPrefix = be.Uint64(b[8:])
	p.LID = rdma.LID(be.Uint16(b[16:]))
	p.SMLID = rdma.LID(be.Uint16(b[18:]))
	p.CapMask = be.Uint32(b[20:])
	p.LocalPort = b[28]
	p.LinkWidthActive = b[31]
	p.State = b[32] & 0x0f
	p.PhysState = b[33] >> 4
	p.LMC = b[34] & 0x07
	p.LinkSpeedActive = b[35] >> 4
	p.SMSL = b[36] & 0x0f
	p.LinkSpeedExtActive = b[62] >> 4
	return nil
}

// decodePKeys reads the network-order P_Key table of a GET_PKEYS reply.
func decodePKeys(b []byte) (t [NumPKeys]uint16) {
	for i := range t {
		t[i] = binary.BigEndian.Uint16(b[2*i:])
	}
	return t
}

func shortAttr(what string, n int) error {
	return &mad.ShortError{What: what, Need: 64, Have: n}
}
