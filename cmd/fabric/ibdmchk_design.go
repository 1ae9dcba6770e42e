package fabric

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/routecheck"
)

// ibdmchk's design mode: route a topology file (ibnetdiscover's) as a
// fresh subnet manager would, then run the verification checks on it.

// ibdmchkDesign are the design mode's flags.
type ibdmchkDesign struct {
	// TopoFile is --topo (ibdmchk -t): the topology file; "" is not
	// design mode.
	TopoFile string
	// SMNode is -n/--sm-node: a node GUID, ID or description; "" takes
	// the node the topology file was made from.
	SMNode string
	// SMPort is -p/--sm-port; -1 takes the file's port, or the SM node's
	// first linked port (0 for a switch).
	SMPort int
	// Routing is --routing: minhop or updn; "" takes updn with -u,
	// minhop without (ibdmchk ties the engine to -u).
	Routing string
	// Enhanced is --enh (ibdmchk -e): route with ibdm's enhanced LMC
	// routing, which spreads the LIDs of a port over systems and nodes.
	Enhanced bool

	// rootGUIDs are the roots the routing used, for the Up/Down check.
	rootGUIDs []uint64
	// result is what Design did, for --json.
	result *routecheck.DesignResult
}

func addDesignFlags(c *cobra.Command, d *ibdmchkDesign) {
	fl := c.Flags()
	fl.StringVar(&d.TopoFile, "topo", "", "design mode: route this topology file (ibnetdiscover's) as opensm would, then check it (ibdmchk -t)")
	fl.StringVarP(&d.SMNode, "sm-node", "n", "", "design mode: the SM's node: GUID, ID (S-...) or description (default: the node the file was made from)")
	fl.StringVar(&d.SMNode, "node", "", "design mode: the same as --sm-node (ibdmchk's --node)")
	fl.StringVar(&d.Routing, "routing", "", "design mode: the routing engine, minhop or updn (default: updn with -u, else minhop), whatever check -u picks")
	fl.BoolVar(&d.Enhanced, "enh", false, "design mode: ibdm's enhanced LMC routing, the LIDs of a port spread over systems and nodes (ibdmchk -e)")
	fl.IntVarP(&d.SMPort, "sm-port", "p", -1, "design mode: the SM's port number (default: the file's, else the first linked port; 0 for a switch)")
}

// finishDesign checks the design mode's flags against the others.
func (o *ibdmchkOptions) finishDesign(c *cobra.Command) error {
	if o.Design.TopoFile == "" {
		if c.Flags().Changed("sm-node") || c.Flags().Changed("node") || c.Flags().Changed("sm-port") || c.Flags().Changed("routing") || c.Flags().Changed("enh") {
			return cmdutil.UsageErrorf("--sm-node, --sm-port, --routing and --enh go with --topo")
		}
		return nil
	}
	for _, name := range []string{"subnet", "fdb", "mcfdb", "psl", "slvl", "fabric"} {
		if c.Flags().Changed(name) {
			return cmdutil.UsageErrorf("--%s does not go with --topo: the design mode routes the topology itself", name)
		}
	}
	switch o.Design.Routing {
	case "":
		o.Design.Routing = "minhop"
		if o.UpDown {
			o.Design.Routing = "updn"
		}
	case "minhop", "updn":
	default:
		return cmdutil.UsageErrorf("routing engine %q: want minhop or updn", o.Design.Routing)
	}
	if c.Flags().Changed("sm-port") && (o.Design.SMPort < 0 || o.Design.SMPort > 254) {
		return cmdutil.UsageErrorf("SM port %d is not between 0 and 254", o.Design.SMPort)
	}
	return nil
}

func ibdmchkDesignRun(o *ibdmchkOptions) error {
	d := &o.Design
	out, log := o.outputs()
	defer out.Flush()
	topo, err := readFileWith(d.TopoFile, func(r io.Reader) (*routecheck.Topology, error) { return routecheck.ReadTopology(r, d.TopoFile) })
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	sm, port, err := d.smPort(topo)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	writeDesignHeader(log, o, sm, port)
	opts := routecheck.DesignOptions{LMC: uint8(o.LMC), SMNode: sm.GUID, SMPort: port, Enhanced: d.Enhanced}
	var roots []uint64
	if o.RootsFile != "" {
		if roots, err = readRootNames(o.RootsFile, topo); err != nil {
			out.Flush()
			return &cmdutil.UsageError{Err: err}
		}
	}
	if d.Routing == "updn" {
		opts.Engine, opts.Roots = routecheck.UpDown, roots
	}
	fab, res, err := routecheck.Design(topo, opts)
	if err != nil {
		out.Flush()
		return &cmdutil.UsageError{Err: err}
	}
	d.result = res
	writeDesignResult(log, topo, res, opts.Engine == routecheck.UpDown)
	if o.UpDown {
		// the check's roots: the file's, else those the routing found
		if d.rootGUIDs = roots; len(roots) == 0 && res.Engine == routecheck.UpDown {
			d.rootGUIDs = res.RootGUIDs
		}
	}
	var partial error
	if len(res.Unreached) > 0 {
		partial = &cmdutil.FindingsError{Summary: fmt.Sprintf("%d nodes not reached from the SM port", len(res.Unreached))}
	}
	return checkAndReport(o, fab, out, partial)
}

// smPort resolves the SM's node and port.
func (d *ibdmchkDesign) smPort(topo *routecheck.Topology) (*routecheck.TopoNode, int, error) {
	var sm *routecheck.TopoNode
	if d.SMNode == "" {
		if topo.FromNode == 0 {
			return nil, 0, fmt.Errorf("%s does not say which node it was made from: give the SM node (--sm-node)", d.TopoFile)
		}
		var err error
		if sm, err = topo.Lookup(fmt.Sprintf("0x%x", topo.FromNode)); err != nil {
			return nil, 0, fmt.Errorf("%s: the node it was made from: %w", d.TopoFile, err)
		}
	} else {
		var err error
		if sm, err = topo.Lookup(d.SMNode); err != nil {
			return nil, 0, err
		}
	}
	if d.SMPort >= 0 {
		return sm, d.SMPort, nil
	}
	if sm.Type == routecheck.Switch {
		return sm, 0, nil
	}
	for p := 1; p <= sm.NumPorts; p++ {
		if sm.GUID == topo.FromNode && sm.PortGUIDs[p] == topo.FromPort {
			return sm, p, nil
		}
	}
	for _, l := range topo.Links {
		for _, e := range []routecheck.TopoEnd{l.A, l.B} {
			if e.Node == sm {
				return sm, e.Port, nil
			}
		}
	}
	return nil, 0, fmt.Errorf("the SM node %s has no linked port", sm.ID)
}

// readRootNames reads design mode's roots file: a node a line (a GUID, the
// file's ID or a description), blank lines and # comments skipped.
func readRootNames(path string, topo *routecheck.Topology) ([]uint64, error) {
	return readFileWith(path, func(r io.Reader) ([]uint64, error) {
		var out []uint64
		sc := bufio.NewScanner(r)
		for n := 1; sc.Scan(); n++ {
			name := strings.TrimSpace(sc.Text())
			if name == "" || strings.HasPrefix(name, "#") {
				continue
			}
			node, err := topo.Lookup(name)
			if err != nil {
				return nil, &routecheck.ParseError{File: path, Line: n, Msg: err.Error(), Err: err}
			}
			out = append(out, node.GUID)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		if len(out) == 0 {
			return nil, &routecheck.ParseError{File: path, Msg: "no root nodes", Err: routecheck.ErrNoData}
		}
		return out, nil
	})
}

// writeDesignHeader prints ibdmchk's design mode banner.
func writeDesignHeader(log io.Writer, o *ibdmchkOptions, sm *routecheck.TopoNode, port int) {
	fmt.Fprintln(log, "-------------------------------------------------")
	if o.Common.Verbose > 0 {
		fmt.Fprintln(log, " Verbose Mode")
	}
	fmt.Fprintln(log, "IBDMCHK Cluster Design Mode:")
	fmt.Fprintf(log, " Topology File .. %s\n", o.Design.TopoFile)
	fmt.Fprintf(log, " SM Node ........ %s\n", sm.ID)
	fmt.Fprintf(log, " SM Port ........ %d\n", port)
	fmt.Fprintf(log, " LMC ............ %d\n", o.LMC)
	if o.Design.Enhanced && o.LMC > 0 {
		fmt.Fprintln(log, " Using Enhanced Routing")
	}
	if o.RootsFile != "" && o.Design.Routing == "updn" {
		fmt.Fprintf(log, " Roots File ..... %s\n", o.RootsFile)
	}
}

// writeDesignResult prints what the LID assignment and the routing did.
func writeDesignResult(log io.Writer, topo *routecheck.Topology, res *routecheck.DesignResult, upDown bool) {
	fmt.Fprintf(log, "-I- Read %d nodes and %d links from the topology file\n", len(topo.Nodes), len(topo.Links))
	for _, id := range res.Unreached {
		fmt.Fprintf(log, "-E- Node not reached from the SM port: %s\n", id)
	}
	fmt.Fprintf(log, "-I- Assigned LIDs to %d ports, up to LID %d\n", res.Ports, res.MaxLID)
	for _, g := range res.MissingRoots {
		fmt.Fprintf(log, "-E- Fail to find root switch guid:0x%016x\n", g)
	}
	if upDown {
		if res.NoRoots {
			fmt.Fprintln(log, "-E- Fail to recognize any root nodes. Up/Down is not active!")
		} else {
			fmt.Fprintf(log, "-I- Recognized %d root nodes:\n", len(res.Roots))
			for _, r := range res.Roots {
				fmt.Fprintf(log, " %s\n", r)
			}
			fmt.Fprintf(log, "---------------------------------------------------------------------------\n\n")
		}
	}
	fmt.Fprintf(log, "-I- Routed with %s\n", res.Engine)
	if e := res.Enhanced; e != nil {
		fmt.Fprintln(log, "-I- Using Enhanced OpenSM Routing")
		for _, p := range e.UnusedPorts {
			fmt.Fprintf(log, "-W- Unused port:%s\n", p)
		}
		fmt.Fprintf(log, "-I- Enhanced selection by Sys:%d Node:%d Subscription:%d\n", e.BySystem, e.ByNode, e.BySubscription)
	}
	if res.Unrouted > 0 {
		fmt.Fprintf(log, "-W- %d LFT entries have no route\n", res.Unrouted)
	}
}
