package routecheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseError is a line of a dump file the loaders cannot read.
type ParseError struct {
	// File is the name the loader was given for the input.
	File string
	// Line is the 1-based line number; 0 for an error about the whole file.
	Line int
	// Msg says what is wrong.
	Msg string
	// Err is the model's error behind it, if any.
	Err error
}

// Error returns "file:line: message".
func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Unwrap returns the model error behind the parse error.
func (e *ParseError) Unwrap() error { return e.Err }

// ErrNoData is wrapped by a loader's error when its input holds no records
// at all (an empty or truncated dump).
var ErrNoData = errors.New("no records")

// lines calls fn for every line of r, with its number.
func lines(r io.Reader, name string, fn func(n int, line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		if err := fn(n, bytes.TrimRight(sc.Bytes(), "\r")); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return &ParseError{File: name, Line: n + 1, Msg: err.Error(), Err: err}
	}
	return nil
}

// subnetEnd is one side of an opensm-subnet.lst link line.
type subnetEnd struct {
	typ                   NodeType
	ports                 int
	sysGUID, node, portID uint64
	lid, num              int
}

// ReadSubnet reads opensm-subnet.lst (opensm -D 0x41 writes it into its
// dump directory) into f: one link per line, both ends with their node,
// system and port GUIDs, LIDs and port numbers. Links that are not Active,
// Armed or Initialize are left out, as ibdmchk leaves them out. It returns
// the number of links read.
func ReadSubnet(f *Fabric, r io.Reader, name string) (int, error) {
	links := 0
	err := lines(r, name, func(n int, line []byte) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		a, b, state, err := parseSubnetLine(string(line))
		if err != nil {
			return &ParseError{File: name, Line: n, Msg: err.Error()}
		}
		if state != "ACT" && state != "INI" && state != "ARM" {
			return nil
		}
		for _, e := range []subnetEnd{a, b} {
			if _, err := f.AddNode(e.node, e.sysGUID, e.typ, e.ports); err != nil {
				return &ParseError{File: name, Line: n, Msg: err.Error(), Err: err}
			}
		}
		if na, nb := f.Node(a.node), f.Node(b.node); na.Type != a.typ || nb.Type != b.typ {
			return &ParseError{File: name, Line: n, Msg: "node type differs from an earlier line"}
		}
		if err := f.Connect(Endpoint{Node: a.node, Port: a.num, PortGUID: a.portID, LID: a.lid},
			Endpoint{Node: b.node, Port: b.num, PortGUID: b.portID, LID: b.lid}); err != nil {
			return &ParseError{File: name, Line: n, Msg: err.Error(), Err: err}
		}
		links++
		return nil
	})
	if err == nil && links == 0 {
		err = &ParseError{File: name, Msg: "no active links", Err: ErrNoData}
	}
	return links, err
}

// parseSubnetLine reads
//
//	{ CA Ports:01 SystemGUID:... NodeGUID:... PortGUID:... VenID:... DevID:... Rev:... {desc} LID:0001 PN:01 } { SW ... } PHY=4x LOG=ACT SPD=2.5
func parseSubnetLine(s string) (a, b subnetEnd, state string, err error) {
	rest := s
	if a, rest, err = parseSubnetEnd(rest, "first"); err != nil {
		return
	}
	if b, rest, err = parseSubnetEnd(rest, "second"); err != nil {
		return
	}
	f := strings.Fields(rest)
	if len(f) < 2 || !strings.HasPrefix(f[0], "PHY=") || !strings.HasPrefix(f[1], "LOG=") {
		err = errors.New("missing PHY= and LOG= after the two ports")
		return
	}
	state = strings.TrimPrefix(f[1], "LOG=")
	if len(state) > 3 {
		state = state[:3]
	}
	if len(f) > 2 && !strings.HasPrefix(f[2], "SPD=") {
		err = fmt.Errorf("unexpected %q after LOG=", f[2])
	}
	return
}

func parseSubnetEnd(s, which string) (e subnetEnd, rest string, err error) {
	s = strings.TrimLeft(s, " ")
	if !strings.HasPrefix(s, "{ ") {
		return e, "", fmt.Errorf("%s port: want \"{ \"", which)
	}
	s = s[2:]
	next := func(prefix string) (string, error) {
		s = strings.TrimLeft(s, " ")
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			return "", fmt.Errorf("%s port: missing %s", which, strings.TrimSuffix(prefix, ":"))
		}
		tok := s[:i]
		s = s[i:]
		if !strings.HasPrefix(tok, prefix) {
			return "", fmt.Errorf("%s port: want %s, found %q", which, strings.TrimSuffix(prefix, ":"), tok)
		}
		return tok[len(prefix):], nil
	}
	hex := func(prefix string, bits int) (uint64, error) {
		v, err := next(prefix)
		if err != nil {
			return 0, err
		}
		x, perr := strconv.ParseUint(v, 16, bits)
		if perr != nil {
			return 0, fmt.Errorf("%s port: bad %s %q", which, strings.TrimSuffix(prefix, ":"), v)
		}
		return x, nil
	}
	typ, err := next("")
	if err != nil {
		return e, "", err
	}
	switch {
	case strings.HasPrefix(typ, "SW"):
		e.typ = Switch
	case strings.HasPrefix(typ, "CA"):
		e.typ = CA
	default:
		return e, "", fmt.Errorf("%s port: node type %q is neither CA nor SW", which, typ)
	}
	var v uint64
	if v, err = hex("Ports:", 8); err != nil {
		return
	}
	e.ports = int(v)
	if e.sysGUID, err = hex("SystemGUID:", 64); err != nil {
		return
	}
	if e.node, err = hex("NodeGUID:", 64); err != nil {
		return
	}
	if e.portID, err = hex("PortGUID:", 64); err != nil {
		return
	}
	for _, p := range []string{"VenID:", "DevID:", "Rev:"} {
		if _, err = hex(p, 64); err != nil {
			return
		}
	}
	// The description runs to the next '}', spaces and all.
	s = strings.TrimLeft(s, " ")
	if !strings.HasPrefix(s, "{") {
		return e, "", fmt.Errorf("%s port: missing {description}", which)
	}
	i := strings.IndexByte(s, '}')
	if i < 0 {
		return e, "", fmt.Errorf("%s port: unterminated {description}", which)
	}
	s = s[i+1:]
	if v, err = hex("LID:", 16); err != nil {
		return
	}
	e.lid = int(v)
	if v, err = hex("PN:", 8); err != nil {
		return
	}
	e.num = int(v)
	s = strings.TrimLeft(s, " ")
	if !strings.HasPrefix(s, "}") {
		return e, "", fmt.Errorf("%s port: want \"}\" after PN", which)
	}
	return e, s[1:], nil
}

// ReadFDBs reads opensm.fdbs (opensm -D 0x41), every switch's unicast
// forwarding table as dump_ucast_routes prints it:
//
//	dump_ucast_routes: Switch 0x0002c90200400b28
//	LID    : Port : Hops : Optimal
//	0x0001 : 003  : 01   : yes
//
// into f, whose nodes ReadSubnet read before. It returns the number of
// entries and of switches read.
func ReadFDBs(f *Fabric, r io.Reader, name string) (entries, switches int, err error) {
	var sw *Node
	err = lines(r, name, func(n int, line []byte) error {
		switch {
		case len(bytes.TrimSpace(line)) == 0:
			return nil
		case len(line) > 2 && line[0] == '0' && line[1] == 'x':
			if sw == nil {
				return &ParseError{File: name, Line: n, Msg: "forwarding entry before any switch line"}
			}
			lid, port, ok := parseLFTLine(line)
			if !ok {
				return &ParseError{File: name, Line: n, Msg: fmt.Sprintf("want \"0xLID : PORT ...\" or \"0xLID : UNREACHABLE\", found %q", trunc(string(line)))}
			}
			if err := f.SetLFT(sw, lid, port); err != nil {
				return &ParseError{File: name, Line: n, Msg: err.Error(), Err: err}
			}
			if port != Unassigned {
				entries++ // as ibdmchk counts them: UNREACHABLE lines are not entries
			}
			return nil
		case bytes.HasPrefix(line, []byte("dump_ucast_routes: Switch 0x")):
			s := string(line)
			g, perr := strconv.ParseUint(strings.TrimSpace(s[len("dump_ucast_routes: Switch 0x"):]), 16, 64)
			if perr != nil {
				return &ParseError{File: name, Line: n, Msg: fmt.Sprintf("bad switch GUID in %q", trunc(s))}
			}
			if sw = f.Node(g); sw == nil {
				return &ParseError{File: name, Line: n, Msg: fmt.Sprintf("switch 0x%016x is not in the subnet file", g)}
			}
			switches++
			return nil
		case bytes.HasPrefix(line, []byte("LID")) && bytes.IndexByte(line, ':') >= 0:
			return nil
		}
		return &ParseError{File: name, Line: n, Msg: fmt.Sprintf("unrecognised line %q", trunc(string(line)))}
	})
	if err == nil && switches == 0 {
		err = &ParseError{File: name, Msg: "no switch tables", Err: ErrNoData}
	}
	return entries, switches, err
}

// parseLFTLine reads "0x0001 : 003  : 01   : yes" or "0x0005 : UNREACHABLE".
func parseLFTLine(b []byte) (lid int, port uint8, ok bool) {
	i := 2
	for ; i < len(b) && i < 6+2; i++ {
		c := b[i]
		var v int
		switch {
		case c >= '0' && c <= '9':
			v = int(c - '0')
		case c >= 'a' && c <= 'f':
			v = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v = int(c-'A') + 10
		default:
			goto sep
		}
		lid = lid<<4 | v
	}
sep:
	if i == 2 || lid > 0xffff {
		return 0, 0, false
	}
	rest := bytes.TrimLeft(b[i:], " \t")
	if len(rest) == 0 || rest[0] != ':' {
		return 0, 0, false
	}
	rest = bytes.TrimLeft(rest[1:], " \t")
	if bytes.HasPrefix(rest, []byte("UNREACHABLE")) {
		return lid, Unassigned, true
	}
	j, p := 0, 0
	for ; j < len(rest) && rest[j] >= '0' && rest[j] <= '9'; j++ {
		p = p*10 + int(rest[j]-'0')
		if p > 255 {
			return 0, 0, false
		}
	}
	if j == 0 || (j < len(rest) && rest[j] != ' ' && rest[j] != '\t' && rest[j] != ':') {
		return 0, 0, false
	}
	return lid, uint8(p), true
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// ReadMCFDBs reads opensm.mcfdbs (opensm -D 0x41), every switch's
// multicast forwarding table:
//
//	Switch 0x0000000000200000
//	LID    : Out Port(s)
//	0xC001 : 0x001  0x002  0x003
//
// into f. It returns the number of port entries and of switches read. An
// empty file is no error: a subnet may have no multicast group.
func ReadMCFDBs(f *Fabric, r io.Reader, name string) (entries, switches int, err error) {
	var sw *Node
	err = lines(r, name, func(n int, line []byte) error {
		s := string(line)
		switch {
		case strings.TrimSpace(s) == "":
			return nil
		case strings.HasPrefix(s, "Switch 0x"):
			g, perr := strconv.ParseUint(strings.TrimSpace(s[len("Switch 0x"):]), 16, 64)
			if perr != nil {
				return &ParseError{File: name, Line: n, Msg: fmt.Sprintf("bad switch GUID in %q", trunc(s))}
			}
			if sw = f.Node(g); sw == nil {
				return &ParseError{File: name, Line: n, Msg: fmt.Sprintf("switch 0x%016x is not in the subnet file", g)}
			}
			switches++
			return nil
		case strings.HasPrefix(s, "LID") && strings.Contains(s, ":"):
			return nil
		case strings.HasPrefix(s, "0x"):
			if sw == nil {
				return &ParseError{File: name, Line: n, Msg: "multicast entry before any switch line"}
			}
			i := strings.IndexByte(s, ':')
			if i < 0 {
				return &ParseError{File: name, Line: n, Msg: fmt.Sprintf("want \"0xMLID : 0xPORT ...\", found %q", trunc(s))}
			}
			mlid, perr := strconv.ParseUint(strings.TrimSpace(s[2:i]), 16, 16)
			if perr != nil || mlid < 0xc000 {
				return &ParseError{File: name, Line: n, Msg: fmt.Sprintf("bad multicast LID in %q", trunc(s))}
			}
			var ports []int
			for _, t := range strings.Fields(s[i+1:]) {
				v, perr := strconv.ParseUint(strings.TrimPrefix(t, "0x"), 16, 8)
				if perr != nil {
					return &ParseError{File: name, Line: n, Msg: fmt.Sprintf("bad port %q", t)}
				}
				ports = append(ports, int(v))
			}
			if err := f.SetMFT(sw, uint16(mlid), ports...); err != nil {
				return &ParseError{File: name, Line: n, Msg: err.Error(), Err: err}
			}
			entries += len(ports)
			return nil
		}
		return &ParseError{File: name, Line: n, Msg: fmt.Sprintf("unrecognised line %q", trunc(s))}
	})
	return entries, switches, err
}

// ReadPathSLs reads ibdmchk's -c file: a line per source and destination,
// "0xSRC_NODE_GUID DLID SL" (DLID and SL decimal). It returns the number
// of entries.
func ReadPathSLs(f *Fabric, r io.Reader, name string) (int, error) {
	return readNodeLines(f, r, name, 3, `want "0xSRC_GUID DLID SL"`, func(node *Node, fl []string) (string, error) {
		lid, e1 := strconv.ParseUint(fl[1], 10, 16)
		sl, e2 := strconv.ParseUint(fl[2], 10, 4)
		if e1 != nil || e2 != nil {
			return fmt.Sprintf("bad DLID or SL in %q", trunc(strings.Join(fl, " "))), nil
		}
		return "", f.SetPathSL(node, int(lid), uint8(sl))
	})
}

// ReadSL2VL reads ibdmchk's -d file: a line per switch and port pair,
// "0xSWITCH_GUID IN OUT 0x(sl0)(sl1) 0x(sl2)(sl3) ... 0x(sl14)(sl15)",
// each byte two VLs in hex. It returns the number of entries.
func ReadSL2VL(f *Fabric, r io.Reader, name string) (int, error) {
	return readNodeLines(f, r, name, 11, `want "0xSW_GUID IN OUT" and eight 0xVV bytes`, func(node *Node, fl []string) (string, error) {
		in, e1 := strconv.ParseUint(fl[1], 10, 8)
		out, e2 := strconv.ParseUint(fl[2], 10, 8)
		if e1 != nil || e2 != nil {
			return fmt.Sprintf("bad port in %q", trunc(strings.Join(fl, " "))), nil
		}
		var vls [16]uint8
		for i, t := range fl[3:] {
			v, err := strconv.ParseUint(strings.TrimPrefix(t, "0x"), 16, 8)
			if len(t) != 4 || !strings.HasPrefix(t, "0x") || err != nil {
				return fmt.Sprintf("bad VL pair %q", t), nil
			}
			vls[2*i], vls[2*i+1] = uint8(v>>4), uint8(v&15)
		}
		return "", f.SetSL2VL(node, int(in), int(out), vls)
	})
}

// readNodeLines reads a file of ibdmchk's lines that start with a node
// GUID ("0x..."), fields of them each: blank lines and # comments are
// skipped, the GUID is looked up, and set is called with the node and the
// line's fields. set returns what is wrong with the other fields ("" for
// nothing) or the model's error. It
// returns the number of lines set.
func readNodeLines(f *Fabric, r io.Reader, name string, fields int, usage string, set func(*Node, []string) (string, error)) (int, error) {
	entries := 0
	err := lines(r, name, func(n int, line []byte) error {
		fl := strings.Fields(string(line))
		if len(fl) == 0 || strings.HasPrefix(fl[0], "#") {
			return nil
		}
		if len(fl) != fields || !strings.HasPrefix(fl[0], "0x") {
			return &ParseError{File: name, Line: n, Msg: usage}
		}
		g, perr := strconv.ParseUint(fl[0][2:], 16, 64)
		if perr != nil {
			return &ParseError{File: name, Line: n, Msg: fmt.Sprintf("bad GUID in %q", trunc(string(line)))}
		}
		node := f.Node(g)
		if node == nil {
			return &ParseError{File: name, Line: n, Msg: fmt.Sprintf("node 0x%016x is not in the subnet file", g)}
		}
		bad, err := set(node, fl)
		if bad != "" {
			return &ParseError{File: name, Line: n, Msg: bad}
		}
		if err != nil {
			return &ParseError{File: name, Line: n, Msg: err.Error(), Err: err}
		}
		entries++
		return nil
	})
	return entries, err
}
