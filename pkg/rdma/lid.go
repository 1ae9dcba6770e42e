package rdma

import (
	"strconv"
)

// LID is a 16-bit local identifier assigned by the subnet manager.
type LID uint16

// PermissiveLID is the LID that addresses whatever port receives the packet.
const PermissiveLID LID = 0xffff

// String formats the LID in decimal, as infiniband-diags prints it.
func (l LID) String() string { return strconv.Itoa(int(l)) }

// ParseLID parses a LID in decimal or in hex after 0x. A leading zero is
// decimal, never octal: "010" is LID 10.
func ParseLID(s string) (LID, error) {
	var n uint64
	var err error
	if h, ok := cutHexPrefix(s); ok {
		if len(h) == 0 || !isHex(h) {
			return 0, &ParseError{Kind: "LID", Input: s, Reason: "want hex digits after 0x"}
		}
		n, err = strconv.ParseUint(h, 16, 64)
	} else {
		if len(s) == 0 || !isDecimal(s) {
			return 0, &ParseError{Kind: "LID", Input: s, Reason: "want a decimal number or 0x and hex digits"}
		}
		n, err = strconv.ParseUint(s, 10, 64)
	}
	if err != nil || n > 0xffff {
		return 0, &ParseError{Kind: "LID", Input: s, Reason: "out of range 0 to 65535"}
	}
	return LID(n), nil
}

func isDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
