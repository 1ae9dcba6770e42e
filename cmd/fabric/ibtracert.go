package fabric

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibtracert",
		Summary: "trace the unicast or multicast route between two ports through the forwarding tables",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbtracertCmd(f, nil) },
	})
}

// maxTraceHops bounds a trace, as infiniband-diags' MAXHOPS.
const maxTraceHops = 63

// ibtracertOptions are ibtracert's parsed flags and arguments.
type ibtracertOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	// Pairs are the source and destination targets to trace.
	Pairs [][2]endport.Target
	// Brief is -n: GUIDs and ports only.
	Brief bool
	// Force is -f: go on when an end does not answer, and take a port
	// with the destination's LID as the destination.
	Force bool
	// PortsFile is --ports-file: pairs read from a file.
	PortsFile string
	// MLID is -m: trace the multicast route of this MLID instead (0:
	// unicast).
	MLID     int
	mlidText string
	// Reverse is -r: each pair traced from its destination back to its
	// source (python-rdma's --reverse).
	Reverse bool
	// Discovery is python-rdma's --discovery, --cache and
	// --refresh-cache (ibtracert_discovery.go); Discover returns the
	// --cache fabric.
	Discovery cmdutil.DiscoveryOptions
	Discover  func() (*subnet.Fabric, error)
}

func newIbtracertCmd(f *cmdutil.Factory, runF func(*ibtracertOptions) error) *cobra.Command {
	o := &ibtracertOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "ibtracert [options] [<src-addr>] <dest-addr>",
		Short: "trace the unicast or multicast route between two ports through the forwarding tables",
		Long: `ibtracert follows the route from one port to another hop by hop, reading each
switch's linear forwarding table, and prints every hop as infiniband-diags'
ibtracert does. With -m, it follows the multicast forwarding tables of an
MLID instead, breadth first from the source until it reaches the
destination. The addresses are LIDs, GUIDs, GIDs or DR paths (from this
port); with --ports-file, pairs of them read from a file, one pair a line.
As in python-rdma's ibtracert, one address traces from this port to it,
and -r swaps source and destination.`,
		Example: `  ibtracert 4 16         # the path between LIDs 4 and 16
  ibtracert -n 4 16      # GUIDs and ports only
  ibtracert 16           # from this port to LID 16 (python-rdma's form)
  ibtracert -r 16        # from LID 16 back to this port
  ibtracert --ports-file pairs.txt
  ibtracert -m 0xc000 4 16   # the multicast route of MLID 0xc000 from 4 to 16`,
		Args: cmdutil.ArgsRange(0, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := finishRouteDiscovery(c, &o.Common, &o.Discovery); err != nil {
				return err
			}
			if o.Discovery.Cache != "" {
				o.Discover = func() (*subnet.Fabric, error) {
					return f.DiscoverFabric("ibtracert", &o.Common, &o.Discovery, nil)
				}
			}
			if c.Flags().Changed("mlid") {
				n, err := cmdutil.ParseUintArg(o.mlidText, 0xffff)
				if err == nil && n < mad.MinMulticastLID {
					err = fmt.Errorf("a multicast LID is %#x or larger", mad.MinMulticastLID)
				}
				if err != nil {
					return cmdutil.UsageErrorf("-m %s: %v", o.mlidText, err)
				}
				o.MLID = int(n)
			}
			if o.PortsFile == "" && len(args) == 0 {
				return &cmdutil.UsageError{Err: fmt.Errorf("expected <src-addr> <dest-addr>, got no arguments"), Syntax: true}
			}
			switch len(args) {
			case 1:
				// python-rdma's one-address form: from the local port,
				// which -L, -G and -D do not assert the kind of.
				d, err := o.Common.ParseTarget(args[0])
				if err != nil {
					return err
				}
				local, _ := endport.ParseTarget("0", endport.Any)
				o.Pairs = append(o.Pairs, [2]endport.Target{local, d})
			case 2:
				if err := o.addPair(args[0], args[1]); err != nil {
					return err
				}
			}
			if err := o.readPortsFile(); err != nil {
				return err
			}
			if o.Reverse {
				for i, p := range o.Pairs {
					o.Pairs[i] = [2]endport.Target{p[1], p[0]}
				}
			}
			if runF != nil {
				return runF(o)
			}
			return ibtracertRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsNodeMap|cmdutil.FlagsMKey|cmdutil.FlagsSA)
	fl := c.Flags()
	cmdutil.AddTargetFlags(c, &o.Common, "LGD")
	fl.BoolVarP(&o.Brief, "no_info", "n", false, "simple format")
	fl.BoolVarP(&o.Force, "force", "f", false, "force")
	fl.StringVar(&o.PortsFile, "ports-file", "", "port pairs file")
	fl.StringVarP(&o.mlidText, "mlid", "m", "", "multicast trace of the mlid")
	fl.BoolVarP(&o.Reverse, "reverse", "r", false, "trace from <dest-addr> back to <src-addr> (python-rdma's; with one address, from it to this port)")
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	return c
}

func (o *ibtracertOptions) addPair(src, dst string) error {
	s, err := o.Common.ParseTarget(src)
	if err != nil {
		return err
	}
	d, err := o.Common.ParseTarget(dst)
	if err != nil {
		return err
	}
	o.Pairs = append(o.Pairs, [2]endport.Target{s, d})
	return nil
}

// readPortsFile reads --ports-file: "<src> <dst>" a line; blank lines and
// lines starting with # are skipped.
func (o *ibtracertOptions) readPortsFile() error {
	if o.PortsFile == "" {
		return nil
	}
	f, err := os.Open(o.PortsFile)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		words := strings.Fields(line)
		if len(words) < 2 {
			return cmdutil.UsageErrorf("ports-file %s, line %d: want <src-addr> <dest-addr>: %q", o.PortsFile, n, line)
		}
		if err := o.addPair(words[0], words[1]); err != nil {
			return cmdutil.WithContext(err, "ports-file %s, line %d", o.PortsFile, n)
		}
	}
	return sc.Err()
}

// traceNode is a node and the port a trace reached it on, as get_node reads
// them: NodeInfo, NodeDescription and PortInfo (port 0 of a switch).
type traceNode struct {
	ni   *mad.NodeInfo
	desc string
	pi   mad.PortInfo
}

// portNum is the port the node was reached on (NodeInfo:LocalPortNum).
func (n *traceNode) portNum() int { return int(n.ni.LocalPortNum) }

func (n *traceNode) isSwitch() bool { return n.ni.NodeType == mad.NodeTypeSwitch }

// traceHop is one line of a trace in --json: the From and To ends
// ("from", "to") and the hops between ("hop", with the port they leave
// by).
type traceHop struct {
	Kind            string     `json:"kind"`
	LID             uint16     `json:"lid"`
	NodeDescription string     `json:"nodeDescription"`
	NodeGUID        *rdma.GUID `json:"nodeGUID,omitempty"`
	NodeType        string     `json:"nodeType"`
	OutPort         *int       `json:"outPort,omitempty"`
	Port            int        `json:"port"`
	PortGUID        *rdma.GUID `json:"portGUID,omitempty"`
}

// traceJSON is one traced pair in --json.
type traceJSON struct {
	Destination string     `json:"destination"`
	Hops        []traceHop `json:"hops"`
	MLID        int        `json:"mlid,omitempty"`
	Source      string     `json:"source"`
}

// tracer walks routes for one run.
type tracer struct {
	o     *ibtracertOptions
	ctx   context.Context
	x     *mad.Transactor
	out   []byte
	hops  []traceHop
	brief bool
	names *nodemap.Map
	// lidRouted is --discovery lid: a switch's SwitchInfo and LFT are
	// read by its LID once known; fab is the --cache fabric, which
	// answers for the nodes it has (ibtracert_discovery.go).
	lidRouted bool
	fab       *subnet.Fabric
}

// get reads attribute a with the modifier from the port at p.
func (t *tracer) get(p mad.Path, a mad.Attribute, mod uint32) error {
	_, err := mad.NewQuerier(t.x, p).Get(t.ctx, a, mod)
	return err
}

// getNode reads a node the way infiniband-diags' get_node does.
func (t *tracer) getNode(p mad.Path) (*traceNode, error) {
	if n, ok := t.cachedNode(p); ok {
		return n, nil
	}
	ni := new(mad.NodeInfo)
	if err := t.get(p, ni, 0); err != nil {
		return nil, err
	}
	var nd mad.NodeDescription
	if err := t.get(p, &nd, 0); err != nil {
		return nil, err
	}
	n := &traceNode{ni: ni, desc: t.names.Name(uint64(ni.NodeGUID), printableDesc(nd.NodeDescription))}
	if err := t.get(p, &n.pi, 0); err != nil {
		return nil, err
	}
	return n, nil
}

// hop is a trace line's --json form.
func (n *traceNode) hop(kind string, port int) traceHop {
	return traceHop{Kind: kind, NodeType: n.typeName(), Port: port, LID: n.pi.LID, NodeDescription: n.desc}
}

// printableDesc is a description up to its NUL with unprintable bytes
// made spaces.
func printableDesc(d mad.NodeDescString) string {
	b := []byte(d.String())
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = ' '
		}
	}
	return string(b)
}

// traceNodeTypes are the node types' names as ibtracert prints them.
var traceNodeTypes = []string{"???", "ca", "switch", "router", "iwarp rnic"}

// typeName is the node's type as ibtracert prints it.
func (n *traceNode) typeName() string {
	if t := int(n.ni.NodeType); t < len(traceNodeTypes) {
		return traceNodeTypes[t]
	}
	return "???"
}

// lidRange formats a port's LIDs as "2-2".
func lidRange(pi *mad.PortInfo) string {
	return fmt.Sprintf("%d-%d", pi.LID, int(pi.LID)+(1<<pi.LMC)-1)
}

func (t *tracer) endNode(prompt string, n *traceNode) {
	port := n.portNum()
	if n.isSwitch() {
		port = 0
	}
	if t.brief {
		t.out = fmt.Appendf(t.out, "%s {0x%016x}[%d]\n", prompt, uint64(n.ni.NodeGUID), port)
	} else {
		t.out = fmt.Appendf(t.out, "%s %s {0x%016x} portnum %d lid %s \"%s\"\n", prompt, n.typeName(), uint64(n.ni.NodeGUID), port, lidRange(&n.pi), n.desc)
	}
	h := n.hop(strings.ToLower(prompt), port)
	h.NodeGUID = &n.ni.NodeGUID
	t.hops = append(t.hops, h)
}

func (t *tracer) route(outport int, n *traceNode) {
	if t.brief {
		t.out = fmt.Appendf(t.out, "[%d] -> {0x%016x}[%d]\n", outport, uint64(n.ni.PortGUID), n.portNum())
	} else {
		t.out = fmt.Appendf(t.out, "[%d] -> %s port {0x%016x}[%d] lid %s \"%s\"\n", outport, n.typeName(), uint64(n.ni.PortGUID), n.portNum(), lidRange(&n.pi), n.desc)
	}
	h := n.hop("hop", n.portNum())
	h.OutPort, h.PortGUID = &outport, &n.ni.PortGUID
	t.hops = append(t.hops, h)
}

// sameport is infiniband-diags' test that a trace reached the destination.
func (t *tracer) sameport(a, b *traceNode) bool {
	return a.ni.PortGUID == b.ni.PortGUID || (t.o.Force && a.pi.LID == b.pi.LID)
}

// inactive reports a port not Active; a base switch port 0 always counts
// as active.
func inactive(n *traceNode, enhancedPort0 bool) bool {
	return n.pi.LinkState != 4 && (!n.isSwitch() || enhancedPort0)
}

// lookup returns the switch n's output port for lid from its LFT (and
// whether its port 0 is enhanced), reading them at p, or by n's LID with
// --discovery lid.
func (t *tracer) lookup(p mad.Path, n *traceNode, lid rdma.LID) (int, bool, int, error) {
	p = t.switchPath(p, n)
	si, err := t.switchInfo(p)
	if err != nil {
		return 0, false, 0, err
	}
	enh := si.EnhancedPort0 != 0
	top := int(si.LinearFDBTop)
	if int(lid) >= int(si.LinearFDBCap) && int(lid) > top {
		return -1, enh, top, nil
	}
	var lft mad.LinearForwardingTable
	if err := t.get(p, &lft, uint32(mad.LFTBlock(int(lid)))); err != nil {
		return 0, enh, top, err
	}
	return int(lft.Port(int(lid))), enh, top, nil
}

// findRoute walks from "from" (a DR path) to the port with LID to, as
// infiniband-diags' find_route does, printing when dump. It returns the DR
// path it ends on.
func (t *tracer) findRoute(from mad.Path, to rdma.LID, dump bool) (mad.Path, error) {
	src, err := t.getNode(from)
	if err != nil {
		return from, fmt.Errorf("can't reach the source port %s: %w", from, err)
	}
	dst, err := t.getNode(mad.LIDPath(to))
	if err != nil {
		if !t.o.Force {
			return from, fmt.Errorf("can't reach the destination port Lid %d: %w", to, err)
		}
		dst = &traceNode{ni: &mad.NodeInfo{}, pi: mad.PortInfo{LID: uint16(to)}}
	}
	emit := func(f func()) {
		if dump {
			f()
		}
	}
	emit(func() { t.endNode("From", src) })
	node := src
	path := mad.Path{DR: append([]uint8(nil), from.DR...)}
	nextOut, enh := 255, false
	if node.isSwitch() {
		var top int
		nextOut, enh, top, err = t.lookup(path, node, to)
		if err != nil {
			return path, err
		}
		if nextOut < 0 || nextOut > int(node.ni.NumPorts) {
			return path, badTable(node, to, nextOut, top)
		}
	}
	for hops := maxTraceHops; ; hops-- {
		if hops <= 0 {
			return path, fmt.Errorf("no route found after %d hops", maxTraceHops)
		}
		if inactive(node, enh) {
			return path, fmt.Errorf("bad port state found: node %q port %d state %d", node.desc, node.portNum(), node.pi.LinkState)
		}
		if t.sameport(node, dst) {
			break
		}
		outport := 0
		var next *traceNode
		if node.isSwitch() {
			outport = nextOut
			if len(path.DR) >= mad.MaxHops {
				return path, errors.New("direct path too long")
			}
			path.DR = append(path.DR, uint8(outport))
			if next, err = t.getNode(path); err != nil {
				return path, fmt.Errorf("can't reach the port at %s: %w", path, err)
			}
			if outport == 0 {
				if !t.sameport(next, dst) {
					return path, badTable(node, to, outport, 0)
				}
				node = next
				break // the switch's own port
			}
		} else {
			// A CA or router: only the source may be one; step back to
			// the switch the route came from, or out of the source's port.
			outport = node.portNum()
			if !t.sameport(node, src) {
				return path, fmt.Errorf("can't continue: reached CA or router port 0x%x, lid %d", uint64(node.ni.PortGUID), node.pi.LID)
			}
			caSrc := false
			var back uint8 // the hop stepped back over
			if len(path.DR) > 1 {
				back = path.DR[len(path.DR)-1]
				path.DR = path.DR[:len(path.DR)-1]
			} else {
				caSrc = true
				if outport != 0 {
					path.DR = append(path.DR, uint8(outport))
				}
			}
			if next, err = t.getNode(path); err != nil {
				return path, fmt.Errorf("can't reach the port at %s: %w", path, err)
			}
			if !caSrc {
				// The port as seen from the CA or router side.
				next.ni.LocalPortNum = back
			}
		}
		if next.isSwitch() {
			var top int
			nextOut, enh, top, err = t.lookup(path, next, to)
			if err != nil {
				return path, err
			}
			if nextOut < 0 || nextOut > int(next.ni.NumPorts) {
				return path, badTable(next, to, nextOut, top)
			}
		}
		if inactive(next, enh) {
			return path, fmt.Errorf("bad out port state found: node %q outport %d state %d", next.desc, outport, next.pi.LinkState)
		}
		node = next
		emit(func() { t.route(outport, node) })
	}
	emit(func() { t.endNode("To", node) })
	return path, nil
}

func badTable(n *traceNode, lid rdma.LID, out, top int) error {
	return fmt.Errorf("bad forwarding table entry found at: node %q lid entry %d is %d (top %d)", n.desc, lid, out, top)
}

// traceLID returns a target's LID, reading PortInfo for a DR path.
func (t *tracer) traceLID(tg endport.Target) (mad.Path, rdma.LID, error) {
	p, err := tg.Path()
	if err != nil {
		return p, 0, err
	}
	if p, err = t.x.Resolve(t.ctx, p); err != nil { // a GUID or GID through the SA
		return p, 0, err
	}
	if !p.IsDR() {
		if p.LID == 0 {
			return p, 0, fmt.Errorf("target %s: no LID to trace to", tg)
		}
		return p, p.LID, nil
	}
	var pi mad.PortInfo
	if err := t.get(p, &pi, 0); err != nil {
		return p, 0, cmdutil.WithContext(err, "resolving the LID of %s", p)
	}
	return p, rdma.LID(pi.LID), nil
}

func (t *tracer) trace(pair [2]endport.Target) error {
	srcPath, srcLID, err := t.traceLID(pair[0])
	if err != nil {
		return err
	}
	dstPath, dstLID, err := t.traceLID(pair[1])
	if err != nil {
		return err
	}
	if srcLID == 0 || dstLID == 0 {
		return cmdutil.UsageErrorf("bad source or destination LID (%d, %d)", srcLID, dstLID)
	}
	if !srcPath.IsDR() {
		// First find a direct route to the source port from here.
		if srcPath, err = t.findRoute(mad.DRPath(0), srcLID, false); err != nil {
			return cmdutil.WithContext(err, "finding a route to the source port")
		}
	}
	if t.o.MLID == 0 {
		_, err = t.findRoute(srcPath, dstLID, true)
		return err
	}
	dst, err := t.getNode(dstPath)
	if err != nil {
		return fmt.Errorf("can't reach the destination port %s: %w", dstPath, err)
	}
	end, err := t.mcastTrace(srcPath, t.o.MLID, dst.ni.PortGUID)
	if err != nil {
		return err
	}
	t.dumpMcast(end)
	return nil
}

func ibtracertRun(o *ibtracertOptions) error {
	names, err := o.Common.LoadNodeMap("ibtracert", o.IO.ErrOut)
	if err != nil {
		return err
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	t := &tracer{o: o, ctx: o.Common.Context(), x: x, brief: o.Brief, names: names, lidRouted: o.Discovery.Mode == "lid"}
	if o.Discover != nil {
		if t.fab, err = o.Discover(); err != nil {
			return cmdutil.WithContext(err, "discovery")
		}
	}
	var traces []traceJSON
	for i, pair := range o.Pairs {
		t.hops = nil
		err := t.trace(pair)
		if !o.Common.JSON {
			if _, werr := o.IO.Out.Write(t.out); werr != nil {
				return werr
			}
			t.out = t.out[:0]
		}
		if err != nil {
			if o.PortsFile != "" {
				return cmdutil.WithContext(err, "pair %d (%s %s)", i+1, pair[0], pair[1])
			}
			return err
		}
		traces = append(traces, traceJSON{Source: pair[0].String(), Destination: pair[1].String(), Hops: t.hops, MLID: o.MLID})
	}
	if o.Common.JSON {
		return cmdutil.WriteJSONDocument(o.IO.Out, struct {
			Traces []traceJSON `json:"traces"`
		}{traces})
	}
	if o.PortsFile != "" {
		_, err = fmt.Fprintf(o.IO.Out, "%d lid/guid pairs processed from %s\n", len(o.Pairs), o.PortsFile)
	}
	return err
}
