package simfabric

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// NodeType is the kind of a node in a net file.
type NodeType int

// Node types, as the header keyword of a node record names them.
const (
	NodeSwitch NodeType = iota + 1 // "Switch"
	NodeCA                         // "Hca" or "Ca"
	NodeRouter                     // "Rt"
)

// String returns the header keyword ibsim's Dump uses for the type.
func (t NodeType) String() string {
	switch t {
	case NodeSwitch:
		return "Switch"
	case NodeCA:
		return "Ca"
	case NodeRouter:
		return "Router"
	}
	return fmt.Sprintf("NodeType(%d)", int(t))
}

// Net is a parsed net file: ibsim's topology format, which is the format
// ibnetdiscover writes.
type Net struct {
	// Nodes are the node records in file order (includes expanded in place).
	Nodes []NetNode
}

// NetNode is one node record of a net file.
type NetNode struct {
	Type NodeType
	// ID is the quoted node ID of the header line: what SIM_HOST and the
	// console commands name the node by.
	ID string
	// Desc is the node description after '#' on the header line, "" when
	// absent (ibsim then uses the ID).
	Desc string
	// Ports is the number of ports, not counting a switch's port 0.
	Ports int
	// Links are the node's port lines, in file order.
	Links []NetLink
	// Where is the file and line of the header, for messages.
	Where string
}

// NetLink is one port line: local Port cabled to RemotePort of RemoteID.
type NetLink struct {
	Port       int
	RemoteID   string
	RemotePort int
	// Alias is set when the remote ID is an alias (it holds '@'), which
	// ibsim resolves itself; RemoteID and RemotePort are then as written.
	Alias bool
}

// ibsim's parser limits (ibsim 0.10, sim.h and sim_net.c).
const (
	netMaxLine    = 254 // readline reads at most MAXLINE-2 bytes
	netMaxIDLen   = 64  // NODEIDLEN - 1
	netMaxPorts   = 255 // NodeInfo NumberOfPorts is 8 bits
	netMaxInclude = 9   // MAX_INCLUDE
)

// ErrNetSyntax is wrapped by every error ParseNet and ReadNetFile return for
// a net file ibsim would reject or misread.
var ErrNetSyntax = errors.New("net file syntax")

// ParseNet parses a net file the way ibsim 0.10 reads it, without following
// include lines (ReadNetFile does). name is used in messages only.
//
// It mirrors ibsim's quirks: a record's port lines must start in column 0
// with '[' (or '@' for an alias); '#' lines inside a record are skipped; the
// first other line ends the record and is consumed, so a header that
// directly follows a record without a blank line is lost, as in ibsim; a
// record ends by itself after as many port lines as the node has ports;
// unknown top-level lines are ignored. It does not check that links are
// symmetric or that remote nodes exist: ibsim does that when it connects
// the ports.
func ParseNet(name string, data []byte) (*Net, error) {
	net := &Net{}
	if err := parseNet(net, name, data, "", 0); err != nil {
		return nil, err
	}
	return net, nil
}

// ReadNetFile reads and parses the net file at path, following include lines
// (relative paths are taken from the including file's directory, which is
// where Start runs ibsim).
func ReadNetFile(path string) (*Net, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading net file: %w", err)
	}
	net := &Net{}
	if err := parseNet(net, path, data, filepath.Dir(path), 0); err != nil {
		return nil, err
	}
	return net, nil
}

// netParser reads one file line by line.
type netParser struct {
	name  string
	lines [][]byte
	i     int // index of the next line
}

func (p *netParser) next() (line string, ok bool) {
	if p.i >= len(p.lines) {
		return "", false
	}
	p.i++
	return string(p.lines[p.i-1]), true
}

func (p *netParser) errorf(format string, a ...any) error {
	return fmt.Errorf("%w: %s:%d: %s", ErrNetSyntax, p.name, p.i, fmt.Sprintf(format, a...))
}

// parseNet appends the records of data to net. dir, when not "", is where
// include paths are resolved; "" means includes are not followed.
func parseNet(net *Net, name string, data []byte, dir string, depth int) error {
	lines := bytes.Split(data, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	p := &netParser{name: name, lines: lines}
	seen := make(map[string]bool, len(net.Nodes))
	for _, n := range net.Nodes {
		seen[n.ID] = true
	}
	for {
		line, ok := p.next()
		if !ok {
			return nil
		}
		if len(line) > netMaxLine {
			return p.errorf("line longer than ibsim's %d bytes", netMaxLine)
		}
		var typ NodeType
		var rest string
		switch {
		case strings.HasPrefix(line, "Switch"):
			typ, rest = NodeSwitch, line[6:]
		case strings.HasPrefix(line, "Hca"):
			typ, rest = NodeCA, line[3:]
		case strings.HasPrefix(line, "Ca"):
			typ, rest = NodeCA, line[2:]
		case strings.HasPrefix(line, "Rt"):
			typ, rest = NodeRouter, line[2:]
		case strings.HasPrefix(line, "include"):
			if err := p.include(net, line, dir, depth); err != nil {
				return err
			}
			continue
		default:
			continue
		}
		node, err := p.header(typ, rest, line)
		if err != nil {
			return err
		}
		if seen[node.ID] {
			return p.errorf("node ID %q defined twice", node.ID)
		}
		seen[node.ID] = true
		if err := p.ports(&node); err != nil {
			return err
		}
		net.Nodes = append(net.Nodes, node)
	}
}

func (p *netParser) include(net *Net, line, dir string, depth int) error {
	_, rest, ok := strings.Cut(line, `"`)
	file, _, ok2 := strings.Cut(rest, `"`)
	if !ok || !ok2 {
		return p.errorf("include without a quoted file name")
	}
	if dir == "" {
		return p.errorf("include %q: includes are only followed when reading from a file", file)
	}
	if depth+1 >= netMaxInclude {
		return p.errorf("include %q nested deeper than ibsim's %d levels", file, netMaxInclude)
	}
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return p.errorf("include: %v", err)
	}
	return parseNet(net, path, data, dir, depth+1)
}

// header parses the rest of a header line after its keyword: the port count
// (the first number), the quoted node ID and an optional "# desc".
func (p *netParser) header(typ NodeType, rest, line string) (NetNode, error) {
	node := NetNode{Type: typ, Where: fmt.Sprintf("%s:%d", p.name, p.i)}
	ports, ok := cNumber(rest)
	if !ok || ports == 0 {
		return node, p.errorf("%s header without a port count: %q", typ, line)
	}
	if ports > netMaxPorts {
		return node, p.errorf("%s header with %d ports, ibsim takes at most %d", typ, ports, netMaxPorts)
	}
	node.Ports = ports
	_, afterQuote, ok := strings.Cut(line, `"`)
	id, tail, ok2 := strings.Cut(afterQuote, `"`)
	switch {
	case !ok || !ok2:
		return node, p.errorf("%s header without a quoted node ID: %q", typ, line)
	case id == "":
		return node, p.errorf("%s header with an empty node ID", typ)
	case len(id) > netMaxIDLen:
		return node, p.errorf("node ID %q longer than ibsim's %d bytes", id, netMaxIDLen)
	case strings.ContainsAny(id, "#@"):
		return node, p.errorf("node ID %q holds '#' or '@', which ibsim reserves", id)
	}
	node.ID = id
	node.Desc = parseDesc(tail)
	return node, nil
}

// parseDesc returns the node description after '#' in the tail of a header
// line: a quoted string, or the text up to ibnetdiscover's " lid " (and
// similar) suffixes.
func parseDesc(tail string) string {
	_, s, ok := strings.Cut(tail, "#")
	if !ok {
		return ""
	}
	s = strings.TrimLeft(s, " \t\r\n\v\f")
	if q, ok := strings.CutPrefix(s, `"`); ok {
		d, _, _ := strings.Cut(q, `"`)
		return d
	}
	for _, stop := range []string{" enhanced port ", " base port ", " lid ", " lmc "} {
		if i := strings.Index(s, stop); i >= 0 {
			s = s[:i]
		}
	}
	return s
}

// ports reads the port lines of a record, as ibsim's parse_ports does.
func (p *netParser) ports(node *NetNode) error {
	used := make(map[int]bool, node.Ports)
	for left := node.Ports; left > 0; {
		line, ok := p.next()
		if !ok {
			return nil
		}
		if len(line) > netMaxLine {
			return p.errorf("line longer than ibsim's %d bytes", netMaxLine)
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasPrefix(line, "[") && !strings.HasPrefix(line, "@") {
			return nil // end of record; ibsim consumes this line too
		}
		link, aliasDef, err := p.port(node, line)
		if err != nil {
			return err
		}
		if used[link.Port] {
			return p.errorf("port %d of %q listed twice", link.Port, node.ID)
		}
		used[link.Port] = true
		if !aliasDef {
			node.Links = append(node.Links, link)
		}
		left--
	}
	return nil
}

// port parses a port line; aliasDef reports the "@[port] "alias"" form,
// which names a port instead of cabling it.
func (p *netParser) port(node *NetNode, line string) (link NetLink, aliasDef bool, err error) {
	body := line
	if b, ok := strings.CutPrefix(line, "@"); ok {
		aliasDef, body = true, b
	}
	port := 0
	if len(body) > 1 {
		port, _ = atoi(body[1:]) // ibsim skips the '[' unread
	}
	if port < 1 || port > node.Ports {
		return link, aliasDef, p.errorf("bad port number in %q: %q has ports 1 to %d", line, node.ID, node.Ports)
	}
	link.Port = port
	_, afterQuote, ok := strings.Cut(body, `"`)
	remote, tail, ok2 := strings.Cut(afterQuote, `"`)
	if !ok || !ok2 || remote == "" {
		return link, aliasDef, p.errorf("port line without a quoted remote node ID: %q", line)
	}
	if aliasDef {
		return link, true, nil
	}
	link.RemoteID = remote
	if strings.Contains(remote, "@") {
		link.Alias = true
	}
	link.RemotePort = 1 // ibsim's default when no [port] follows
	if r, ok := strings.CutPrefix(tail, "["); ok {
		rp, _ := atoi(r)
		if rp <= 0 {
			return link, false, p.errorf("bad remote port number in %q", line)
		}
		link.RemotePort = rp
	}
	return link, false, nil
}

// cNumber parses the first number in s the way ibsim does (skip to the first
// digit, then strtoul with base 0: 0x hex, leading 0 octal).
func cNumber(s string) (int, bool) {
	i := strings.IndexAny(s, "0123456789")
	if i < 0 {
		return 0, false
	}
	s = s[i:]
	base, digits := 10, "0123456789"
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") && strings.ContainsRune("0123456789abcdefABCDEF", rune(s[2])):
		base, digits, s = 16, "0123456789abcdefABCDEF", s[2:]
	case s[0] == '0':
		base, digits = 8, "01234567"
	}
	end := 0
	for end < len(s) && end < 10 && strings.IndexByte(digits, s[end]) >= 0 {
		end++
	}
	v, err := strconv.ParseInt(s[:end], base, 64)
	return int(v), err == nil
}

// atoi parses a leading decimal number as C's atoi does (leading blanks and
// a sign allowed, stops at the first non-digit); ok is false when there is
// no digit.
func atoi(s string) (int, bool) {
	s = strings.TrimLeft(s, " \t")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	v, n := 0, 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		v = v*10 + int(s[n]-'0')
		n++
	}
	if neg {
		v = -v
	}
	return v, n > 0
}

// Node returns the node with the given ID, or nil.
func (n *Net) Node(id string) *NetNode {
	for i := range n.Nodes {
		if n.Nodes[i].ID == id {
			return &n.Nodes[i]
		}
	}
	return nil
}

// NetCounts are the sizes ibsim allocates for a net file.
type NetCounts struct {
	Nodes    int
	Switches int
	// Ports counts ports as ibsim does: every switch has Ports+1 (port 0),
	// every other node Ports.
	Ports int
	// EndPorts is the number of ports that take a LID of their own: every
	// switch's port 0 and every CA or router port.
	EndPorts int
	// Links is the number of cabled port lines (each link is listed at both
	// ends, so this is twice the number of cables in a consistent file).
	Links int
}

// Counts returns the sizes of n.
func (n *Net) Counts() NetCounts {
	var c NetCounts
	for _, node := range n.Nodes {
		c.Nodes++
		c.Links += len(node.Links)
		if node.Type == NodeSwitch {
			c.Switches++
			c.Ports += node.Ports + 1
			c.EndPorts++
		} else {
			c.Ports += node.Ports
			c.EndPorts += node.Ports
		}
	}
	return c
}

// ibsim 0.10's built-in limits (sim.h) and the unicast LID space.
const (
	ibsimMaxNodes     = 2048
	ibsimMaxSwitches  = 256
	ibsimMaxPorts     = ibsimMaxSwitches*36 + ibsimMaxNodes*2
	ibsimMaxLinearCap = 30 * 1024
	maxUnicastLID     = 0xbfff
)

// ErrTooManyLIDs is returned by IbsimLimits when a fabric has more end
// ports than the unicast LID space holds.
var ErrTooManyLIDs = errors.New("more end ports than unicast LIDs")

// IbsimLimits returns the ibsim flags (-N, -S, -P, -L) that raise its limits
// to fit c; limits already large enough by default are left out.
func (c NetCounts) IbsimLimits() ([]string, error) {
	if c.EndPorts > maxUnicastLID {
		return nil, fmt.Errorf("%w: %d end ports, at most %d", ErrTooManyLIDs, c.EndPorts, maxUnicastLID)
	}
	var args []string
	raise := func(flag string, need, def int) {
		if need > def {
			args = append(args, flag, strconv.Itoa(need))
		}
	}
	raise("-N", c.Nodes, ibsimMaxNodes)
	raise("-S", c.Switches, ibsimMaxSwitches)
	raise("-P", c.Ports, ibsimMaxPorts)
	raise("-L", c.EndPorts+1, ibsimMaxLinearCap) // LID 0 is reserved
	return args, nil
}
