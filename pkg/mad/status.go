package mad

import "fmt"

// Status is the 16-bit MAD status field (IBA 13.4.7). Bits 0-4 are common to
// all classes, bits 8-14 are class specific. In a directed-route SMP bit 15
// is the D (direction) bit, which DRSMPHeader reads and writes; see
// DirectionBit.
type Status uint16

// Status values and masks.
const (
	StatusOK                    Status = 0x0000
	StatusBusy                  Status = 0x0001 // temporarily busy, retry
	StatusRedirect              Status = 0x0002 // redirection required
	StatusBadVersion            Status = 0x0004 // bad base or class version
	StatusMethodUnsupported     Status = 0x0008
	StatusMethodAttrUnsupported Status = 0x000c
	StatusInvalidField          Status = 0x001c // invalid value in an attribute or modifier
	StatusCodeMask              Status = 0x001c // the invalid-field code, bits 2-4
	StatusClassMask             Status = 0x7f00 // class-specific bits 8-14
	DirectionBit                Status = 0x8000 // the D bit of a directed-route SMP
)

// statusCodeName names an invalid-field code (a switch, as className).
func statusCodeName(code Status) (string, bool) {
	switch code {
	case StatusBadVersion:
		return "bad version", true
	case StatusMethodUnsupported:
		return "method unsupported", true
	case StatusMethodAttrUnsupported:
		return "method/attribute combination unsupported", true
	case StatusInvalidField:
		return "invalid attribute or modifier value", true
	}
	return "", false
}

// String describes the status bits: "ok", or the common conditions joined
// with "; ", followed by the class-specific bits in hex. The D bit is not a
// status and is left out.
func (s Status) String() string { return s.Describe(0) }

// Describe is String for a response of class c: the class-specific bits of
// an SA response are named ("ERR_NO_RECORDS, no records match the
// request"), other classes' given in hex.
func (s Status) Describe(c Class) string {
	s &^= DirectionBit
	if s == StatusOK {
		return "ok"
	}
	var out string
	add := func(t string) {
		if out != "" {
			out += "; "
		}
		out += t
	}
	if s&StatusBusy != 0 {
		add("busy")
	}
	if s&StatusRedirect != 0 {
		add("redirect required")
	}
	if code := s & StatusCodeMask; code != 0 {
		if name, ok := statusCodeName(code); ok {
			add(name)
		} else {
			add(fmt.Sprintf("reserved code %d", code>>2))
		}
	}
	if cs := s & StatusClassMask; cs != 0 {
		add(describeClass(c, cs))
	}
	if r := s & 0x00e0; r != 0 {
		add(fmt.Sprintf("reserved bits %#04x", uint16(r)))
	}
	return out
}

// SAStatusName returns the spec's name of an SA status code (bits 8-14
// of the status): "ERR_NO_RECORDS".
func SAStatusName(code uint8) string {
	if int(code) < len(saStatusNames) && saStatusNames[code] != "" {
		return saStatusNames[code]
	}
	return fmt.Sprintf("SA status %d", code)
}

// describeClass names the class-specific status bits of class c: the SA's
// codes by name and meaning, other classes' in hex.
func describeClass(c Class, cs Status) string {
	if c == ClassSA {
		code := uint8(cs >> 8)
		if int(code) < len(saStatusText) && saStatusText[code] != "" {
			return SAStatusName(code) + ", " + saStatusText[code]
		}
		return SAStatusName(code)
	}
	return fmt.Sprintf("class-specific %#04x", uint16(cs))
}

// SA status codes: the class-specific bits 8-14 of an SA response's status
// (IBA 15.2.1.1, table 197).
var saStatusNames = []string{
	1: "ERR_NO_RESOURCES",
	2: "ERR_REQ_INVALID",
	3: "ERR_NO_RECORDS",
	4: "ERR_TOO_MANY_RECORDS",
	5: "ERR_REQ_INVALID_GID",
	6: "ERR_REQ_INSUFFICIENT_COMPONENTS",
	7: "ERR_REQ_DENIED",
	8: "ERR_STATUS_PRIO_SUGGESTED",
}

var saStatusText = []string{
	1: "the SA has no resources to answer",
	2: "the request is invalid",
	3: "no records match the request",
	4: "more than one record matches a Get",
	5: "the request names a GID the SA does not know",
	6: "the component mask selects too little",
	7: "the request is denied",
	8: "the answer carries a suggested priority",
}
