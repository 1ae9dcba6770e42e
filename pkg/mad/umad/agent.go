package umad

import (
	"fmt"
	"math/bits"

	"github.com/ibtool/ibtool/pkg/mad"
)

// Agent describes one MAD agent for Open to register.
type Agent struct {
	// Class and ClassVersion are the management class and class version
	// the agent sends and receives. SMI classes go on QP0, all others on
	// QP1.
	Class        mad.Class
	ClassVersion uint8
	// Methods lists the request methods whose unsolicited MADs the agent
	// receives, which makes it a server (an ibping server asks for Get, a
	// trap listener for Trap). None makes a client, which receives only the
	// responses to its own requests. A method with the R bit is refused.
	Methods []mad.Method
	// RMPPVersion, when not zero, has the kernel run RMPP for the agent
	// (1 is the only version): it reassembles multi-segment messages, which
	// Recv returns whole, and segments long ones that Send gives it.
	RMPPVersion uint8
	// OUI is the IEEE OUI of a vendor range 2 class. Zero means the OpenIB
	// OUI 00-14-05, which libibumad's umad_register passes for every class.
	OUI [3]byte
}

// agentKey identifies an agent by what Send picks it by: bytes 1 and 2 of
// the MAD.
type agentKey struct {
	class   mad.Class
	version uint8
}

func (a *Agent) key() agentKey { return agentKey{a.Class, a.ClassVersion} }

// String names the agent in errors: "SMI-DR version 1".
func (a *Agent) String() string {
	return fmt.Sprintf("%v version %d", a.Class, a.ClassVersion)
}

// openIBOUI is IB_OPENIB_OUI, the OUI libibumad registers with.
var openIBOUI = [3]byte{0x00, 0x14, 0x05}

// validate reports what the kernel would refuse, or cannot be encoded.
func (a *Agent) validate() error {
	for _, m := range a.Methods {
		if m.IsResponse() {
			return fmt.Errorf("agent for %v: method %v is a response; a server agent receives requests", a, m)
		}
	}
	return nil
}

// Sizes and offsets of struct ib_user_mad_reg_req. The method mask is an
// array of unsigned long aligned to 4 bytes, 128 bits in all; the struct
// ends with one byte of padding.
const (
	regReqLen       = 28
	regOffID        = 0  // __u32 id, set by the kernel
	regOffMask      = 4  // packed_ulong method_mask[128 / bits per long]
	regOffQPN       = 20 // __u8 qpn
	regOffClass     = 21 // __u8 mgmt_class
	regOffVersion   = 22 // __u8 mgmt_class_version
	regOffOUI       = 23 // __u8 oui[3]
	regOffRMPP      = 26 // __u8 rmpp_version
	methodMaskBytes = 16
)

// regReq returns the IB_USER_MAD_REGISTER_AGENT argument for a.
func (a *Agent) regReq() *[regReqLen]byte {
	var b [regReqLen]byte
	putMethodMask(b[regOffMask:regOffMask+methodMaskBytes], a.Methods)
	b[regOffQPN] = byte(a.Class.QP())
	b[regOffClass] = byte(a.Class)
	b[regOffVersion] = a.ClassVersion
	oui := a.OUI
	if oui == ([3]byte{}) {
		oui = openIBOUI
	}
	copy(b[regOffOUI:], oui[:])
	b[regOffRMPP] = a.RMPPVersion
	return &b
}

// putMethodMask sets the bit of each method in mask, a kernel bitmap of
// unsigned longs in host byte order: bit n is bit n%W of long n/W, W the
// bits in a long (Go's uint on Linux). Methods past 127 are ignored.
func putMethodMask(mask []byte, methods []mad.Method) {
	const wordBytes = bits.UintSize / 8
	for _, m := range methods {
		n := int(m)
		if n >= len(mask)*8 {
			continue
		}
		off := n / bits.UintSize * wordBytes
		bit := uint(n % bits.UintSize)
		if wordBytes == 8 {
			hostOrder.PutUint64(mask[off:], hostOrder.Uint64(mask[off:])|1<<bit)
		} else {
			hostOrder.PutUint32(mask[off:], hostOrder.Uint32(mask[off:])|1<<bit)
		}
	}
}
