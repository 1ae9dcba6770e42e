package endport

import (
	"strings"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// Target is the address of the port a tool queries, as given on the
// command line. Kind says which of the other fields holds it.
type Target struct {
	Kind Kind      // never Any
	LID  rdma.LID  // LID: a unicast LID, 1 to 0xbfff
	GUID rdma.GUID // GUID: the port GUID, never 0
	GID  rdma.GID  // GID and ScopedGID: the port GID, never all zeros
	// Scope is the local end port a ScopedGID is reached from.
	Scope Local
	DR    DRPath    // DirectRoute: the path, DRPath{0} for the local port
	Spec  *PathSpec // FullPath: the python-rdma path spec
}

// Unicast LIDs, as infiniband-diags checks a target (IB_LID_VALID) and
// python-rdma's conv_lid does.
const (
	minUnicastLID rdma.LID = 1
	maxUnicastLID rdma.LID = 0xbfff
)

// ParseTarget parses a target address; the format alone decides its kind
// (see the package documentation for the grammar). want is Any, or the
// kind a legacy flag asserts (-L LID, -G GUID, -D DirectRoute): a target of
// another kind is a *MismatchError. With LID, a path spec with a DLID also
// passes, and with DirectRoute an IBDRPath spec, as in python-rdma's ibtool.
// Malformed input is a *rdma.ParseError that names the input and the forms
// accepted.
func ParseTarget(s string, want Kind) (Target, error) {
	t, err := parseTarget(s, want)
	if err != nil {
		return Target{}, err
	}
	if !accepts(want, t) {
		return Target{}, &MismatchError{Want: want, Got: t.Kind, Input: s}
	}
	return t, nil
}

func parseTarget(s string, want Kind) (Target, error) {
	switch {
	case s == "":
		return Target{}, unrecognized(s, want, "empty")
	case strings.ContainsRune(s, '('):
		spec, err := ParsePathSpec(s)
		if err != nil {
			return Target{}, err
		}
		return Target{Kind: FullPath, Spec: spec}, nil
	case hasSpace(s):
		return Target{}, unrecognized(s, want, "contains whitespace")
	case strings.ContainsRune(s, '%'):
		return parseScopedGID(s)
	case strings.ContainsRune(s, ','):
		p, err := ParseDRPath(s)
		if err != nil {
			return Target{}, err
		}
		return Target{Kind: DirectRoute, DR: p}, nil
	case strings.ContainsRune(s, ':'):
		return parseColonForm(s)
	}
	if h, ok := cutHexPrefix(s); ok {
		return parseHexForm(s, h)
	}
	if isDecimal(s) {
		return parseDecimalForm(s)
	}
	if s[0] == '-' && isDecimal(s[1:]) {
		return Target{}, unrecognized(s, want, "negative")
	}
	return Target{}, unrecognized(s, want, "")
}

// accepts reports whether t satisfies the kind a legacy flag asserts.
func accepts(want Kind, t Target) bool {
	switch {
	case want == Any || want == t.Kind:
		return true
	case t.Kind != FullPath:
		return false
	case want == LID:
		return !t.Spec.DR && t.Spec.DLID != nil && *t.Spec.DLID != 0
	case want == DirectRoute:
		return t.Spec.DR
	}
	return false
}

// forms names the accepted forms of a kind, for error messages.
func forms(k Kind) string {
	switch k {
	case LID:
		return "a LID (12 or 0x1a, 1 to 49151)"
	case GUID:
		return "a port GUID (0x0002c90300a1b2c4 with more than 4 hex digits, or 0002:c903:00a1:b2c4)"
	case GID:
		return "a GID (fe80::2:c903:a1:b2c4)"
	case ScopedGID:
		return "a scoped GID (fe80::2:c903:a1:b2c4%mlx5_0/1)"
	case DirectRoute:
		return "a DR path (0,1,3; 0 is the local port)"
	case FullPath:
		return "a path spec (IBPath(DLID=12, SL=1))"
	}
	return ""
}

func unrecognized(s string, want Kind, what string) error {
	reason := "want " + forms(want)
	if want == Any {
		reason = "want " + forms(LID) + ", " + forms(GUID) + ", " + forms(GID) + ", " +
			forms(ScopedGID) + ", " + forms(DirectRoute) + " or " + forms(FullPath)
	}
	if what != "" {
		reason = what + "; " + reason
	}
	kind := "target"
	if want != Any {
		kind = want.String()
	}
	return &rdma.ParseError{Kind: kind, Input: s, Reason: reason}
}

func parseScopedGID(s string) (Target, error) {
	fail := func(reason string) (Target, error) {
		return Target{}, &rdma.ParseError{Kind: "scoped GID", Input: s, Reason: reason}
	}
	addr, scope, _ := strings.Cut(s, "%")
	if strings.ContainsRune(scope, '%') {
		return fail("more than one %")
	}
	g, err := rdma.ParseGID(addr)
	if err != nil {
		return fail("want a GID such as fe80::2:c903:a1:b2c4 before %")
	}
	if g.IsZero() {
		return fail("the zero GID addresses no port")
	}
	if scope == "" {
		return fail("want a local end port such as mlx5_0/1 after %")
	}
	l, err := parseLocal(scope, false)
	if err != nil {
		return fail("after %: " + reasonOf(err))
	}
	return Target{Kind: ScopedGID, GID: g, Scope: l}, nil
}

// parseColonForm parses a colon-form port GUID or a GID. The two never
// overlap: a GUID has exactly four non-empty groups, which IPv6 notation
// allows only with "::".
func parseColonForm(s string) (Target, error) {
	if g, err := rdma.ParseGUID(s); err == nil {
		return guidTarget(s, g)
	}
	g, err := rdma.ParseGID(s)
	if err != nil {
		return Target{}, &rdma.ParseError{Kind: "GUID or GID", Input: s,
			Reason: "want a port GUID as four groups of hex digits (0002:c903:00a1:b2c4) or a GID in IPv6 notation (fe80::2:c903:a1:b2c4)"}
	}
	if g.IsZero() {
		return Target{}, &rdma.ParseError{Kind: "GID", Input: s, Reason: "the zero GID addresses no port"}
	}
	return Target{Kind: GID, GID: g}, nil
}

// parseHexForm parses 0x and hex digits h: at most 4 digits are a LID
// (16 bits), more are a port GUID.
func parseHexForm(s, h string) (Target, error) {
	switch {
	case h == "":
		return Target{}, &rdma.ParseError{Kind: "LID or GUID", Input: s, Reason: "want hex digits after 0x"}
	case !isHex(h):
		return Target{}, &rdma.ParseError{Kind: "LID or GUID", Input: s, Reason: "want only hex digits after 0x"}
	case len(h) > 16:
		return Target{}, &rdma.ParseError{Kind: "GUID", Input: s, Reason: "more than 16 hex digits"}
	case len(h) > 4:
		g, err := rdma.ParseGUID(s)
		if err != nil {
			return Target{}, err
		}
		return guidTarget(s, g)
	}
	l, err := rdma.ParseLID(s)
	if err != nil {
		return Target{}, err
	}
	return lidTarget(s, l)
}

// parseDecimalForm parses decimal digits: 0 is the DR path to the local
// port (LID 0 is reserved, so nothing is lost), anything else a LID.
func parseDecimalForm(s string) (Target, error) {
	n, reason := parseNumber(s, 0xffff)
	if reason != "" {
		return Target{}, &rdma.ParseError{Kind: "LID", Input: s, Reason: "out of range 1 to 49151"}
	}
	if n == 0 {
		return Target{Kind: DirectRoute, DR: DRPath{0}}, nil
	}
	return lidTarget(s, rdma.LID(n))
}

func lidTarget(s string, l rdma.LID) (Target, error) {
	switch {
	case l == 0:
		return Target{}, &rdma.ParseError{Kind: "LID", Input: s, Reason: "LID 0 is reserved (0 alone is the DR path to the local port)"}
	case l > maxUnicastLID:
		return Target{}, &rdma.ParseError{Kind: "LID", Input: s, Reason: "not a unicast LID: want 1 to 49151 (0xbfff)"}
	}
	return Target{Kind: LID, LID: l}, nil
}

func guidTarget(s string, g rdma.GUID) (Target, error) {
	if g == 0 {
		return Target{}, &rdma.ParseError{Kind: "GUID", Input: s, Reason: "GUID 0 addresses no port"}
	}
	return Target{Kind: GUID, GUID: g}, nil
}

// String formats t in its canonical form, which ParseTarget reads back as
// t: LIDs in decimal, GUIDs as 0x and 16 hex digits, GIDs in short IPv6
// form, DR paths as 0,1,3, path specs as PathSpec.String does.
func (t Target) String() string {
	switch t.Kind {
	case LID:
		return t.LID.String()
	case GUID:
		return t.GUID.String()
	case GID:
		return t.GID.String()
	case ScopedGID:
		return t.GID.String() + "%" + t.Scope.String()
	case DirectRoute:
		return t.DR.String()
	case FullPath:
		if t.Spec != nil {
			return t.Spec.String()
		}
	}
	return ""
}

// MarshalText renders t in its String form, so JSON carries a string.
func (t Target) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText parses any form ParseTarget accepts with Any.
func (t *Target) UnmarshalText(b []byte) error {
	v, err := ParseTarget(string(b), Any)
	if err != nil {
		return err
	}
	*t = v
	return nil
}
