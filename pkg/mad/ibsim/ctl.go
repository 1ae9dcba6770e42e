package ibsim

import (
	"encoding/binary"
	"fmt"
)

// The control message, struct sim_ctl in ibsim.h, in host byte order:
//
//	0  magic (0xdeadbeef)   4  clientid   8  type   12  len   16  data[64]
const (
	ctlMagic   = 0xdeadbeef
	ctlDataLen = 64
	ctlMsgLen  = 16 + ctlDataLen
)

// ctlType is enum SIM_CTL_TYPES.
type ctlType uint32

const (
	ctlError       ctlType = iota // the reply type when ibsim refuses
	ctlConnect                    // data: struct sim_client_info
	ctlDisconnect                 // no data
	ctlGetPort                    // data: struct sim_port (unused here)
	ctlGetVendor                  // data: struct sim_vendor
	ctlGetGID                     // data: GID prefix, node GUID in host order (unused here)
	ctlGetGUID                    // data: node GUID in host order (unused here)
	ctlGetNodeInfo                // data: the 64-byte NodeInfo attribute
	ctlGetPortInfo                // data[0]: port number (0: the attach port); reply: PortInfo
	ctlSetIsSM                    // data: int issm
	ctlGetPKeys                   // data: 32 P_Keys, network order
)

var ctlTypeNames = [...]string{
	ctlError:       "ERROR",
	ctlConnect:     "CONNECT",
	ctlDisconnect:  "DISCONNECT",
	ctlGetPort:     "GET_PORT",
	ctlGetVendor:   "GET_VENDOR",
	ctlGetGID:      "GET_GID",
	ctlGetGUID:     "GET_GUID",
	ctlGetNodeInfo: "GET_NODEINFO",
	ctlGetPortInfo: "GET_PORTINFO",
	ctlSetIsSM:     "SET_ISSM",
	ctlGetPKeys:    "GET_PKEYS",
}

// String gives the SIM_CTL_ name without its prefix, or "SIM_CTL(n)".
func (t ctlType) String() string {
	if int(t) < len(ctlTypeNames) {
		return ctlTypeNames[t]
	}
	return fmt.Sprintf("SIM_CTL(%d)", uint32(t))
}

// ctlMsg is one control request or reply.
type ctlMsg struct {
	ClientID uint32
	Type     ctlType
	Len      uint32
	Data     [ctlDataLen]byte
}

// marshal encodes m into b[:ctlMsgLen].
func (m *ctlMsg) marshal(b []byte) {
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], ctlMagic)
	ne.PutUint32(b[4:], m.ClientID)
	ne.PutUint32(b[8:], uint32(m.Type))
	ne.PutUint32(b[12:], m.Len)
	copy(b[16:ctlMsgLen], m.Data[:])
}

// unmarshal decodes one control datagram, which must be exactly ctlMsgLen
// bytes with the magic and a length that fits the data.
func (m *ctlMsg) unmarshal(b []byte) error {
	if len(b) != ctlMsgLen {
		return fmt.Errorf("control message of %d bytes, want %d", len(b), ctlMsgLen)
	}
	ne := binary.NativeEndian
	if magic := ne.Uint32(b[0:]); magic != ctlMagic {
		return fmt.Errorf("control message with magic %#x, want %#x", magic, uint32(ctlMagic))
	}
	m.ClientID = ne.Uint32(b[4:])
	m.Type = ctlType(ne.Uint32(b[8:]))
	m.Len = ne.Uint32(b[12:])
	if m.Len > ctlDataLen {
		return fmt.Errorf("control message with length %d, over %d", m.Len, ctlDataLen)
	}
	copy(m.Data[:], b[16:])
	return nil
}
