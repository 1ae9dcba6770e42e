package fabric

import (
	"bufio"
	"fmt"
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
		Name:    "iblinkinfo",
		Summary: "report the state of every link of the fabric",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIblinkinfoCmd(f, nil) },
	})
}

// iblinkinfoOptions are iblinkinfo's parsed flags.
type iblinkinfoOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Discovery cmdutil.DiscoveryOptions
	// GUID is -S/-G: print the node with this port GUID.
	GUID    rdma.GUID
	guidArg string
	// DR is -D: scan from this directed route and print the node there.
	DR    []uint8
	drArg string
	// LID is -L/--Lid (python-rdma's): print the node with a port of
	// this LID.
	LID    rdma.LID
	lidArg string
	// Hops is -n: hops to scan beyond the -D node (0: 1 with -D, else
	// no bound).
	Hops     int
	All      bool // -a
	DownOnly bool // -d
	// UpOnly is python-rdma's --up: leave out the ports whose physical
	// state is Polling (no cable, or a far end not answering).
	UpOnly bool
	// PortGUIDs is python-rdma's -g: port GUIDs rather than node GUIDs,
	// which infiniband-diags' lines show anyway.
	PortGUIDs  bool
	Line       bool // -l
	Additional bool // -p
	// Only is --switches-only or --cas-only; 0 for every type.
	Only mad.NodeType
	// LoadCache reads the fabric from a cache file instead of
	// discovering; Diff prints what changed since a cached fabric,
	// DiffCheck what to compare; FilterDownPorts hides the ports that
	// are down in that cached fabric too.
	LoadCache, Diff, FilterDownPorts string
	DiffCheck                        cmdutil.DiffFlags
	diffCheckArg                     string
	// Discover walks the fabric from a directed route (nil: the local
	// port) with the hop bound.
	Discover func(from []uint8, hops int) (*subnet.Fabric, error)
	names    *nodemap.Map
}

func newIblinkinfoCmd(f *cmdutil.Factory, runF func(*iblinkinfoOptions) error) *cobra.Command {
	o := &iblinkinfoOptions{IO: f.IO}
	var switchesOnly, casOnly bool
	c := &cobra.Command{
		Use:   "iblinkinfo [options]",
		Short: "report the state of every link of the fabric",
		Long: `iblinkinfo discovers the fabric and prints every port of every node: its LID,
width, speed, state and physical state, the port at the other end, and what
the link could run at when both ends support more, as infiniband-diags'
iblinkinfo does.`,
		Example: `  iblinkinfo                      # every link
  iblinkinfo -d                   # down ports only
  iblinkinfo -l                   # one line per port
  iblinkinfo --switches-only
  iblinkinfo -D 0,1               # the switch one hop away
  iblinkinfo -S 0x0002c90300a1b2c4`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			if switchesOnly && casOnly {
				return cmdutil.UsageErrorf("--switches-only and --cas-only: give one")
			}
			if switchesOnly {
				o.Only = mad.NodeTypeSwitch
			} else if casOnly {
				o.Only = mad.NodeTypeCA
			}
			var err error
			if o.GUID, o.DR, err = cmdutil.ParseNodeSelectors(o.guidArg, o.drArg); err != nil {
				return err
			}
			if o.DR != nil && o.GUID != 0 {
				return cmdutil.UsageErrorf("-D and -S name the node to print; give one")
			}
			if err := o.parseLID(); err != nil {
				return err
			}
			if o.Hops < 0 {
				return cmdutil.UsageErrorf("invalid hops %d", o.Hops)
			}
			if o.DR != nil && o.LoadCache != "" {
				return cmdutil.UsageErrorf("cannot specify cache and direct route path")
			}
			o.DiffCheck = cmdutil.DiffPort | cmdutil.DiffState
			if c.Flags().Changed("diffcheck") {
				d, err := cmdutil.ParseDiffCheck(o.diffCheckArg, iblinkinfoDiffKeys)
				if err != nil {
					return err
				}
				o.DiffCheck = d
			}
			o.Discover = func(from []uint8, hops int) (*subnet.Fabric, error) {
				if o.LoadCache != "" {
					return cmdutil.LoadFabric(o.LoadCache)
				}
				d := o.Discovery
				d.MaxHops = hops
				return f.DiscoverFabric("iblinkinfo", &o.Common, &d, from)
			}
			if runF != nil {
				return runF(o)
			}
			return iblinkinfoRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsNodeMap|cmdutil.FlagsNoDebugShort)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	fl := c.Flags()
	fl.StringVarP(&o.guidArg, "switch", "S", "", "print the node with this port GUID")
	fl.StringVarP(&o.guidArg, "port-guid", "G", "", "(same as -S)")
	fl.StringVarP(&o.drArg, "Direct", "D", "", "scan from this directed route and print the node there")
	// python-rdma's -G, --Guid and -L, --Lid assert the kind of its
	// TARGET argument, which follows them: "--Guid 0x..." and "-L 12"
	// read the same here.
	fl.StringVar(&o.guidArg, "Guid", "", "(same as -S; python-rdma's spelling)")
	fl.StringVarP(&o.lidArg, "Lid", "L", "", "print the node with a port of this LID (python-rdma's)")
	fl.IntVarP(&o.Hops, "hops", "n", 0, "hops to scan beyond the -D node (default 1)")
	fl.BoolVarP(&o.All, "all", "a", false, "print every node of a partial scan")
	fl.BoolVarP(&o.DownOnly, "down", "d", false, "print only down links")
	fl.BoolVar(&o.UpOnly, "up", false, "print only links that are not Polling (python-rdma's)")
	fl.BoolVarP(&o.PortGUIDs, "portguids", "g", false, "show port GUIDs, not node GUIDs (python-rdma's; what infiniband-diags' lines show anyway)")
	fl.BoolVarP(&o.Line, "line", "l", false, "print each link on one line")
	fl.BoolVarP(&o.Additional, "additional", "p", false, "print additional port settings (HOQLife, VLStallCount)")
	fl.BoolVar(&switchesOnly, "switches-only", false, "print only switches")
	fl.BoolVar(&casOnly, "cas-only", false, "print only CAs")
	fl.StringVar(&o.LoadCache, "load-cache", "", "read the fabric from this cache file instead of discovering")
	fl.StringVar(&o.Diff, "diff", "", "print what changed since the fabric in this cache file")
	fl.StringVar(&o.diffCheckArg, "diffcheck", "", "what --diff compares: port,state,lid,nodedesc (default port,state)")
	fl.StringVar(&o.FilterDownPorts, "filterdownports", "", "hide ports that are down in this cached fabric too")
	fl.BoolP("R", "R", false, "ignored (infiniband-diags keeps it for old scripts)")
	fl.MarkHidden("R")
	return c
}

func iblinkinfoRun(o *iblinkinfoOptions) error {
	var err error
	if o.names, err = o.Common.LoadNodeMap("iblinkinfo", o.IO.ErrOut); err != nil {
		return err
	}
	var orig, filter *subnet.Fabric
	if o.Diff != "" {
		if orig, err = cmdutil.LoadFabric(o.Diff); err != nil {
			return err
		}
	}
	if o.FilterDownPorts != "" {
		if filter, err = cmdutil.LoadFabric(o.FilterDownPorts); err != nil {
			return err
		}
	}
	hops := o.Hops
	if o.DR != nil && hops == 0 {
		hops = 1
	}
	fab, err := o.Discover(o.DR, hops)
	if err != nil {
		if o.LoadCache != "" {
			return err
		}
		return cmdutil.WithContext(err, "discovery")
	}
	partial := cmdutil.ReportPartial("iblinkinfo", fab, o.IO.ErrOut)
	var nodes []*subnet.Node
	one := false // a single node named by -S or -D
	switch {
	case !o.All && o.GUID != 0:
		p := fab.PortByGUID(o.GUID)
		if p == nil {
			return fmt.Errorf("no port with GUID %s in the fabric", o.GUID)
		}
		if o.Only == 0 || p.Node.Type == o.Only {
			nodes = []*subnet.Node{p.Node}
		}
		one = true
	case !o.All && o.LID != 0:
		p := fab.PortByLID(o.LID)
		if p == nil {
			return fmt.Errorf("no port with LID %d in the fabric", o.LID)
		}
		if o.Only == 0 || p.Node.Type == o.Only {
			nodes = []*subnet.Node{p.Node}
		}
		one = true
	case !o.All && o.DR != nil:
		if o.Only == 0 || fab.From.Type == o.Only {
			nodes = []*subnet.Node{fab.From}
		}
		one = true
	case o.Only != 0:
		nodes = fab.ByType(o.Only)
	default:
		nodes = fab.All()
	}
	if o.Common.JSON {
		if err := cmdutil.WriteJSONDocument(o.IO.Out, linkInfoJSON(nodes, o)); err != nil {
			return err
		}
		return partial
	}
	w := cmdutil.NewTableWriter(o.IO.Out)
	l := &linkPrinter{w: w, o: o, filter: filter}
	if orig != nil {
		l.diff(orig, fab, nodes, one)
	} else {
		for _, n := range nodes {
			l.node(n, "")
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return partial
}

// linkPrinter prints nodes as iblinkinfo.c's print_node does.
type linkPrinter struct {
	w *bufio.Writer
	o *iblinkinfoOptions
	// filter, when set, hides the ports down in it and here.
	filter *subnet.Fabric
	buf    []byte // the line being built
}

func (l *linkPrinter) name(n *subnet.Node) string { return l.o.names.Name(uint64(n.GUID), n.Desc) }

// nodeTypeName is iblinkinfo's nodetype_str.
func nodeTypeName(n *subnet.Node) string {
	if s := n.Type.Abbrev(); s != "" {
		return s
	}
	return "??"
}

// node prints the node's ports (the down ones with -d), its header first.
func (l *linkPrinter) node(n *subnet.Node, prefix string) {
	header := false
	for num := 1; num <= n.NumPorts; num++ {
		p := n.Port(num)
		if p == nil {
			continue
		}
		if !l.o.shows(p) {
			continue
		}
		if !header && !l.o.Line {
			l.header(n, prefix)
		}
		header = true
		l.port(p, prefix)
	}
}

// header prints "Switch: 0x... name:" or "CA: name:".
func (l *linkPrinter) header(n *subnet.Node, prefix string) {
	if n.Type == mad.NodeTypeSwitch {
		guid := n.Info.PortGUID
		if p0 := n.Port(0); p0 != nil {
			guid = p0.GUID
		}
		fmt.Fprintf(l.w, "%sSwitch: 0x%016x %s:\n", prefix, uint64(guid), l.name(n))
		return
	}
	fmt.Fprintf(l.w, "%s%s: %s:\n", prefix, nodeTypeName(n), l.name(n))
}

// shows reports whether -d and --up leave the port in.
func (o *iblinkinfoOptions) shows(p *subnet.Port) bool {
	if o.DownOnly && linkState(p) != mad.PortStateDown {
		return false
	}
	return !o.UpOnly || p.InfoOrZero().PhysLinkState != mad.PhysPortStatePolling
}

// linkState is the port's PortState, 0 when its PortInfo was not read.
func linkState(p *subnet.Port) mad.PortState {
	if p.Info == nil {
		return 0
	}
	return p.Info.LinkState
}

// filtered reports whether --filterdownports hides the port: down here
// and down in the filter fabric (filterdownport_check).
func (l *linkPrinter) filtered(p *subnet.Port) bool {
	if l.filter == nil || linkState(p) != mad.PortStateDown {
		return false
	}
	fn := l.filter.NodeByGUID(p.Node.GUID)
	if fn == nil {
		return false
	}
	fp := fn.Port(p.Num)
	return fp != nil && linkState(fp) == mad.PortStateDown
}

// port prints one port line (print_port).
func (l *linkPrinter) port(p *subnet.Port, prefix string) {
	if l.filtered(p) {
		return
	}
	ll := subnet.LinkLine{Names: l.o.names, OneLine: l.o.Line, Additional: l.o.Additional}
	l.buf = ll.AppendPort(l.buf[:0], p, prefix)
	l.w.Write(l.buf)
}

// linkInfoJSON is the --json document: the nodes printed, each port with
// its state and peer.
func linkInfoJSON(nodes []*subnet.Node, o *iblinkinfoOptions) any {
	type remoteJSON struct {
		NodeGUID    string `json:"nodeGUID"`
		PortGUID    string `json:"portGUID"`
		Port        int    `json:"port"`
		LID         int    `json:"lid"`
		Description string `json:"description"`
	}
	type portJSON struct {
		Port         int         `json:"port"`
		PortGUID     string      `json:"portGUID"`
		LID          int         `json:"lid"`
		LinkWidth    string      `json:"linkWidthActive,omitempty"`
		LinkSpeed    string      `json:"linkSpeedActive,omitempty"`
		State        string      `json:"portState"`
		PhysState    string      `json:"portPhysicalState"`
		CouldBeWidth string      `json:"couldBeWidth,omitempty"`
		CouldBeSpeed string      `json:"couldBeSpeed,omitempty"`
		HOQLife      *uint8      `json:"hoqLife,omitempty"`
		VLStallCount *uint8      `json:"vlStallCount,omitempty"`
		Remote       *remoteJSON `json:"remote,omitempty"`
		NotAvailable bool        `json:"notAvailable,omitempty"`
		ExternalPort int         `json:"externalPort,omitempty"`
	}
	type nodeJSON struct {
		Type        string     `json:"type"`
		NodeGUID    string     `json:"nodeGUID"`
		Description string     `json:"description"`
		LID         int        `json:"lid,omitempty"`
		Ports       []portJSON `json:"ports"`
	}
	out := []nodeJSON{}
	for _, n := range nodes {
		nj := nodeJSON{Type: nodeTypeName(n), NodeGUID: n.GUID.String(), Description: o.names.Name(uint64(n.GUID), n.Desc),
			LID: int(n.SMALID), Ports: []portJSON{}}
		for num := 1; num <= n.NumPorts; num++ {
			p := n.Port(num)
			if p == nil || !o.shows(p) {
				continue
			}
			pi := p.InfoOrZero()
			pj := portJSON{Port: p.Num, PortGUID: p.GUID.String(), LID: int(p.LID()), State: mad.FormatPortState.Text(uint32(pi.LinkState)),
				PhysState: mad.FormatPhysPortState.Text(uint32(pi.PhysLinkState)), ExternalPort: p.ExtNum}
			if pi.LinkState != mad.PortStateDown {
				pj.LinkWidth = mad.FormatLinkWidth.Text(uint32(pi.LinkWidthActive))
				pj.LinkSpeed = p.SpeedText()
				if o.Additional {
					h, v := pi.HOQLife, pi.VLStallCount
					pj.HOQLife, pj.VLStallCount = &h, &v
				}
			}
			if r := p.Remote; r != nil {
				pj.Remote = &remoteJSON{NodeGUID: r.Node.GUID.String(), PortGUID: r.GUID.String(), Port: r.Num, LID: int(r.PeerLID()),
					Description: o.names.Name(uint64(r.Node.GUID), r.Node.Desc)}
				pj.CouldBeWidth, pj.CouldBeSpeed = p.CouldBe()
				pj.CouldBeWidth = strings.TrimPrefix(pj.CouldBeWidth, "Could be ")
				pj.CouldBeSpeed = strings.TrimPrefix(pj.CouldBeSpeed, "Could be ")
			} else if pi.LinkState != mad.PortStateDown {
				pj.NotAvailable = true
			}
			nj.Ports = append(nj.Ports, pj)
		}
		out = append(out, nj)
	}
	return out
}

// parseLID reads -L/--Lid: a unicast LID, not with -S or -D.
func (o *iblinkinfoOptions) parseLID() error {
	if o.lidArg == "" {
		return nil
	}
	t, err := endport.ParseTarget(o.lidArg, endport.LID)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	if o.DR != nil || o.GUID != 0 {
		return cmdutil.UsageErrorf("-L and -S or -D name the node to print; give one")
	}
	o.LID = t.LID
	return nil
}
