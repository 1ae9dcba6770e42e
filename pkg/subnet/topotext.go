package subnet

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madtext"
	"github.com/ibtool/ibtool/pkg/nodemap"
)

// This file renders a fabric as infiniband-diags 44's ibnetdiscover prints
// it (ibnetdiscover.c): the topology, the node lists, the ports report,
// the walk's lines and a Graphviz graph.

// linkSpeedCompat names a LinkSpeedActive value (dump_linkspeed_compat).
func linkSpeedCompat(s mad.LinkSpeed) string {
	switch s {
	case mad.LinkSpeedSDR:
		return "SDR"
	case mad.LinkSpeedDDR:
		return "DDR"
	case mad.LinkSpeedQDR:
		return "QDR"
	}
	return "???"
}

// linkSpeedExtCompat names an extended speed (dump_linkspeedext_compat).
func linkSpeedExtCompat(ext mad.LinkSpeedExt, speed mad.LinkSpeed, fdr10 uint8) string {
	switch ext {
	case 0:
		if fdr10&1 != 0 {
			return "FDR10"
		}
		return linkSpeedCompat(speed)
	case mad.LinkSpeedExtFDR:
		return "FDR"
	case mad.LinkSpeedExtEDR:
		return "EDR"
	case mad.LinkSpeedExtHDR:
		return "HDR"
	case mad.LinkSpeedExtNDR:
		return "NDR"
	}
	return "???"
}

// portLink is what ibnetdiscover reads of a port's link: width, speed,
// extended speed, FDR10 and VLCap, with its rules for missing data.
type portLink struct {
	width mad.LinkWidth
	speed mad.LinkSpeed
	ext   mad.LinkSpeedExt
	fdr10 uint8
	vlCap mad.VLCap
}

// speedString is the speed ibnetdiscover prints.
func (l portLink) speedString() string {
	if l.speed != mad.LinkSpeedQDR && l.ext == 0 {
		return linkSpeedCompat(l.speed)
	}
	return linkSpeedExtCompat(l.ext, l.speed, l.fdr10)
}

// activeLink reads what p's PortInfo and MlnxExtPortInfo say of its link,
// without the extended speed.
func activeLink(p *Port) portLink {
	var l portLink
	if p.Info != nil {
		l.width, l.speed, l.vlCap = p.Info.LinkWidthActive, p.Info.LinkSpeedActive, p.Info.VLCap
	}
	if p.ExtInfo != nil {
		l.fdr10 = p.ExtInfo.LinkSpeedActive
	}
	return l
}

// linkOf reads p's link as the topology dump does: a switch port's speeds
// count only when port 0 was read (its capability mask tells whether the
// extended speed is valid).
func linkOf(p *Port) portLink {
	l := activeLink(p)
	if !p.HasCapMask() {
		if p.Node.Type == mad.NodeTypeSwitch {
			l.speed = 0
		}
		return l
	}
	l.ext = p.LinkSpeedExtActive()
	return l
}

// quotedNodeName is ibnetdiscover's node_name: "S-<guid>", "H-<guid>" or
// "R-<guid>", quotes included.
func quotedNodeName(n *Node) string {
	c := "?"
	switch n.Type {
	case mad.NodeTypeSwitch:
		c = "S"
	case mad.NodeTypeCA:
		c = "H"
	case mad.NodeTypeRouter:
		c = "R"
	}
	return fmt.Sprintf("\"%s-%016x\"", c, uint64(n.GUID))
}

// cleanDesc is rdma-core's clean_nodedesc: unprintable bytes become spaces.
func cleanDesc(s string) string { return (*nodemap.Map)(nil).Name(0, s) }

// LinkCompat names p's active link width and speed as ibnetdiscover's
// topology does ("4x", "QDR"), with its rules for a port whose capability
// mask was not read.
func LinkCompat(p *Port) (width, speed string) {
	l := linkOf(p)
	return madtext.LinkWidthCompat(l.width), l.speedString()
}

// TopologyWriter writes a fabric as infiniband-diags 44's ibnetdiscover
// prints it: the topology file, the node lists, the ports report, the
// walk's lines, a Graphviz graph and the differences from another fabric.
type TopologyWriter struct {
	// W receives the text; the caller flushes it.
	W *bufio.Writer
	// Fabric is the fabric written.
	Fabric *Fabric
	// Names names the nodes; nil: their descriptions, cleaned.
	Names *nodemap.Map
	// Full is ibnetdiscover -f: port lines add the raw speed, width and
	// VLCap.
	Full bool
	// Group is -g: chassis numbers, slots and external port numbers.
	Group bool
	// Chassis are the fabric's chassis (Fabric.GroupChassis), written
	// first by Dump under Group.
	Chassis []*Chassis
}

// TopologyText renders fab as ibnetdiscover prints it (as ibnetdiscover
// -g when group is set), its header dated now.
func TopologyText(fab *Fabric, group bool, now time.Time) []byte {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	t := &TopologyWriter{W: w, Fabric: fab, Group: group}
	if group {
		t.Chassis = fab.GroupChassis()
	}
	t.Header(now, false)
	t.Dump()
	w.Flush() // a bytes.Buffer takes all
	return b.Bytes()
}

// name is the node's name in the map, or its cleaned description.
func (t *TopologyWriter) name(n *Node) string { return t.Names.Name(uint64(n.GUID), n.Desc) }

// Header writes the topology file's header, dated now; maxHops adds
// ibnetdiscover -m's hop and MAD counts.
func (t *TopologyWriter) Header(now time.Time, maxHops bool) {
	fmt.Fprintf(t.W, "#\n# Topology file: generated on %s\n#\n", now.Format("Mon Jan _2 15:04:05 2006"))
	if maxHops {
		fmt.Fprintf(t.W, "# Reported max hops discovered: %d\n# Total MADs used: %d\n", t.Fabric.MaxHops, t.Fabric.MADs)
	}
	fmt.Fprintf(t.W, "# Initiated from node %016x port %016x\n", uint64(t.Fabric.From.GUID), uint64(t.Fabric.From.Info.PortGUID))
}

// ids writes a node's vendid, devid and sysimgguid lines (out_ids).
func (t *TopologyWriter) ids(n *Node, chname, prefix string) {
	fmt.Fprintf(t.W, "\n%svendid=0x%x\n%sdevid=0x%x\n", prefix, n.Info.VendorID, prefix, n.Info.DeviceID)
	sys := n.Info.SystemImageGUID
	if sys != 0 {
		fmt.Fprintf(t.W, "%ssysimgguid=0x%x", prefix, uint64(sys))
	}
	inChassis := t.Group && n.Chassis != 0
	if inChassis {
		fmt.Fprintf(t.W, "\t\t# Chassis %d", n.Chassis)
		if chname != "" {
			fmt.Fprintf(t.W, " (%s)", cleanDesc(chname))
		}
		if IsXsigoTCA(n.GUID) {
			if p := n.Port(1); p != nil && p.Remote != nil {
				fmt.Fprintf(t.W, " slot %d", p.Remote.Num)
			}
		}
	}
	if sys != 0 || inChassis {
		t.W.WriteByte('\n')
	}
}

// switchNode writes a switch's header lines (out_switch).
func (t *TopologyWriter) switchNode(n *Node, chname, idPrefix, swPrefix string) {
	t.ids(n, chname, idPrefix)
	fmt.Fprintf(t.W, "%sswitchguid=0x%x(%x)", idPrefix, uint64(n.GUID), uint64(n.Info.PortGUID))
	if t.Group {
		t.W.WriteString("\t# ")
		if s := n.ChassisType(); s != "" {
			t.W.WriteString(s + " ")
		}
		t.W.WriteString(n.ChassisSlot())
	}
	t.W.WriteByte('\n')
	t.switchDetail(n, swPrefix)
	t.W.WriteByte('\n')
}

// switchDetail writes the Switch line (out_switch_detail), no newline.
func (t *TopologyWriter) switchDetail(n *Node, prefix string) {
	sp0 := "base"
	if n.EnhancedPort0 {
		sp0 = "enhanced"
	}
	fmt.Fprintf(t.W, "%sSwitch\t%d %s\t\t# \"%s\" %s port 0 lid %d lmc %d", prefix, n.NumPorts, quotedNodeName(n),
		t.name(n), sp0, n.SMALID, n.SMALMC)
}

// caNode writes a CA's or router's header lines (out_ca).
func (t *TopologyWriter) caNode(n *Node, chname, idPrefix, caPrefix string) {
	t.ids(n, chname, idPrefix)
	typ := "???"
	switch n.Type {
	case mad.NodeTypeCA:
		typ = "ca"
	case mad.NodeTypeRouter:
		typ = "rt"
	}
	fmt.Fprintf(t.W, "%s%sguid=0x%x\n", idPrefix, typ, uint64(n.GUID))
	t.caDetail(n, caPrefix)
	if t.Group && IsXsigoHCA(n.GUID) {
		t.W.WriteString(" (scp)")
	}
	t.W.WriteByte('\n')
}

// caDetail writes the Ca or Rt line (out_ca_detail), no newline.
func (t *TopologyWriter) caDetail(n *Node, prefix string) {
	typ := "???"
	switch n.Type {
	case mad.NodeTypeCA:
		typ = "Ca"
	case mad.NodeTypeRouter:
		typ = "Rt"
	}
	fmt.Fprintf(t.W, "%s%s\t%d %s\t\t# \"%s\"", prefix, typ, n.NumPorts, quotedNodeName(n), cleanDesc(n.Desc))
}

// extPort is "[ext N]" for a chassis port with an external number under
// -g, "" otherwise.
func (t *TopologyWriter) extPort(p *Port) string {
	if t.Group && p.ExtNum != 0 {
		return fmt.Sprintf("[ext %d]", p.ExtNum)
	}
	return ""
}

// switchLink reads p's link as out_switch_port does, whatever the node:
// speeds only when the node has a port 0 that was read, the extended
// speed when port 0's capability mask says it is valid.
func switchLink(p *Port) portLink {
	l := activeLink(p)
	p0 := p.Node.Port(0)
	if p0 == nil || p0.Info == nil {
		l.speed = 0
		return l
	}
	if p0.Info.CapabilityMask&mad.PortCapIsExtendedSpeedsSupported != 0 && p.Info != nil {
		l.ext = p.Info.LinkSpeedExtActive
	}
	return l
}

// switchPort writes one port line of a switch (out_switch_port).
func (t *TopologyWriter) switchPort(p *Port, prefix string) {
	r := p.Remote
	l := switchLink(p)
	fmt.Fprintf(t.W, "%s[%d]%s\t%s[%d]%s", prefix, p.Num, t.extPort(p), quotedNodeName(r.Node), r.Num, t.extPort(r))
	if r.Node.Type != mad.NodeTypeSwitch {
		fmt.Fprintf(t.W, "(%x) ", uint64(r.GUID))
	}
	fmt.Fprintf(t.W, "\t\t# \"%s\" lid %d %s%s", t.name(r.Node), r.LID(), madtext.LinkWidthCompat(l.width), l.speedString())
	if t.Full {
		fmt.Fprintf(t.W, " s=%d w=%d v=%d", l.speed, l.width, l.vlCap)
	}
	if IsXsigoTCA(r.GUID) {
		fmt.Fprintf(t.W, " slot %d", p.Num)
	} else if IsXsigoHCA(r.GUID) {
		t.W.WriteString(" (scp)")
	}
	t.W.WriteByte('\n')
}

// caPort writes one port line of a CA or router (out_ca_port).
func (t *TopologyWriter) caPort(p *Port, prefix string) {
	r := p.Remote
	l := linkOf(p)
	fmt.Fprintf(t.W, "%s[%d]", prefix, p.Num)
	if p.Node.Type != mad.NodeTypeSwitch {
		fmt.Fprintf(t.W, "(%x) ", uint64(p.GUID))
	}
	fmt.Fprintf(t.W, "\t%s[%d]%s", quotedNodeName(r.Node), r.Num, t.extPort(r))
	if r.Node.Type != mad.NodeTypeSwitch {
		fmt.Fprintf(t.W, " (%x) ", uint64(r.GUID))
	}
	fmt.Fprintf(t.W, "\t\t# lid %d lmc %d \"%s\" lid %d %s%s", p.BaseLID, p.LMC, t.name(r.Node), r.LID(),
		madtext.LinkWidthCompat(l.width), l.speedString())
	if t.Full {
		fmt.Fprintf(t.W, " s=%d w=%d v=%d", l.speed, l.width, l.vlCap)
	}
	t.W.WriteByte('\n')
}

// node writes a node and its linked ports.
func (t *TopologyWriter) node(n *Node, chname string) {
	if n.Type == mad.NodeTypeSwitch {
		t.switchNode(n, chname, "", "")
	} else {
		t.caNode(n, chname, "", "")
	}
	for num := 1; num <= n.NumPorts; num++ {
		p := n.Port(num)
		if p == nil || p.Remote == nil {
			continue
		}
		if n.Type == mad.NodeTypeSwitch {
			t.switchPort(p, "")
		} else {
			t.caPort(p, "")
		}
	}
}

// Dump writes the topology after its header (dump_topology), the chassis
// first under Group.
func (t *TopologyWriter) Dump() {
	if t.Group {
		t.chassisNodes()
		t.W.WriteString("\nNon-Chassis Nodes\n")
	}
	for _, n := range t.Fabric.ByType(mad.NodeTypeSwitch) {
		if t.Group && n.Chassis != 0 {
			continue
		}
		t.node(n, "")
	}
	for _, typ := range []mad.NodeType{mad.NodeTypeCA, mad.NodeTypeRouter} {
		for _, n := range t.Fabric.ByType(typ) {
			if t.Group && n.Chassis != 0 {
				continue
			}
			t.node(n, "")
		}
	}
}

// List writes the nodes of the given types, a line each, as -l, -H, -S
// and -R do (list_nodes).
func (t *TopologyWriter) List(types []mad.NodeType) {
	for _, typ := range types {
		name := map[mad.NodeType]string{mad.NodeTypeSwitch: "Switch", mad.NodeTypeCA: "Ca", mad.NodeTypeRouter: "Router"}[typ]
		for _, n := range t.Fabric.ByType(typ) {
			fmt.Fprintf(t.W, "%s\t : 0x%016x ports %d devid 0x%x vendid 0x%x \"%s\"\n", name, uint64(n.GUID),
				n.NumPorts, n.Info.DeviceID, n.Info.VendorID, t.name(n))
		}
	}
}

// portsTypeCompat is ports_nt_str_compat: SW, CA or RT.
func portsTypeCompat(n *Node) string {
	switch n.Type {
	case mad.NodeTypeSwitch:
		return "SW"
	case mad.NodeTypeCA:
		return "CA"
	case mad.NodeTypeRouter:
		return "RT"
	}
	return "??"
}

// Ports writes the -p ports report (dump_ports_report): every node, ports
// from the highest number down.
func (t *TopologyWriter) Ports() {
	for _, n := range t.Fabric.All() {
		for num := n.NumPorts; num > 0; num-- {
			p := n.Port(num)
			if p == nil {
				continue
			}
			l := linkOf(p)
			if !p.HasCapMask() {
				l = portLink{fdr10: l.fdr10}
			}
			fmt.Fprintf(t.W, "%2s %5d %2d 0x%016x %s %s", portsTypeCompat(n), p.LID(), p.Num, uint64(p.GUID),
				madtext.LinkWidthCompat(l.width), l.speedString())
			if r := p.Remote; r != nil {
				fmt.Fprintf(t.W, " - %2s %5d %2d 0x%016x ( '%s' - '%s' )\n", portsTypeCompat(r.Node), r.LID(), r.Num,
					uint64(r.GUID), t.name(n), t.name(r.Node))
			} else {
				fmt.Fprintf(t.W, "%36s'%s'\n", "", t.name(n))
			}
		}
	}
}

// Visits writes the -s lines: each NodeInfo answer of the walk, as
// libibnetdisc's dump_endnode prints it.
func (t *TopologyWriter) Visits() {
	for _, v := range t.Fabric.Visits {
		state := "known"
		if v.New {
			state = "new"
		}
		port := v.Port
		if v.Node.Type == mad.NodeTypeSwitch {
			port = 0
		}
		fmt.Fprintf(t.W, "DR path slid 0; dlid 0; %s -> %s %s {%016x} portnum %d lid %d-%d \"%s\"\n",
			FormatPath(v.Path), state, v.Node.Type, uint64(v.Node.GUID), port, v.LID, int(v.LID)+1<<v.LMC-1, v.Desc)
	}
}

// Dot writes the fabric as a Graphviz graph: a vertex per node (switches
// as boxes, CAs as ellipses, routers as diamonds) labelled with its name,
// GUID and LID, and an edge per link labelled with its width and speed,
// each end with its port number.
func (t *TopologyWriter) Dot() {
	t.W.WriteString("graph fabric {\n\tgraph [overlap=false];\n")
	var nodes []*Node
	for _, typ := range []mad.NodeType{mad.NodeTypeSwitch, mad.NodeTypeCA, mad.NodeTypeRouter} {
		nodes = append(nodes, t.Fabric.ByType(typ)...)
	}
	for _, n := range nodes {
		shape := map[mad.NodeType]string{mad.NodeTypeSwitch: "box", mad.NodeTypeCA: "ellipse", mad.NodeTypeRouter: "diamond"}[n.Type]
		lid := n.SMALID
		if n.Type != mad.NodeTypeSwitch {
			for _, p := range n.Ports {
				if p != nil && p.BaseLID != 0 {
					lid = p.BaseLID
					break
				}
			}
		}
		fmt.Fprintf(t.W, "\t%s [shape=%s, label=\"%s\\n0x%016x\\nlid %d\"];\n", quotedNodeName(n), shape,
			dotEscape(t.name(n)), uint64(n.GUID), lid)
	}
	done := make(map[*Port]bool)
	for _, n := range nodes {
		for num := 1; num <= n.NumPorts; num++ {
			p := n.Port(num)
			if p == nil || p.Remote == nil || done[p] {
				continue
			}
			done[p], done[p.Remote] = true, true
			l := linkOf(p)
			if n.Type == mad.NodeTypeSwitch {
				l = switchLink(p)
			}
			fmt.Fprintf(t.W, "\t%s -- %s [taillabel=\"%d\", headlabel=\"%d\", label=\"%s%s\"];\n", quotedNodeName(n),
				quotedNodeName(p.Remote.Node), p.Num, p.Remote.Num, madtext.LinkWidthCompat(l.width), l.speedString())
		}
	}
	t.W.WriteString("}\n")
}

// dotEscape escapes a name for a quoted Graphviz string.
func dotEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}
