package endport

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// PathSpec is a full path given as python-rdma writes one: the repr of an
// rdma.path.IBPath or IBDRPath, such as
//
//	IBPath(DLID=12, SL=2, pkey=0x7fff)
//	IBDRPath(end_port='mlx5_0/1', DLID=6, drPath=0:12:)
//
// Each field is nil (or, for DRPath, empty) when the spec leaves it out,
// and then takes python-rdma's default: for IBPath DLID 0, SLID 0, SL 0,
// pkey 0xffff, no GRH; for IBDRPath DLID, SLID, drSLID and drDLID 0xffff
// (permissive), drPath 0:, dqpn and sqpn 0, qkey 0. The field comments give
// the python-rdma key.
//
// An IBDRPath with a DLID other than 0xffff is LID-routed to DLID first
// and directed from there (infiniband-diags' smpquery -c "6 0,12"); drSLID
// is then the sending port's LID, which the sender fills in when the spec
// leaves it out. A drDLID other than 0xffff LID-routes the rest of the way
// after the directed part (IBA 14.2.2).
type PathSpec struct {
	// DR is set for IBDRPath (a directed-route SMP path), clear for IBPath
	// (a LID or GID routed path).
	DR bool
	// EndPort is the local end port to send from (end_port); nil when not
	// given or None.
	EndPort *Local

	DLID           *rdma.LID // DLID: destination LID
	SLID           *rdma.LID // SLID: source LID
	SL             *uint8    // SL: service level, 0 to 15
	PKey           *uint16   // pkey: partition key
	PKeyIndex      *uint16   // pkey_index: index into the local P_Key table
	QKey           *uint32   // qkey: destination Q_Key
	DQPN           *uint32   // dqpn: destination QP, 24 bits
	SQPN           *uint32   // sqpn: source QP, 24 bits
	Retries        *uint8    // retries: resends after a timeout
	RespTime       *uint8    // resp_time: response time value, 0 to 31 (4.096 µs × 2^n)
	PacketLifeTime *uint8    // packet_life_time: 0 to 63 (4.096 µs × 2^n)
	HasGRH         *bool     // has_grh: send with a GRH (IBPath only)
	SGID           *rdma.GID // SGID: source GID (IBPath only)
	DGID           *rdma.GID // DGID: destination GID (IBPath only)
	HopLimit       *uint8    // hop_limit: GRH hop limit (IBPath only)
	TrafficClass   *uint8    // traffic_class: GRH traffic class (IBPath only)
	FlowLabel      *uint32   // flow_label: GRH flow label, 20 bits (IBPath only)
	DRPath         DRPath    // drPath: the directed route (IBDRPath only)
	DRSLID         *rdma.LID // drSLID: DrSLID of the SMP (IBDRPath only)
	DRDLID         *rdma.LID // drDLID: DrDLID of the SMP (IBDRPath only)
}

// pyWhitespace is what Python 2's str.strip removes, as python-rdma does
// around each key and value.
const pyWhitespace = " \t\n\r\v\f"

// class is the python-rdma class name of p.
func (p *PathSpec) class() string {
	if p.DR {
		return "IBDRPath"
	}
	return "IBPath"
}

// ParsePathSpec parses a path spec in python-rdma's repr format, the
// grammar of rdma.path.from_spec_string:
//
//	spec  = class "(" item *("," item) ")"
//	class = "IBPath" / "IBDRPath"
//	item  = *SP key *SP "=" *SP value *SP   ; SP: ASCII whitespace
//
// Keys are those of PathSpec's fields; IBDRPath has no GRH keys and
// IBPath no dr keys. Values:
//
//   - numbers in decimal or 0x hex, within the field's range (python-rdma
//     takes any Python integer literal; here a leading zero is decimal,
//     never octal, and a sign is an error);
//   - end_port: an end port as ParseLocal reads it (device, device/port,
//     port GUID or GID; no bare port number), optionally in matching
//     quotes; None means none;
//   - SGID, DGID: a GID, bare or as GID('...') the way repr writes it;
//   - has_grh: 0, 1, False or True (python-rdma's own parser only takes
//     integers, although its repr writes True);
//   - drPath: port numbers separated by colons, an optional trailing colon
//     (repr writes 0:1:3:); as a DR path otherwise, starting with 0, 0 to
//     255 each, at most 64 entries. python-rdma needs at least one colon
//     and so does this parser.
//
// Unlike python-rdma a key may appear once, an IBPath must have a DLID or
// a DGID (without either it addresses nothing), and keys that set up queue
// pairs or SA path queries rather than MADs (MTU, rate, sqpsn, ...) are
// refused.
func ParsePathSpec(s string) (*PathSpec, error) {
	p, inner, reason := parseSpecClass(s)
	if reason == "" {
		reason = p.parseItems(inner)
	}
	if reason == "" && !p.DR && p.DLID == nil && p.DGID == nil {
		reason = "an IBPath needs DLID or DGID to address a port"
	}
	if reason != "" {
		return nil, &rdma.ParseError{Kind: "path spec", Input: s, Reason: reason}
	}
	return p, nil
}

const specForm = "want IBPath(key=value, ...) or IBDRPath(key=value, ...), such as IBPath(DLID=12, SL=1)"

// parseSpecClass splits s into its class, as a new PathSpec, and the text
// between the parentheses.
func parseSpecClass(s string) (p *PathSpec, inner, reason string) {
	if s != strings.TrimSpace(s) {
		return nil, "", "surrounding whitespace; " + specForm
	}
	open := strings.IndexByte(s, '(')
	if open < 0 || s[len(s)-1] != ')' {
		return nil, "", specForm
	}
	p = &PathSpec{}
	switch class := s[:open]; class {
	case "IBPath":
	case "IBDRPath":
		p.DR = true
	case "Path", "LazyIBPath":
		return nil, "", "python-rdma's " + class + " is not supported; want IBPath or IBDRPath"
	default:
		return nil, "", fmt.Sprintf("unknown path class %q; want IBPath or IBDRPath", class)
	}
	return p, s[open+1 : len(s)-1], ""
}

// parseItems parses the key=value items of inner into p.
func (p *PathSpec) parseItems(inner string) string {
	if strings.Trim(inner, pyWhitespace) == "" {
		return "no key=value items; " + specForm
	}
	seen := make(map[string]bool)
	for _, item := range strings.Split(inner, ",") {
		key, val, _ := strings.Cut(item, "=")
		key, val = strings.Trim(key, pyWhitespace), strings.Trim(val, pyWhitespace)
		switch {
		case key == "":
			return "empty key or item; " + specForm
		case val == "":
			return "key " + keyName(key) + " has no value"
		case seen[key]:
			return "key " + keyName(key) + " given twice"
		}
		seen[key] = true
		k, reason := lookupKey(key, p.DR)
		if reason == "" {
			reason = k.parse(p, val)
		}
		if reason != "" {
			return keyName(key) + ": " + reason
		}
	}
	return ""
}

// String formats p as python-rdma's repr does, which ParsePathSpec and
// python-rdma read back: the class, then end_port, then the keys given in
// ASCII order, separated by ", "; end_port=None when nothing else is
// given. LIDs are decimal, pkey and qkey hex,
// GIDs bare, drPath as 0:1:3:, end_port unquoted.
func (p *PathSpec) String() string {
	items := make([]string, 0, 4)
	if p.EndPort != nil {
		items = append(items, "end_port="+p.EndPort.String())
	}
	for _, k := range specKeys() {
		if v, ok := k.format(p); ok {
			items = append(items, k.name+"="+v)
		}
	}
	if len(items) == 0 {
		// IBDRPath() does not parse (python-rdma wants an item), and the
		// default IBDRPath, the local port, has none of its own.
		items = append(items, "end_port=None")
	}
	return p.class() + "(" + strings.Join(items, ", ") + ")"
}

// MarshalText renders p in its String form.
func (p *PathSpec) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// keyName returns key as error messages show it: as is when it looks like
// a key, quoted otherwise.
func keyName(key string) string {
	for i := 0; i < len(key); i++ {
		if c := key[i]; !isLetter(c) && !('0' <= c && c <= '9') && c != '_' {
			return strconv.Quote(key)
		}
	}
	return key
}
