package simfabric

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// PortStatus is one port as ibsim's console Dump reports it: ibsim's own
// port table, the state every MAD to the port will see.
type PortStatus struct {
	PortRef
	// NodeType is the type of the node the port belongs to.
	NodeType NodeType
	// GUID is the port GUID (the node GUID for every port of a switch).
	GUID uint64
	// Remote is the port at the other end of the cable; zero when none
	// (and for a switch's port 0).
	Remote PortRef
	// LID is the port's LID, for end ports (CA and router ports, switch
	// port 0); 0 when unassigned or not an end port.
	LID int
	// State is the logical port state: Down, Init, Armed or Active.
	State string
	// PhysState is the physical state: LinkUp, Polling, Disabled, ...
	PhysState string
}

// Linked reports whether the port is cabled to another.
func (p PortStatus) Linked() bool { return p.Remote.Node != "" }

// EndPort reports whether the port takes a LID of its own.
func (p PortStatus) EndPort() bool { return p.NodeType != NodeSwitch || p.Port == 0 }

// Dump returns the state of every port of the fabric, in ibsim's order,
// from ibsim's console Dump command.
func (f *Fabric) Dump(ctx context.Context) ([]PortStatus, error) {
	d, err := f.dump(ctx)
	return d.ports, err
}

// dump runs the console's Dump and returns the whole parse.
func (f *Fabric) dump(ctx context.Context) (*dumpParser, error) {
	d := &dumpParser{}
	if err := f.console(ctx, "Dump", d.line); err != nil {
		return d, err
	}
	return d, d.finish()
}

// ErrDumpSyntax is wrapped by the errors of a Dump reply that cannot be
// parsed.
var ErrDumpSyntax = errors.New("ibsim Dump syntax")

// dumpParser parses a Dump reply line by line:
//
//	# Net status - Sun Nov 22 23:58:03 2026
//
//	Switch 8 "Switch1"	nodeguid 200000	sysimgguid 200000
//	#	linearcap 30720 FDBtop 6 portchange 0
//	#	Forwarding table 0-6: [0]FF [1]0 [2]1 [3]3 [4]3 [5]2 [6]5
//	200000	[0]	"Sma Port"[0]	 lid 1 lmc 0 smlid 1  4x  2.5G Active/LinkUp
//	200000	[1]	"Hca1"[1]	  4x  2.5G Active/LinkUp
//	200000	[4]			  4x  2.5G Down/Polling
//
//	Ca 2 "Hca1"	nodeguid 100000	sysimgguid 100000
//	100001	[1]	"Switch1"[1]	 lid 2 lmc 0 smlid 1  4x  2.5G Active/LinkUp
//	#  dumped 6 nodes
//
// A port line may end in "\t# err_rate N\t# err_attr N". A switch's
// "portchange 1" is its SwitchInfo PortStateChange bit: ibsim sets it when
// a link of the switch changes, and opensm clears it in a heavy sweep.
type dumpParser struct {
	ports   []PortStatus
	changed []string // switches whose PortStateChange bit is set
	node    string
	typ     NodeType
	lineNo  int
	nodes   int
	dumped  int // from the last line; -1 until seen
	err     error
}

func (d *dumpParser) line(l []byte) error {
	d.lineNo++
	if d.err != nil || len(l) == 0 {
		return nil
	}
	if l[0] == '#' {
		if n, ok := bytes.CutPrefix(l, []byte("#  dumped ")); ok {
			d.dumped, _ = atoi(string(n))
			d.dumped++ // store n+1 so that 0 means "not seen"
		}
		if d.typ == NodeSwitch && bytes.HasSuffix(l, []byte(" portchange 1")) {
			d.changed = append(d.changed, d.node)
		}
		return nil
	}
	if err := d.parse(string(l)); err != nil {
		d.err = fmt.Errorf("%w: line %d: %v: %q", ErrDumpSyntax, d.lineNo, err, l)
	}
	return nil
}

func (d *dumpParser) parse(l string) error {
	for _, h := range []struct {
		prefix string
		typ    NodeType
	}{{"Switch ", NodeSwitch}, {"Ca ", NodeCA}, {"Router ", NodeRouter}} {
		if strings.HasPrefix(l, h.prefix) {
			_, rest, ok := strings.Cut(l, `"`)
			id, _, ok2 := strings.Cut(rest, `"`)
			if !ok || !ok2 {
				return errors.New("node header without a quoted ID")
			}
			d.node, d.typ = id, h.typ
			d.nodes++
			return nil
		}
	}
	if d.node == "" {
		return errors.New("port line before any node header")
	}
	guid, rest, ok := strings.Cut(l, "\t")
	if !ok {
		return errors.New("no tab after the GUID")
	}
	p := PortStatus{PortRef: PortRef{Node: d.node}, NodeType: d.typ}
	var err error
	if p.GUID, err = strconv.ParseUint(guid, 16, 64); err != nil {
		return fmt.Errorf("bad GUID %q", guid)
	}
	port, rest, ok := strings.Cut(rest, "]")
	if !strings.HasPrefix(port, "[") || !ok {
		return errors.New("no [port]")
	}
	if p.Port, err = strconv.Atoi(port[1:]); err != nil {
		return fmt.Errorf("bad port %q", port)
	}
	rest = strings.TrimPrefix(rest, "\t")
	if strings.HasPrefix(rest, `"`) {
		remote, after, ok := strings.Cut(rest[1:], `"`)
		rport, after2, ok2 := strings.Cut(strings.TrimPrefix(after, "["), "]")
		if !ok || !ok2 || !strings.HasPrefix(after, "[") {
			return errors.New(`bad "remote"[port]`)
		}
		rp, err := strconv.Atoi(rport)
		if err != nil {
			return fmt.Errorf("bad remote port %q", rport)
		}
		if !(d.typ == NodeSwitch && p.Port == 0) { // "Sma Port"[0]
			p.Remote = PortRef{Node: remote, Port: rp}
		}
		rest = after2
	}
	if c := strings.Index(rest, "#"); c >= 0 {
		rest = rest[:c] // "# err_rate 5"
	}
	fields := strings.Fields(rest)
	for i, fld := range fields {
		if fld == "lid" && i+1 < len(fields) {
			if p.LID, err = strconv.Atoi(fields[i+1]); err != nil {
				return fmt.Errorf("bad lid %q", fields[i+1])
			}
		}
		if state, phys, ok := strings.Cut(fld, "/"); ok {
			p.State, p.PhysState = state, phys
		}
	}
	if p.State == "" {
		return errors.New("no State/PhysState")
	}
	d.ports = append(d.ports, p)
	return nil
}

// finish returns the first parse error, or an error when the reply was cut
// short (its node count does not match).
func (d *dumpParser) finish() error {
	if d.err != nil {
		return d.err
	}
	if d.dumped == 0 {
		return fmt.Errorf("%w: no \"dumped N nodes\" line", ErrDumpSyntax)
	}
	if d.dumped-1 != d.nodes {
		return fmt.Errorf("%w: %d node records, but ibsim says it dumped %d", ErrDumpSyntax, d.nodes, d.dumped-1)
	}
	return nil
}

// maxListed is how many ports an error message names.
const maxListed = 5

// checkReady returns an error unless every linked port is Active and every
// linked end port (and every switch port 0) has a LID, and, when
// wantLinked is not negative, exactly wantLinked ports are linked.
func checkReady(ports []PortStatus, wantLinked int) error {
	linked := 0
	var bad []string
	nbad := 0
	for _, p := range ports {
		if p.Linked() {
			linked++
		}
		var why string
		switch {
		case p.Linked() && p.State != "Active":
			why = p.State + "/" + p.PhysState
		case (p.Linked() || p.NodeType == NodeSwitch && p.Port == 0) && p.EndPort() && p.LID == 0:
			why = "no LID"
		default:
			continue
		}
		nbad++
		if len(bad) < maxListed {
			bad = append(bad, p.PortRef.String()+" "+why)
		}
	}
	if nbad > 0 {
		more := ""
		if nbad > len(bad) {
			more = ", ..."
		}
		return fmt.Errorf("%d of %d cabled ports not ready: %s%s", nbad, linked, strings.Join(bad, ", "), more)
	}
	if wantLinked >= 0 && linked != wantLinked {
		return fmt.Errorf("ibsim has %d cabled ports, the net file lists %d", linked, wantLinked)
	}
	return nil
}
