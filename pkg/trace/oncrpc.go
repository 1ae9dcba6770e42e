package trace

import "fmt"

// ONCRPC is the header of an ONC RPC message (RFC 5531). A reply carries
// the program, version and procedure of the call it answers, when the
// capture holds the call.
type ONCRPC struct {
	XID  uint32 `json:"xid"`
	Call bool   `json:"call"`
	Prog uint32 `json:"prog"`
	Vers uint32 `json:"vers"`
	Proc uint32 `json:"proc"`
	// Flavor is a call's credential flavor (0 AUTH_NONE, 1 AUTH_SYS,
	// 6 RPCSEC_GSS).
	Flavor uint32 `json:"flavor,omitempty"`
	// Status is a reply's outcome: "success" or what went wrong
	// (PROG_UNAVAIL, RPC_MISMATCH, AUTH_ERROR ...).
	Status string `json:"status,omitempty"`
	// Body is the offset of the procedure's arguments or results.
	Body int `json:"body"`
}

// The RPC programs trace names.
const (
	ProgNFS = 100003
)

var acceptStats = []string{"success", "PROG_UNAVAIL", "PROG_MISMATCH", "PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR"}

// DecodeONCRPC decodes the header of an RPC call or reply.
func DecodeONCRPC(b []byte) (*ONCRPC, error) {
	x := &xdrReader{b: b}
	h := &ONCRPC{XID: x.u32()}
	switch typ := x.u32(); {
	case x.err != nil:
	case typ == 0:
		h.Call = true
		if v := x.u32(); x.err == nil && v != 2 {
			x.fail("RPC version %d, not 2", v)
		}
		h.Prog, h.Vers, h.Proc = x.u32(), x.u32(), x.u32()
		h.Flavor = x.u32()
		x.opaque(400)
		x.u32()
		x.opaque(400)
	case typ == 1:
		switch stat := x.u32(); stat {
		case 0:
			x.u32()
			x.opaque(400)
			as := x.u32()
			if int(as) < len(acceptStats) {
				h.Status = acceptStats[as]
			} else {
				h.Status = fmt.Sprintf("accept_stat %d", as)
			}
			if as == 2 {
				x.u32()
				x.u32()
			}
		case 1:
			switch rs := x.u32(); rs {
			case 0:
				h.Status = "RPC_MISMATCH"
			case 1:
				h.Status = fmt.Sprintf("AUTH_ERROR %d", x.u32())
			default:
				h.Status = fmt.Sprintf("reject_stat %d", rs)
			}
		default:
			x.fail("reply_stat %d", stat)
		}
	default:
		x.fail("message type %d", typ)
	}
	if x.err != nil {
		return nil, fmt.Errorf("RPC header: %w", x.err)
	}
	h.Body = x.off
	return h, nil
}

// String says what the message is: `call NFS3 READ`, `reply success`.
func (h *ONCRPC) String() string {
	dir := "call"
	if !h.Call {
		dir = "reply"
	}
	s := fmt.Sprintf("RPC %s xid %#08x prog %d vers %d proc %d", dir, h.XID, h.Prog, h.Vers, h.Proc)
	if !h.Call {
		s += " " + h.Status
	}
	return s
}
