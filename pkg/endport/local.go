package endport

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// LocalKind says how a Local names its end port.
type LocalKind uint8

// Ways to name a local end port.
const (
	ByName     LocalKind = iota // device name and port number; either may be left open
	ByGUID                      // port GUID
	ByGID                       // port GID
	ByNodeGUID                  // node GUID of the device and port number; the port may be left open
)

// String names the kind: "name", "port GUID", "port GID".
func (k LocalKind) String() string {
	switch k {
	case ByName:
		return "name"
	case ByGUID:
		return "port GUID"
	case ByGID:
		return "port GID"
	case ByNodeGUID:
		return "node GUID"
	}
	return "LocalKind(" + strconv.Itoa(int(k)) + ")"
}

// Local names the local end port a tool sends from, as given on the command
// line; Resolve finds it among the devices. The zero Local is the default:
// the first usable port of the first device that has one, as
// infiniband-diags picks it without -C and -P.
type Local struct {
	Kind LocalKind // which of the fields below name the port
	// CA is the device name ("mlx5_0"); "" means any device. ByName only.
	CA string
	// Port is the port number; 0 means the first usable port, as -P 0
	// does in infiniband-diags (a switch's only port, 0, is found that
	// way too). ByName and ByNodeGUID.
	Port uint8
	GUID rdma.GUID // ByGUID: the port GUID; ByNodeGUID: the device's node GUID
	GID  rdma.GID  // ByGID only
}

// maxCANameLen is the longest device name the kernel allows:
// IB_DEVICE_NAME_MAX (64) less the terminating NUL.
const maxCANameLen = 63

// FromFlags builds the Local named by infiniband-diags' -C and -P: ca may be
// "" (any device), a device name, or the device's node GUID as python-rdma's
// -C takes it (0x and hex digits, or the colon form 0002:c903:00a1:b2c3;
// a device name starts with a letter, so the two never meet), and port 0
// is the first usable port.
func FromFlags(ca string, port int) (Local, error) {
	if port < 0 || port > 255 {
		return Local{}, &rdma.ParseError{Kind: "port number", Input: strconv.Itoa(port), Reason: "want 0 (the first usable port) to 255"}
	}
	if _, hex := cutHexPrefix(ca); hex || strings.ContainsRune(ca, ':') {
		g, err := rdma.ParseGUID(ca)
		switch {
		case err != nil:
			return Local{}, &rdma.ParseError{Kind: "node GUID", Input: ca, Reason: "want 0x and 1 to 16 hex digits or 0002:c903:00a1:b2c3 (or a device name, which starts with a letter)"}
		case g == 0:
			return Local{}, &rdma.ParseError{Kind: "node GUID", Input: ca, Reason: "GUID 0 names no device"}
		}
		return Local{Kind: ByNodeGUID, GUID: g, Port: uint8(port)}, nil
	}
	if ca != "" {
		if reason := checkCAName(ca); reason != "" {
			return Local{}, &rdma.ParseError{Kind: "CA name", Input: ca, Reason: reason}
		}
	}
	return Local{Kind: ByName, CA: ca, Port: uint8(port)}, nil
}

// flagForms lists what -P takes, for error messages.
const flagForms = "want a port number (1, 0x1; 0 to 255), a device (mlx5_0), device/port (mlx5_0/1), port GUID (0x0002c90300a1b2c4, 0002:c903:00a1:b2c4) or port GID (fe80::2:c903:a1:b2c4)"

// FromFlagArgs builds the Local that -C and -P name as typed, taking
// python-rdma's forms besides infiniband-diags' (libibtool's get_end_port):
// ca is "", a device name or a node GUID (FromFlags); port is "", or a port
// number in decimal or 0x hex (a leading zero is decimal), or, without ca,
// any end-port spec ParseLocal reads: device, device/port, port GUID, port
// GID. A port number is tried first, so every -P that named a port number
// still does: "0x10" is port 16, and a port GUID small enough to be a port
// number wants its colon form. With ca, -P must be a port number:
// python-rdma then joins the two into "DEVICE/PORT", which fails for any
// other form.
func FromFlagArgs(ca, port string) (Local, error) {
	if port == "" {
		return FromFlags(ca, 0)
	}
	n, reason := parseNumber(port, 255)
	if reason == "" {
		return FromFlags(ca, int(n))
	}
	if isNumeric(port) {
		return Local{}, &rdma.ParseError{Kind: "port number", Input: port, Reason: reason}
	}
	if ca != "" {
		if _, err := ParseLocal(port); err == nil {
			return Local{}, &rdma.ParseError{Kind: "port number", Input: port,
				Reason: "-C names the device, so -P takes a port number; give an end port such as mlx5_0/1 or a port GUID with -P alone"}
		}
		return Local{}, &rdma.ParseError{Kind: "port number", Input: port, Reason: "want a decimal number or 0x and hex digits, 0 to 255"}
	}
	l, err := ParseLocal(port)
	if err != nil {
		return Local{}, &rdma.ParseError{Kind: "port", Input: port, Reason: flagForms}
	}
	return l, nil
}

// isNumeric reports whether s is written as a number, decimal or 0x hex,
// whatever its size: such a -P that is no port number is out of range
// rather than an end port of another form, unless it is a port GUID
// (0x and more digits than a port number takes).
func isNumeric(s string) bool {
	if h, ok := cutHexPrefix(s); ok {
		return h != "" && isHex(h) && len(h) <= 4
	}
	return s != "" && isDecimal(s)
}

// ParseLocal parses an end-port spec as --port takes it (python-rdma's
// ibtool -P takes the same forms, see rdma.get_end_port):
//
//	mlx5_0                 device, its first usable port
//	mlx5_0/1               device and port number (decimal, 0 to 255)
//	1                      port 1 of the first device where it is usable
//	0x0002c90300a1b2c4     port GUID: 0x and 1 to 16 hex digits
//	0002:c903:00a1:b2c4    port GUID, the sysfs form
//	fe80::2:c903:a1:b2c4   port GID
//	0x0002c90300a1b2c3/1   node GUID and port number: the device with that node
//	                       GUID, as python-rdma's -C takes it (/0: its first
//	                       usable port); the GUID in either form above
//
// A device name is 1 to 63 of A-Z a-z 0-9 _ . - and starts with a letter.
func ParseLocal(s string) (Local, error) { return parseLocal(s, true) }

// localForms lists the forms of an end-port spec, for error messages.
const localForms = "want a device (mlx5_0), device/port (mlx5_0/1), port GUID (0x0002c90300a1b2c4, 0002:c903:00a1:b2c4) or port GID (fe80::2:c903:a1:b2c4)"

// parseLocal parses a spec as ParseLocal does; bare port numbers only when
// barePort is set. The scope of a GID and a path spec's end_port name a
// device or a port, like python-rdma's get_end_port, which has no bare
// port number: "fe80::1%1" would read like an IPv6 zone index.
func parseLocal(s string, barePort bool) (Local, error) {
	var l Local
	var reason string
	_, hex := cutHexPrefix(s)
	switch {
	case s == "":
		reason = "empty; " + localForms
	case hasSpace(s):
		reason = "contains whitespace; " + localForms
	case isNodeGUIDPort(s):
		l, reason = parseNodeGUIDPort(s)
	case strings.ContainsRune(s, ':'):
		l, reason = parseLocalColon(s)
	case hex:
		l, reason = parseLocalHex(s)
	case isDecimal(s) && !barePort:
		reason = "a port number alone names no device; " + localForms
	case isDecimal(s):
		l, reason = parseBarePort(s)
	default:
		l, reason = parseCAPort(s)
	}
	if reason != "" {
		return Local{}, &rdma.ParseError{Kind: "end port", Input: s, Reason: reason}
	}
	return l, nil
}

// isNodeGUIDPort reports whether s has the form of a node GUID and a port
// number: a GUID-looking part (0x, or a colon) before a slash. A device
// name starts with a letter and a GID has no slash.
func isNodeGUIDPort(s string) bool {
	guid, _, ok := strings.Cut(s, "/")
	_, hex := cutHexPrefix(guid)
	return ok && (hex || strings.ContainsRune(guid, ':'))
}

// parseNodeGUIDPort parses a node GUID, a slash and a port number.
func parseNodeGUIDPort(s string) (Local, string) {
	guid, port, _ := strings.Cut(s, "/")
	g, err := rdma.ParseGUID(guid)
	switch {
	case err != nil:
		return Local{}, "want a node GUID (0x0002c90300a1b2c3 or 0002:c903:00a1:b2c3) before /"
	case g == 0:
		return Local{}, "GUID 0 names no device"
	case port == "" || !isDecimal(port):
		return Local{}, "want a decimal port number after /"
	}
	n, reason := parseNumber(port, 255)
	if reason != "" {
		return Local{}, "port number out of range 0 to 255"
	}
	return Local{Kind: ByNodeGUID, GUID: g, Port: uint8(n)}, ""
}

// parseLocalColon parses a colon-form port GUID or a port GID.
func parseLocalColon(s string) (Local, string) {
	if g, err := rdma.ParseGUID(s); err == nil {
		return localGUID(g)
	}
	g, err := rdma.ParseGID(s)
	switch {
	case err != nil:
		return Local{}, "not a port GUID (0002:c903:00a1:b2c4) nor a GID (fe80::2:c903:a1:b2c4)"
	case g.IsZero():
		return Local{}, "the zero GID names no port"
	}
	return Local{Kind: ByGID, GID: g}, ""
}

// parseLocalHex parses a port GUID written as 0x and hex digits.
func parseLocalHex(s string) (Local, string) {
	g, err := rdma.ParseGUID(s)
	if err != nil {
		return Local{}, "want 0x and 1 to 16 hex digits for a port GUID"
	}
	return localGUID(g)
}

func localGUID(g rdma.GUID) (Local, string) {
	if g == 0 {
		return Local{}, "GUID 0 names no port"
	}
	return Local{Kind: ByGUID, GUID: g}, ""
}

// parseBarePort parses a port number on no particular device.
func parseBarePort(s string) (Local, string) {
	n, reason := parseNumber(s, 255)
	switch {
	case reason != "":
		return Local{}, "port number out of range 1 to 255"
	case n == 0:
		return Local{}, "port 0 alone names no port; leave the end port out for the default"
	}
	return Local{Kind: ByName, Port: uint8(n)}, ""
}

// parseCAPort parses a device name and an optional /port.
func parseCAPort(s string) (Local, string) {
	name, port, hasPort := strings.Cut(s, "/")
	if reason := checkCAName(name); reason != "" {
		return Local{}, reason
	}
	if !hasPort {
		return Local{Kind: ByName, CA: name}, ""
	}
	if port == "" || !isDecimal(port) {
		return Local{}, "want a decimal port number after /"
	}
	n, reason := parseNumber(port, 255)
	if reason != "" {
		return Local{}, "port number out of range 0 to 255"
	}
	return Local{Kind: ByName, CA: name, Port: uint8(n)}, ""
}

// checkCAName returns why name is not a device name, or "". Kernel names
// (mlx5_0, ibp0s3, rocep1s0f0, hfi1_0, rxe0) start with a letter; asking
// that keeps names apart from port numbers, GUIDs and GIDs.
func checkCAName(name string) string {
	switch {
	case name == "":
		return "empty device name"
	case len(name) > maxCANameLen:
		return "device name longer than 63 characters"
	case !isLetter(name[0]):
		return "a device name starts with a letter"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case isLetter(c) || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-':
		case c < utf8.RuneSelf:
			return "device name has " + strconv.QuoteRune(rune(c)) + "; want A-Z a-z 0-9 _ . -"
		default:
			return "device name has byte " + fmt.Sprintf("0x%02x", c) + "; want A-Z a-z 0-9 _ . -"
		}
	}
	return ""
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// String formats l as ParseLocal reads it back: "mlx5_0/1", "mlx5_0",
// "1", a GUID as 0x and 16 hex digits, a GID in short IPv6 form, a node
// GUID with its port number always ("0x0002c90300a1b2c3/0": without one it
// would read as a port GUID). The default (the zero Local) is "".
func (l Local) String() string {
	switch l.Kind {
	case ByGUID:
		return l.GUID.String()
	case ByGID:
		return l.GID.String()
	case ByNodeGUID:
		return l.GUID.String() + "/" + strconv.Itoa(int(l.Port))
	}
	switch {
	case l.CA == "" && l.Port == 0:
		return ""
	case l.CA == "":
		return strconv.Itoa(int(l.Port))
	case l.Port == 0:
		return l.CA
	}
	return l.CA + "/" + strconv.Itoa(int(l.Port))
}

// MarshalText renders l in its String form.
func (l Local) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText parses any form ParseLocal accepts, and "" as the default.
func (l *Local) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*l = Local{}
		return nil
	}
	v, err := ParseLocal(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}
