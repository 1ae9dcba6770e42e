package fabric

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// scriptTopology is what infiniband-diags' Perl scripts (ibidsverify.pl,
// ibprint*.pl, ibfindnodesusing.pl) take from an ibnetdiscover -g
// topology, as their patterns read it: the nodes' sections in the order of
// the file. It is made from a kept file's text (parseScriptTopology) or
// straight from a discovered fabric (fabricScriptTopology); on what
// ibnetdiscover prints the two are equal (TestScriptTopologyFromFabric), so
// the tools give the same output either way.
type scriptTopology struct {
	Sections []topoSection
}

// topoSection is one node's part of the topology: its IDs line, its node
// line and its port lines. A file written by hand may lack a part: a
// section starts at every IDs line, and at a node line that does not
// follow its IDs line directly.
type topoSection struct {
	IDs   *topoIDs
	Node  *topoNode
	Ports []topoPort
}

// topoIDs is a switchguid=, caguid= or rtguid= line as ibidsverify.pl
// reads it.
type topoIDs struct {
	// Switch says it is a switchguid= line.
	Switch bool
	// NodeGUID is the node GUID as written: "0x" and the digits without
	// leading zeros. PortGUID is a switch's port GUID from the last
	// parentheses of its line, "0x" added; "" without parentheses.
	NodeGUID, PortGUID string
}

// topoNode is a node line: "Switch", "Ca" or "Rt", the node's quoted
// name ("S-", "H-" or "R-" and its GUID) and a comment.
type topoNode struct {
	// Keyword is how the line starts: "Switch", "Ca" or "Rt".
	Keyword string
	// Named says the kind's node pattern matched (its keyword goes with
	// its name's letter: "S-" for a Switch line, "H-" for Ca, "R-" for
	// Rt): a chassis slot's CA, written as a switch, is not named.
	// GUID is then the name's 16 digits and Comment what follows "# ":
	// "\"desc\"" for a CA or router ("\"desc\" (scp)" for a Xsigo HCA),
	// "\"desc\" base" for a switch (its line up to " port 0").
	Named         bool
	GUID, Comment string
	// LID is a switch's port 0 LID as ibidsverify.pl reads it, "" when
	// its pattern does not match; LinkGUID the switch's digits as
	// ibfindnodesusing.pl's get_link_ends reads them, "" likewise.
	LID, LinkGUID string
	// PeerLIDs are ibidsverify.pl's readings of a CA port's LID in the
	// line: none in a node line ibnetdiscover wrote.
	PeerLIDs []string
	// Text is the line, its newline included.
	Text string
}

// topoPort is a port line: "[N]" and the other end.
type topoPort struct {
	// Num is the port number; -1 for a line of a file written by hand
	// that is no port line but in which ibidsverify.pl's patterns read a
	// LID (PeerLIDs).
	Num int
	// PeerLIDs holds the port's LID once for each of ibidsverify.pl's
	// patterns the line matches, by the kind of node at the other end:
	// once in a CA's or router's port line, none in a switch's.
	PeerLIDs []string
	// GUID is a CA's or router's port GUID as ibidsverify.pl's greedy
	// pattern reads it: "0x" and the line from "[N](" to its last ')',
	// so past the port GUID when the other end is a CA or router (its
	// port GUID is in parentheses too) or its name holds a ')'. It is ""
	// in a switch's port line.
	GUID string
	// Link is the other end as get_link_ends reads a switch's port line,
	// nil when its pattern does not match (a CA's or router's line).
	Link *linkEnd
	// Text is the line, its newline included.
	Text string
}

// The scripts' patterns that sort the lines of a topology.
var (
	topoNodeKeywords = []string{"Switch", "Ca", "Rt"}
	// topoNamed is each keyword's node pattern (ibprint*.pl's, and
	// ibfindnodesusing.pl's for a switch): the GUID and the comment.
	topoNamed = map[string]*cmdutil.LazyRegexp{
		"Switch": {Expr: `^Switch.*"S-(.*)"\s+# (.*) port.*`},
		"Ca":     {Expr: `^Ca.*"H-(.*)"\s+# (.*)`},
		"Rt":     {Expr: `^Rt.*"R-(.*)"\s+# (.*)`},
	}
)

// parseScriptTopology reads a topology's text as the scripts' patterns
// do. Other lines are left out (the scripts' patterns take nothing from
// them), but for those in which ibidsverify.pl's patterns read a LID.
func parseScriptTopology(text []byte) *scriptTopology {
	var a topoAssembler
	for _, line := range strings.SplitAfter(string(text), "\n") {
		bare := strings.TrimSuffix(line, "\n")
		if ids := parseTopoIDs(bare); ids != nil {
			a.ids(ids)
			continue
		}
		if m := printPortLine.Get().FindStringSubmatch(bare); m != nil {
			n, _ := strconv.Atoi(m[1])
			p := topoPort{Num: n, PeerLIDs: idsPeerLIDs(bare), Text: line}
			if m := idsPortGUID.Get().FindStringSubmatch(bare); m != nil {
				p.GUID = "0x" + m[2]
			}
			if m := fnuLinkEnds.Get().FindStringSubmatch(bare); m != nil {
				p.Link = &linkEnd{port: m[1], remGUID: "0x" + m[2], remPort: m[3], remDesc: m[5]}
			}
			a.port(p)
			continue
		}
		if kw := topoKeyword(bare); kw != "" {
			a.node(parseTopoNode(kw, bare, line))
		} else if lids := idsPeerLIDs(bare); lids != nil {
			a.port(topoPort{Num: -1, PeerLIDs: lids, Text: line})
		}
	}
	return &a.topo
}

// topoKeyword is the node line keyword line starts with, "" for none.
func topoKeyword(line string) string {
	for _, kw := range topoNodeKeywords {
		if strings.HasPrefix(line, kw) {
			return kw
		}
	}
	return ""
}

// parseTopoIDs reads an IDs line, nil for another line.
func parseTopoIDs(line string) *topoIDs {
	if m := idsCAGUID.Get().FindStringSubmatch(line); m != nil {
		return &topoIDs{NodeGUID: m[1]}
	}
	m := idsSwitchGUID.Get().FindStringSubmatch(line)
	if m == nil {
		return nil
	}
	ids := &topoIDs{Switch: true, NodeGUID: m[1]}
	if m := idsSwitchBoth.Get().FindStringSubmatch(line); m != nil {
		ids.NodeGUID, ids.PortGUID = m[1], "0x"+m[2]
	}
	return ids
}

// parseTopoNode reads a node line that starts with keyword.
func parseTopoNode(keyword, bare, line string) *topoNode {
	n := &topoNode{Keyword: keyword, PeerLIDs: idsPeerLIDs(bare), Text: line}
	if m := topoNamed[keyword].Get().FindStringSubmatch(bare); m != nil {
		n.Named, n.GUID, n.Comment = true, m[1], m[2]
	}
	if m := idsSwitchLine.Get().FindStringSubmatch(bare); m != nil {
		n.LID = m[3]
	}
	if m := fnuLinkSw.Get().FindStringSubmatch(bare); m != nil {
		n.LinkGUID = m[1]
	}
	return n
}

// idsPeerLIDs are ibidsverify.pl's readings of a CA port's LID in line.
func idsPeerLIDs(line string) []string {
	var lids []string
	for _, re := range idsPortPeers {
		if m := re.Get().FindStringSubmatch(line); m != nil {
			lids = append(lids, m[2])
		}
	}
	return lids
}

// topoAssembler puts IDs, node and port lines together into sections,
// in the order they come.
type topoAssembler struct{ topo scriptTopology }

func (a *topoAssembler) last() *topoSection {
	if len(a.topo.Sections) == 0 {
		return nil
	}
	return &a.topo.Sections[len(a.topo.Sections)-1]
}

func (a *topoAssembler) ids(ids *topoIDs) {
	a.topo.Sections = append(a.topo.Sections, topoSection{IDs: ids})
}

func (a *topoAssembler) node(n *topoNode) {
	if s := a.last(); s != nil && s.IDs != nil && s.Node == nil && len(s.Ports) == 0 {
		s.Node = n
		return
	}
	a.topo.Sections = append(a.topo.Sections, topoSection{Node: n})
}

func (a *topoAssembler) port(p topoPort) {
	if a.last() == nil {
		a.topo.Sections = append(a.topo.Sections, topoSection{})
	}
	s := a.last()
	s.Ports = append(s.Ports, p)
}

// fabricScriptTopology makes the topology of fab that the scripts would
// read from the ibnetdiscover -g text of it, from the nodes and ports
// themselves. The nodes' and ports' lines are kept as output for
// ibprint*; nothing is read back from them.
func fabricScriptTopology(fab *subnet.Fabric) *scriptTopology {
	tw := &subnet.TopologyWriter{Fabric: fab, Group: true, Chassis: fab.GroupChassis()}
	var a topoAssembler
	for _, e := range tw.Entries() {
		if ids := fabricTopoIDs(e); ids != nil {
			a.ids(ids)
		}
		if node := fabricTopoNode(tw, e); node != nil {
			a.node(node)
		}
		for _, p := range e.LinkedPorts() {
			a.port(fabricTopoPort(tw, e, p))
		}
	}
	return &a.topo
}

// fabricTopoPort is the line of p, one of e's linked ports, as the
// scripts read it: a switch's line for its other end, a CA's or router's
// for its LID and port GUID.
func fabricTopoPort(tw *subnet.TopologyWriter, e subnet.TopologyEntry, p *subnet.Port) topoPort {
	tp := topoPort{Num: p.Num, Text: tw.PortLine(e, p)}
	r := p.Remote
	if e.AsSwitch {
		if nameLetter(r.Node) != "" {
			tp.Link = &linkEnd{port: strconv.Itoa(p.Num), remGUID: fmt.Sprintf("0x%016x", uint64(r.Node.GUID)),
				remPort: strconv.Itoa(r.Num), remDesc: afterLastQuote(topoName(r.Node))}
		}
		return tp
	}
	if nameLetter(r.Node) != "" {
		tp.PeerLIDs = []string{strconv.Itoa(int(p.BaseLID))}
	}
	tp.GUID = "0x" + caPortGUIDReading(p)
	return tp
}

// topoName is a node's name in the topology: its description with
// unprintable bytes as spaces (the kept topology uses no node name map).
func topoName(n *subnet.Node) string { return (*nodemap.Map)(nil).Name(uint64(n.GUID), n.Desc) }

// nameLetter is the letter of a node's quoted name in the topology, ""
// for a type that has none ("?").
func nameLetter(n *subnet.Node) string {
	switch n.Type {
	case mad.NodeTypeSwitch:
		return "S"
	case mad.NodeTypeCA:
		return "H"
	case mad.NodeTypeRouter:
		return "R"
	}
	return ""
}

// afterLastQuote is what get_link_ends' `"(.*)"` reads of a quoted name:
// the part after its last '"' (the whole name when it has none).
func afterLastQuote(name string) string { return name[strings.LastIndexByte(name, '"')+1:] }

// fabricTopoIDs is e's IDs line as ibidsverify.pl reads it; nil for a
// node of no known type written as a CA.
func fabricTopoIDs(e subnet.TopologyEntry) *topoIDs {
	n := e.Node
	if !e.AsSwitch {
		if n.Type != mad.NodeTypeCA && n.Type != mad.NodeTypeRouter {
			return nil
		}
		return &topoIDs{NodeGUID: fmt.Sprintf("0x%x", uint64(n.GUID))}
	}
	guid, portGUID := fmt.Sprintf("0x%x", uint64(n.GUID)), fmt.Sprintf("%x", uint64(n.Info.PortGUID))
	// Under -g the line ends with "\t# " and the chassis type and slot;
	// the pattern's last parentheses are there when they hold some.
	tail := "\t# "
	if s := n.ChassisType(); s != "" {
		tail += s + " "
	}
	tail += n.ChassisSlot()
	closing := strings.LastIndexByte(tail, ')')
	if closing < 0 {
		return &topoIDs{Switch: true, NodeGUID: guid, PortGUID: "0x" + portGUID}
	}
	if opening := strings.LastIndexByte(tail[:closing], '('); opening >= 0 {
		return &topoIDs{Switch: true, NodeGUID: guid + "(" + portGUID + ")" + tail[:opening], PortGUID: "0x" + tail[opening+1:closing]}
	}
	return &topoIDs{Switch: true, NodeGUID: guid, PortGUID: "0x" + portGUID + ")" + tail[:closing]}
}

// fabricTopoNode is e's node line as the scripts read it; nil for a node
// of no known type written as a CA (its line starts "???").
func fabricTopoNode(tw *subnet.TopologyWriter, e subnet.TopologyEntry) *topoNode {
	n := e.Node
	letter := nameLetter(n)
	guid := fmt.Sprintf("%016x", uint64(n.GUID))
	text := tw.NodeLine(e)
	if e.AsSwitch {
		t := &topoNode{Keyword: "Switch", Text: text}
		if letter == "S" {
			port0 := "base"
			if n.EnhancedPort0 {
				port0 = "enhanced"
			}
			t.Named, t.GUID, t.Comment = true, guid, "\""+topoName(n)+"\" "+port0
			t.LID, t.LinkGUID = strconv.Itoa(int(n.SMALID)), guid
		}
		return t
	}
	if letter != "H" && letter != "R" {
		return nil
	}
	t := &topoNode{Keyword: map[string]string{"H": "Ca", "R": "Rt"}[letter], Named: true, GUID: guid, Comment: "\"" + topoName(n) + "\"", Text: text}
	if tw.Group && subnet.IsXsigoHCA(n.GUID) {
		t.Comment += " (scp)"
	}
	return t
}

// caPortGUIDReading is what ibidsverify.pl's `^\[(\d+)\]\((.*)\)` reads
// of a CA's or router's port line as its port GUID: from the port GUID
// to the line's last ')', which is the port GUID's own unless the other
// end's port GUID follows in parentheses (a CA or router at the other
// end) or its name holds one.
func caPortGUIDReading(p *subnet.Port) string {
	r := p.Remote
	s := fmt.Sprintf("%x", uint64(p.GUID))
	name := topoName(r.Node)
	closing := strings.LastIndexByte(name, ')')
	if r.Node.Type == mad.NodeTypeSwitch && closing < 0 {
		return s
	}
	ext := ""
	if r.ExtNum != 0 {
		ext = fmt.Sprintf("[ext %d]", r.ExtNum)
	}
	s += fmt.Sprintf(") \t\"%s-%016x\"[%d]%s", cmp.Or(nameLetter(r.Node), "?"), uint64(r.Node.GUID), r.Num, ext)
	if r.Node.Type != mad.NodeTypeSwitch {
		s += fmt.Sprintf(" (%x", uint64(r.GUID))
		if closing < 0 {
			return s
		}
		s += ") "
	}
	return s + fmt.Sprintf("\t\t# lid %d lmc %d \"%s", p.BaseLID, p.LMC, name[:closing])
}

// keptScriptTopology is the kept topology as a script tool reads it.
type keptScriptTopology struct {
	// Topo is the scripts' reading of it.
	Topo *scriptTopology
	// Text is the kept file's text when it was read (nil when Fabric
	// was discovered afresh).
	Text []byte
	// Fabric is the fabric when it was discovered afresh.
	Fabric *subnet.Fabric
}

// readKeptTopology reads the kept topology k: from the kept file's text,
// or from the fabric discovered afresh (its text only written, for the
// scripts). A partial discovery's error comes with the topology.
func readKeptTopology(k *cmdutil.KeptTopology) (*keptScriptTopology, error) {
	text, fab, err := k.Read()
	switch {
	case fab != nil:
		return &keptScriptTopology{Topo: fabricScriptTopology(fab), Fabric: fab}, err
	case text != nil:
		return &keptScriptTopology{Topo: parseScriptTopology(text), Text: text}, err
	}
	return nil, err
}
