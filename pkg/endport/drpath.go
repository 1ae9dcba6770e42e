package endport

import (
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// DRPath is a directed route as infiniband-diags writes it: the port
// numbers to leave by, hop by hop, after an initial 0 that stands for the
// local port. DRPath{0} is the local port itself; DRPath{0, 1, 3} leaves the
// local node by port 1, then the next node by port 3. Entry i is the
// InitialPath byte i of a directed-route SMP (IBA 14.2.1.2).
type DRPath []uint8

// Hops returns the number of links the path crosses: the SMP's HopCount.
func (p DRPath) Hops() int { return max(len(p)-1, 0) }

// String formats the path as infiniband-diags does: "0,1,3".
func (p DRPath) String() string { return p.join(',') }

// MarshalText renders the path in its String form, so JSON carries "0,1,3".
func (p DRPath) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses any form ParseDRPath accepts.
func (p *DRPath) UnmarshalText(b []byte) error {
	v, err := ParseDRPath(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

func (p DRPath) join(sep byte) string {
	b := make([]byte, 0, 4*len(p))
	for i, h := range p {
		if i > 0 {
			b = append(b, sep)
		}
		b = strconv.AppendUint(b, uint64(h), 10)
	}
	return string(b)
}

// ParseDRPath parses a directed route: port numbers 0 to 255 in decimal
// (a leading zero is never octal), separated by commas, the first one 0, at
// most 64 entries (mad.MaxHops, the size of the SMP's path arrays), so at
// most 63 hops. "0" alone is the local port.
//
// One trailing comma is allowed and changes nothing ("0,1," is "0,1", and
// "0," the local port): it is python-rdma's documented form
// (rdma.path.from_string drops one empty last entry). Any other empty entry
// ("0,,1", "0,1,,") and any whitespace are rejected, although
// infiniband-diags reads them with atoi as port 0: an empty entry in the
// middle almost always means a variable that expanded to nothing
// ("0,$a,1"), and the path it leaves silently addresses a different node.
func ParseDRPath(s string) (DRPath, error) {
	p, reason := parseHops(s, ',')
	if reason != "" {
		return nil, &rdma.ParseError{Kind: "DR path", Input: s, Reason: reason}
	}
	return p, nil
}

// parseHops parses port numbers separated by sep, one trailing sep
// allowed, as ParseDRPath describes.
func parseHops(s string, sep byte) (DRPath, string) {
	form := "want port numbers 0 to 255 separated by " + sepName(sep) + "s, starting with 0, such as " + DRPath{0, 1, 3}.join(sep)
	switch {
	case s == "":
		return nil, "empty; " + form
	case hasSpace(s):
		return nil, "contains whitespace; " + form
	case s == string(sep):
		return nil, "no port numbers; " + form
	}
	trimmed := strings.TrimSuffix(s, string(sep))
	fields := strings.Split(trimmed, string(sep))
	if len(fields) > mad.MaxHops {
		return nil, strconv.Itoa(len(fields)-1) + " hops; at most " + strconv.Itoa(mad.MaxHops-1) + " fit in an SMP"
	}
	p := make(DRPath, len(fields))
	for i, f := range fields {
		if f == "" {
			return nil, "empty entry " + strconv.Itoa(i) + "; " + form
		}
		if !isDecimal(f) {
			return nil, "entry " + strconv.Itoa(i) + " " + strconv.Quote(f) + " is not a decimal port number"
		}
		n, err := strconv.ParseUint(f, 10, 8)
		if err != nil {
			return nil, "entry " + strconv.Itoa(i) + " is " + f + "; a port number is 0 to 255"
		}
		p[i] = uint8(n)
	}
	if p[0] != 0 {
		return nil, "must start with 0, the local port (did you mean 0" + string(sep) + trimmed + "?)"
	}
	return p, ""
}

// sepName names the separators parseHops is used with: ',' for DR paths,
// ':' inside python-rdma path specs.
func sepName(sep byte) string {
	if sep == ',' {
		return "comma"
	}
	return "colon"
}
