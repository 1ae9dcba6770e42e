package rdmacm

import "fmt"

// Option levels and names of SET_OPTION (rdma_user_cm.h's
// RDMA_OPTION_ID and RDMA_OPTION_ID_*).
const (
	optionLevelID      = 0
	optionIDTOS        = 0
	optionIDReuseAddr  = 1
	optionIDAFOnly     = 2
	optionIDAckTimeout = 3
)

// setOption sets an option of the ID (rdma_set_option): the kernel reads
// val from the buffer the command points to.
func (id *ID) setOption(op string, name uint32, val []byte) error {
	in := make([]byte, setOptionSize)
	le.PutUint32(in[8:], id.handle)
	le.PutUint32(in[12:], optionLevelID)
	le.PutUint32(in[16:], name)
	le.PutUint32(in[20:], uint32(len(val)))
	return id.command(op, id.addr.Remote, cmdSetOption, in, 0, val)
}

// SetTOS sets the type of service of the ID's connection (an IP TOS
// byte, RFC 2474): on RoCE the traffic class of its packets and its
// path's SL, as librdmacm's RDMA_OPTION_ID_TOS. Set it before the route
// is resolved.
func (id *ID) SetTOS(tos uint8) error {
	return id.setOption("set the type of service", optionIDTOS, []byte{tos})
}

// SetReuseAddr lets the ID bind to an address and port another ID is
// bound to (RDMA_OPTION_ID_REUSEADDR). Set it before Bind.
func (id *ID) SetReuseAddr(on bool) error {
	return id.setOption("set address reuse", optionIDReuseAddr, le.AppendUint32(nil, uint32(boolByte(on))))
}

// SetAFOnly makes an ID bound to the IPv6 wildcard address take IPv6
// connections only (RDMA_OPTION_ID_AFONLY). Set it before Bind.
func (id *ID) SetAFOnly(on bool) error {
	return id.setOption("set IPv6 only", optionIDAFOnly, le.AppendUint32(nil, uint32(boolByte(on))))
}

// SetAckTimeout sets the QP's local ACK timeout the CM gives the
// connection (RDMA_OPTION_ID_ACK_TIMEOUT): the IBA's exponent, 4.096 µs
// times 2 to the power exp (at most 31), used in place of the one the
// path gives.
func (id *ID) SetAckTimeout(exp uint8) error {
	if exp > 31 {
		return &Error{Op: "set the ACK timeout", Addr: id.addr.Remote, Err: fmt.Errorf("exponent %d, at most 31", exp)}
	}
	return id.setOption("set the ACK timeout", optionIDAckTimeout, []byte{exp})
}
