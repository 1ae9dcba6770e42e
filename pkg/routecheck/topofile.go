package routecheck

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Topology is a fabric as a topology file describes it: nodes and the
// links between their ports, without LIDs or forwarding tables. Design
// assigns the LIDs and routes it.
type Topology struct {
	// Nodes are the nodes in the order of the file.
	Nodes []*TopoNode
	// Links are the links, each once, in the order of the file.
	Links []TopoLink
	// FromNode and FromPort are the node GUID and port GUID of the
	// file's "# Initiated from node ... port ..." line, 0 when it has none.
	FromNode, FromPort uint64

	byID   map[string]*TopoNode
	byGUID map[uint64]*TopoNode
}

// TopoNode is a node of a topology file.
type TopoNode struct {
	// ID is the node's quoted name in the file, as S-0002c903000e0b72.
	ID string
	// Desc is the node description of the comment of its Switch, Ca or Rt
	// line ("" when the line has none).
	Desc string
	// GUID is the node GUID (switchguid=, caguid=, rtguid=).
	GUID uint64
	// SystemGUID is the system image GUID (sysimgguid=), the node GUID
	// when the file gives none.
	SystemGUID uint64
	// Type is Switch for a Switch, CA for a Ca or an Rt.
	Type NodeType
	// NumPorts is the number of ports of the Switch, Ca or Rt line.
	NumPorts int
	// PortGUIDs are the port GUIDs by port number: a switch's port 0
	// GUID (of its switchguid= line) for all its ports, a CA's from its
	// port lines; 0 where the file gives none.
	PortGUIDs []uint64

	idx   int
	links []topoHalf // the port lines, resolved after the file is read
}

// TopoEnd is one end of a link of a topology.
type TopoEnd struct {
	// Node is the node.
	Node *TopoNode
	// Port is its port number.
	Port int
}

// TopoLink is a link between two ports.
type TopoLink struct {
	// A is the end whose port line came first in the file, B the other.
	A, B TopoEnd
}

type topoHalf struct {
	line     int
	port     int
	remoteID string
	rport    int
	rguid    uint64
}

// ReadTopology reads a topology file as ibnetdiscover writes it (with or
// without -g, -f): the vendid=, devid=, sysimgguid= and switchguid=,
// caguid= or rtguid= lines of each node, its Switch, Ca or Rt line and a
// port line per linked port. Comments and chassis lines are skipped.
// Both ends of a link must agree: a port linked to two ports is an error.
func ReadTopology(r io.Reader, name string) (*Topology, error) {
	t := &Topology{byID: map[string]*TopoNode{}, byGUID: map[uint64]*TopoNode{}}
	var cur *TopoNode
	var guid, sysGUID, portGUID uint64
	perr := func(n int, format string, a ...any) error {
		return &ParseError{File: name, Line: n, Msg: fmt.Sprintf(format, a...)}
	}
	err := lines(r, name, func(n int, raw []byte) error {
		line := strings.TrimSpace(string(raw))
		if strings.HasPrefix(line, "#") {
			t.readHeaderComment(line)
			return nil
		}
		body, comment := splitComment(line)
		switch {
		case body == "":
			if line == "" {
				cur = nil
			}
			return nil
		case strings.HasPrefix(body, "vendid=") || strings.HasPrefix(body, "devid="):
			return nil
		case strings.HasPrefix(body, "sysimgguid="):
			g, err := parseHex(body[len("sysimgguid="):])
			if err != nil {
				return perr(n, "bad sysimgguid %q", trunc(body))
			}
			sysGUID = g
			return nil
		case strings.HasPrefix(body, "switchguid="), strings.HasPrefix(body, "caguid="), strings.HasPrefix(body, "rtguid="):
			v := body[strings.IndexByte(body, '=')+1:]
			portGUID = 0
			if i := strings.IndexByte(v, '('); i >= 0 && strings.HasSuffix(v, ")") {
				pg, err := strconv.ParseUint(v[i+1:len(v)-1], 16, 64)
				if err != nil {
					return perr(n, "bad port GUID in %q", trunc(body))
				}
				portGUID, v = pg, v[:i]
			}
			g, err := parseHex(v)
			if err != nil {
				return perr(n, "bad GUID in %q", trunc(body))
			}
			guid = g
			return nil
		case strings.HasPrefix(body, "Switch"), strings.HasPrefix(body, "Ca"), strings.HasPrefix(body, "Rt"):
			node, err := t.readNodeLine(body, comment, guid, sysGUID, portGUID)
			if err != nil {
				return perr(n, "%v", err)
			}
			cur = node
			guid, sysGUID, portGUID = 0, 0, 0
			return nil
		case body[0] == '[':
			if cur == nil {
				return perr(n, "port line outside a node: %q", trunc(body))
			}
			h, pguid, err := readPortLine(body)
			if err != nil {
				return perr(n, "%v", err)
			}
			if h.port < 1 || h.port > cur.NumPorts {
				return perr(n, "%s has no port %d (%d ports)", cur.ID, h.port, cur.NumPorts)
			}
			if pguid != 0 {
				cur.PortGUIDs[h.port] = pguid
			}
			h.line = n
			cur.links = append(cur.links, h)
			return nil
		case strings.HasPrefix(body, "Chassis"), strings.HasPrefix(body, "Non-Chassis"), strings.HasPrefix(body, "Hostname:"):
			return nil
		}
		return perr(n, "unrecognised line %q", trunc(body))
	})
	if err != nil {
		return nil, err
	}
	if len(t.Nodes) == 0 {
		return nil, &ParseError{File: name, Msg: "no nodes", Err: ErrNoData}
	}
	if err := t.resolveLinks(name); err != nil {
		return nil, err
	}
	return t, nil
}

// readHeaderComment takes the node and port the file was made from.
func (t *Topology) readHeaderComment(line string) {
	var node, port uint64
	if _, err := fmt.Sscanf(line, "# Initiated from node %x port %x", &node, &port); err == nil {
		t.FromNode, t.FromPort = node, port
	}
}

// splitComment cuts a line at its first # outside quotes.
func splitComment(line string) (body, comment string) {
	quoted := false
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '"':
			quoted = !quoted
		case '#':
			if !quoted {
				return strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:])
			}
		}
	}
	return line, ""
}

func parseHex(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
		return 0, fmt.Errorf("no 0x")
	}
	return strconv.ParseUint(s[2:], 16, 64)
}

// readNodeLine reads a Switch, Ca or Rt line: the type, the port count
// and the quoted ID; the description is the comment's first quoted text.
func (t *Topology) readNodeLine(body, comment string, guid, sysGUID, portGUID uint64) (*TopoNode, error) {
	f := strings.Fields(body)
	if len(f) < 3 {
		return nil, fmt.Errorf("node line %q: want TYPE PORTS \"ID\"", trunc(body))
	}
	typ := CA
	switch f[0] {
	case "Switch":
		typ = Switch
	case "Ca", "Rt":
	default:
		return nil, fmt.Errorf("unrecognised line %q", trunc(body))
	}
	ports, err := strconv.Atoi(f[1])
	if err != nil || ports < 1 || ports > 254 {
		return nil, fmt.Errorf("node line %q: bad port count %q", trunc(body), trunc(f[1]))
	}
	after := body[len(f[0]):]
	rest := strings.TrimSpace(after[strings.Index(after, f[1])+len(f[1]):])
	id, tail, ok := quoted(rest)
	if !ok || strings.TrimSpace(tail) != "" && !strings.HasPrefix(strings.TrimSpace(tail), "(") {
		return nil, fmt.Errorf("node line %q: want a quoted ID after the port count", trunc(body))
	}
	if guid == 0 {
		// a file without guid lines: the ID says it (S-<guid>)
		if i := strings.IndexByte(id, '-'); i >= 0 {
			guid, _ = strconv.ParseUint(id[i+1:], 16, 64)
		}
		if guid == 0 {
			return nil, fmt.Errorf("node %q has no GUID (a switchguid=, caguid= or rtguid= line before it)", trunc(id))
		}
	}
	if t.byID[id] != nil {
		return nil, fmt.Errorf("node %q is defined twice", trunc(id))
	}
	if t.byGUID[guid] != nil {
		return nil, fmt.Errorf("node GUID 0x%016x is defined twice (%s and %s)", guid, t.byGUID[guid].ID, trunc(id))
	}
	if sysGUID == 0 {
		sysGUID = guid
	}
	n := &TopoNode{ID: id, GUID: guid, SystemGUID: sysGUID, Type: typ, NumPorts: ports,
		PortGUIDs: make([]uint64, ports+1), idx: len(t.Nodes)}
	if d, _, ok := quoted(comment); ok {
		n.Desc = d
	}
	if typ == Switch {
		if portGUID == 0 {
			portGUID = guid
		}
		for i := range n.PortGUIDs {
			n.PortGUIDs[i] = portGUID
		}
	}
	t.Nodes = append(t.Nodes, n)
	t.byID[id] = n
	t.byGUID[guid] = n
	return n, nil
}

// quoted returns the text between s's leading quote and the next one.
func quoted(s string) (text, rest string, ok bool) {
	if !strings.HasPrefix(s, "\"") {
		return "", s, false
	}
	end := strings.IndexByte(s[1:], '"')
	if end < 0 {
		return "", s, false
	}
	return s[1 : end+1], s[end+2:], true
}

// bracketNum reads "[N]" and an optional "[ext N]" after it.
func bracketNum(s string) (int, string, bool) {
	if !strings.HasPrefix(s, "[") {
		return 0, s, false
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return 0, s, false
	}
	n, err := strconv.Atoi(s[1:end])
	if err != nil {
		return 0, s, false
	}
	s = s[end+1:]
	if strings.HasPrefix(s, "[ext ") {
		if e := strings.IndexByte(s, ']'); e >= 0 {
			s = s[e+1:]
		}
	}
	return n, s, true
}

// parenHex reads an optional "(hex)" after optional blanks.
func parenHex(s string) (uint64, string, error) {
	t := strings.TrimLeft(s, " \t")
	if !strings.HasPrefix(t, "(") {
		return 0, s, nil
	}
	end := strings.IndexByte(t, ')')
	if end < 0 {
		return 0, s, fmt.Errorf("unclosed (")
	}
	g, err := strconv.ParseUint(t[1:end], 16, 64)
	if err != nil {
		return 0, s, fmt.Errorf("bad GUID %q", trunc(t[1:end]))
	}
	return g, t[end+1:], nil
}

// readPortLine reads "[P](portguid) "ID"[RP](rguid)": the port, the
// port's own GUID (CAs), the remote node's ID and port, its GUID.
func readPortLine(body string) (topoHalf, uint64, error) {
	var h topoHalf
	bad := func(what string) (topoHalf, uint64, error) {
		return h, 0, fmt.Errorf("port line %q: %s", trunc(body), what)
	}
	p, s, ok := bracketNum(body)
	if !ok {
		return bad("want [PORT]")
	}
	h.port = p
	pguid, s, err := parenHex(s)
	if err != nil {
		return bad(err.Error())
	}
	id, s, ok := quoted(strings.TrimLeft(s, " \t"))
	if !ok {
		return bad("want the remote node's quoted ID")
	}
	h.remoteID = id
	if h.rport, s, ok = bracketNum(s); !ok {
		return bad("want the remote [PORT]")
	}
	if h.rguid, s, err = parenHex(s); err != nil {
		return bad(err.Error())
	}
	if strings.TrimSpace(s) != "" {
		return bad(fmt.Sprintf("unexpected %q", trunc(strings.TrimSpace(s))))
	}
	return h, pguid, nil
}

// resolveLinks turns the port lines into links, each once, and checks
// both ends agree.
func (t *Topology) resolveLinks(name string) error {
	type end struct {
		n *TopoNode
		p int
	}
	peer := map[end]end{}
	for _, n := range t.Nodes {
		for _, h := range n.links {
			r := t.byID[h.remoteID]
			perr := func(format string, a ...any) error {
				return &ParseError{File: name, Line: h.line, Msg: fmt.Sprintf(format, a...)}
			}
			if r == nil {
				return perr("no node %q in the file", trunc(h.remoteID))
			}
			if h.rport < 1 || h.rport > r.NumPorts {
				return perr("%s has no port %d (%d ports)", r.ID, h.rport, r.NumPorts)
			}
			a, b := end{n, h.port}, end{r, h.rport}
			if a == b {
				return perr("port %d of %s is linked to itself", h.port, n.ID)
			}
			if h.rguid != 0 && r.Type != Switch {
				if g := r.PortGUIDs[h.rport]; g != 0 && g != h.rguid {
					return perr("port %d of %s has GUID 0x%x here and 0x%x on its own line", h.rport, r.ID, h.rguid, g)
				}
				r.PortGUIDs[h.rport] = h.rguid
			}
			if was, ok := peer[a]; ok {
				if was != b {
					return perr("port %d of %s is linked to port %d of %s and to port %d of %s", h.port, n.ID, was.p, was.n.ID, b.p, r.ID)
				}
				continue
			}
			if was, ok := peer[b]; ok && was != a {
				return perr("port %d of %s is linked to port %d of %s and to port %d of %s", b.p, r.ID, was.p, was.n.ID, a.p, n.ID)
			}
			peer[a], peer[b] = b, a
			t.Links = append(t.Links, TopoLink{A: TopoEnd{n, h.port}, B: TopoEnd{r, h.rport}})
		}
		n.links = nil
	}
	return nil
}

// Lookup returns the node a name means: a node GUID (0x...), the ID the
// file gives the node (S-0002c903000e0b72) or its node description, which
// must then be one node's only.
func (t *Topology) Lookup(name string) (*TopoNode, error) {
	if g, err := strconv.ParseUint(name, 0, 64); err == nil {
		if n := t.byGUID[g]; n != nil {
			return n, nil
		}
		return nil, fmt.Errorf("%w: no node of GUID %s in the topology", ErrModel, name)
	}
	if n := t.byID[name]; n != nil {
		return n, nil
	}
	var found *TopoNode
	for _, n := range t.Nodes {
		if n.Desc == name {
			if found != nil {
				return nil, fmt.Errorf("%w: %q describes %s and %s: give the GUID", ErrModel, name, found.ID, n.ID)
			}
			found = n
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%w: no node %q in the topology", ErrModel, name)
	}
	return found, nil
}
