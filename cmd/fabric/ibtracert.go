package fabric

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/route"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibtracert",
		Summary: "trace the unicast or multicast route between two ports through the forwarding tables",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbtracertCmd(f, nil) },
	})
}

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

// tracer renders the routes pkg/route traces for one run.
type tracer struct {
	o     *ibtracertOptions
	ctx   context.Context
	x     *madrpc.Transactor
	rt    *route.Tracer
	out   []byte
	hops  []traceHop
	brief bool
	names *nodemap.Map
}

// newTracer returns the run's tracer: python-rdma's --discovery lid reads
// a switch's SwitchInfo and LFT by its LID once known, and the --cache
// fabric answers for the nodes it has (ibtracert_discovery.go).
func newTracer(o *ibtracertOptions, x *madrpc.Transactor, names *nodemap.Map, fab *subnet.Fabric) *tracer {
	t := &tracer{o: o, ctx: o.Common.Context(), x: x, brief: o.Brief, names: names}
	t.rt = &route.Tracer{X: x, Force: o.Force, LIDRouted: o.Discovery.Mode == "lid", Fabric: fab,
		Warn: func(err error) { fmt.Fprintf(o.IO.ErrOut, "ibtracert: warning: %v\n", err) }}
	return t
}

// desc is the node's description, or its name in the node name map.
func (t *tracer) desc(n *route.Node) string { return t.names.Name(uint64(n.Info.NodeGUID), n.Desc) }

// hop is a trace line's --json form.
func (t *tracer) hop(n *route.Node, kind string, port int) traceHop {
	return traceHop{Kind: kind, NodeType: typeName(n), Port: port, LID: n.PortInfo.LID, NodeDescription: t.desc(n)}
}

// traceNodeTypes are the node types' names as ibtracert prints them.
var traceNodeTypes = []string{"???", "ca", "switch", "router", "iwarp rnic"}

// typeName is the node's type as ibtracert prints it.
func typeName(n *route.Node) string {
	if t := int(n.Info.NodeType); t < len(traceNodeTypes) {
		return traceNodeTypes[t]
	}
	return "???"
}

// lidRange formats a port's LIDs as "2-2".
func lidRange(pi *mad.PortInfo) string {
	return fmt.Sprintf("%d-%d", pi.LID, int(pi.LID)+(1<<pi.LMC)-1)
}

func (t *tracer) endNode(prompt string, n *route.Node) {
	port := n.Port()
	if n.IsSwitch() {
		port = 0
	}
	if t.brief {
		t.out = fmt.Appendf(t.out, "%s {0x%016x}[%d]\n", prompt, uint64(n.Info.NodeGUID), port)
	} else {
		t.out = fmt.Appendf(t.out, "%s %s {0x%016x} portnum %d lid %s \"%s\"\n", prompt, typeName(n), uint64(n.Info.NodeGUID), port, lidRange(&n.PortInfo), t.desc(n))
	}
	h := t.hop(n, strings.ToLower(prompt), port)
	h.NodeGUID = &n.Info.NodeGUID
	t.hops = append(t.hops, h)
}

func (t *tracer) route(outport int, n *route.Node) {
	if t.brief {
		t.out = fmt.Appendf(t.out, "[%d] -> {0x%016x}[%d]\n", outport, uint64(n.Info.PortGUID), n.Port())
	} else {
		t.out = fmt.Appendf(t.out, "[%d] -> %s port {0x%016x}[%d] lid %s \"%s\"\n", outport, typeName(n), uint64(n.Info.PortGUID), n.Port(), lidRange(&n.PortInfo), t.desc(n))
	}
	h := t.hop(n, "hop", n.Port())
	h.OutPort, h.PortGUID = &outport, &n.Info.PortGUID
	t.hops = append(t.hops, h)
}

// findRoute traces from "from" (a DR path) to the port with LID to
// (route.Tracer.Unicast), printing what it found when dump, and returns
// the DR path it ends on.
func (t *tracer) findRoute(from mad.Path, to rdma.LID, dump bool) (mad.Path, error) {
	tr, err := t.rt.Unicast(t.ctx, from, to)
	if tr == nil {
		return from, err
	}
	if dump {
		t.endNode("From", tr.From)
		for i := range tr.Hops {
			t.route(tr.Hops[i].OutPort, &tr.Hops[i].Node)
		}
		if tr.To != nil {
			t.endNode("To", tr.To)
		}
	}
	return tr.Path, err
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
	if _, err := madrpc.NewQuerier(t.x, p).Get(t.ctx, &pi, 0); err != nil {
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
	dst, err := t.rt.Node(t.ctx, dstPath)
	if err != nil {
		return fmt.Errorf("can't reach the destination port %s: %w", dstPath, err)
	}
	mt, err := t.rt.Multicast(t.ctx, srcPath, t.o.MLID, dst.Info.PortGUID)
	t.dumpMcast(mt)
	return err
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
	var fab *subnet.Fabric
	if o.Discover != nil {
		if fab, err = o.Discover(); err != nil {
			return cmdutil.WithContext(err, "discovery")
		}
	}
	t := newTracer(o, x, names, fab)
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
