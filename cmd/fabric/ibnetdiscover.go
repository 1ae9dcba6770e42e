package fabric

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibnetdiscover",
		Summary: "discover the fabric and print its topology",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbnetdiscoverCmd(f, nil) },
	})
}

// ibnetdiscoverOptions are ibnetdiscover's parsed flags and arguments.
type ibnetdiscoverOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Discovery cmdutil.DiscoveryOptions
	Full      bool // -f
	Show      bool // -s
	List      []mad.NodeType
	Group     bool // -g
	Ports     bool // -p
	MaxHops   bool // -m
	// TopologyFile is where the topology goes instead of standard output.
	TopologyFile string
	// Cache is --cache: write the fabric there; LoadCache is --load-cache:
	// read the fabric from there instead of discovering; Diff is --diff:
	// print what changed since that cached fabric, DiffCheck what to
	// compare.
	Cache, LoadCache, Diff string
	// Format is --format: "topology" (infiniband-diags') or "dot".
	Format       string
	DiffCheck    cmdutil.DiffFlags
	diffCheckArg string
	// Now is the time the header says the file was generated.
	Now func() time.Time
	// Discover walks the fabric.
	Discover func() (*subnet.Fabric, error)
	names    *nodemap.Map
}

func newIbnetdiscoverCmd(f *cmdutil.Factory, runF func(*ibnetdiscoverOptions) error) *cobra.Command {
	o := &ibnetdiscoverOptions{IO: f.IO, Now: time.Now}
	c := &cobra.Command{
		Use:   "ibnetdiscover [options] [<topology-file>]",
		Short: "discover the fabric and print its topology",
		Long: `ibnetdiscover walks the fabric by directed-route SMPs from the local port and
prints its topology in infiniband-diags' format (which ibsim reads as a net
file), the node lists (-l, -H, -S, -R) or the ports report (-p).

The walk goes one hop level at a time with many SMPs in flight (-o), asks
every node and port once, and lists the nodes in the order infiniband-diags
does. A query that fails after its retries is reported on stderr, the rest
of the fabric is printed, and the exit status is 3.`,
		Example: `  ibnetdiscover                 # the topology
  ibnetdiscover -l              # one line per node
  ibnetdiscover -p              # one line per port
  ibnetdiscover topo.net        # the topology into a file
  ibnetdiscover --json          # nodes, ports and links as JSON`,
		Args: cmdutil.ArgsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			o.Cache = o.Discovery.Cache
			if len(args) == 1 {
				o.TopologyFile = args[0]
			}
			if o.Format != "topology" && o.Format != "dot" {
				return cmdutil.UsageErrorf("invalid --format %q: want topology or dot", o.Format)
			}
			o.DiffCheck = ibnetdiscoverDiffDefault
			if c.Flags().Changed("diffcheck") {
				d, err := cmdutil.ParseDiffCheck(o.diffCheckArg, ibnetdiscoverDiffKeys)
				if err != nil {
					return err
				}
				o.DiffCheck = d
			}
			o.Discover = func() (*subnet.Fabric, error) {
				if o.LoadCache != "" {
					return cmdutil.LoadFabric(o.LoadCache)
				}
				return f.DiscoverFabric("ibnetdiscover", &o.Common, &o.Discovery, nil)
			}
			if runF != nil {
				return runF(o)
			}
			return ibnetdiscoverRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsNodeMap|cmdutil.FlagsNoSMPortShort)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	fl := c.Flags()
	fl.BoolVarP(&o.Full, "full", "f", false, "show full information (ports' speed and width, vlcap)")
	fl.BoolVarP(&o.Show, "show", "s", false, "show more information (each node as the walk reaches it)")
	addNodeListFlag(c, &o.List, "list", "l", "list of connected nodes", mad.NodeTypeCA, mad.NodeTypeSwitch, mad.NodeTypeRouter)
	fl.BoolVarP(&o.Group, "grouping", "g", false, "show grouping (chassis)")
	addNodeListFlag(c, &o.List, "Hca_list", "H", "list of connected CAs", mad.NodeTypeCA)
	addNodeListFlag(c, &o.List, "Switch_list", "S", "list of connected switches", mad.NodeTypeSwitch)
	addNodeListFlag(c, &o.List, "Router_list", "R", "list of connected routers", mad.NodeTypeRouter)
	fl.BoolVarP(&o.Ports, "ports", "p", false, "obtain a ports report")
	fl.BoolVarP(&o.MaxHops, "max_hops", "m", false, "report max hops discovered and the MADs used")
	fl.StringVar(&o.Format, "format", "topology", "topology (infiniband-diags' format) or dot (Graphviz)")
	// infiniband-diags' --cache writes a fresh discovery; the shared
	// flag (python-rdma's) would read the file when it is there.
	o.Discovery.WritesCache = true
	fl.Lookup("cache").Usage = "write the fabric to this cache file (libibnetdisc's format; JSON when it ends in .json)"
	fl.StringVar(&o.LoadCache, "load-cache", "", "read the fabric from this cache file instead of discovering")
	fl.StringVar(&o.Diff, "diff", "", "print what changed since the fabric in this cache file")
	fl.StringVar(&o.diffCheckArg, "diffcheck", "", "what --diff compares: sw,ca,router,port,lid,nodedesc (default sw,ca,router,port)")
	return c
}

// nodeListFlag is one of -l, -H, -S and -R: setting it makes the node
// list show its types. pflag sets flags in command-line order, so the last
// one given wins, as in infiniband-diags.
type nodeListFlag struct {
	dst   *[]mad.NodeType
	types []mad.NodeType
	set   bool
}

func (f *nodeListFlag) String() string { return strconv.FormatBool(f.set) }
func (f *nodeListFlag) Type() string   { return "bool" }
func (f *nodeListFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	f.set = v
	if v {
		*f.dst = f.types
	}
	return nil
}

// addNodeListFlag registers a node list flag.
func addNodeListFlag(c *cobra.Command, dst *[]mad.NodeType, name, short, usage string, types ...mad.NodeType) {
	fl := c.Flags().VarPF(&nodeListFlag{dst: dst, types: types}, name, short, usage)
	fl.NoOptDefVal = "true"
}

func ibnetdiscoverRun(o *ibnetdiscoverOptions) error {
	var err error
	if o.names, err = o.Common.LoadNodeMap("ibnetdiscover", o.IO.ErrOut); err != nil {
		return err
	}
	out := o.IO.Out
	var file *os.File
	if o.TopologyFile != "" {
		if file, err = os.Create(o.TopologyFile); err != nil {
			return fmt.Errorf("can't open file %s for writing: %w", o.TopologyFile, errors.Unwrap(err))
		}
		defer file.Close()
		out = file
	}
	var orig *subnet.Fabric
	if o.Diff != "" {
		if orig, err = cmdutil.LoadFabric(o.Diff); err != nil {
			return err
		}
	}
	fab, err := o.Discover()
	if err != nil {
		if o.LoadCache != "" {
			return err
		}
		return cmdutil.WithContext(err, "discovery")
	}
	partial := cmdutil.ReportPartial("ibnetdiscover", fab, o.IO.ErrOut)
	// finish writes the cache, after the output as infiniband-diags
	// does, and closes the topology file.
	finish := func() error {
		if o.Cache != "" {
			if err := cmdutil.SaveFabric(o.Cache, fab); err != nil {
				return err
			}
		}
		return closeFile(file, partial)
	}
	if o.Common.JSON {
		if err := cmdutil.WriteJSONDocument(out, fabricJSON(fab, o.names)); err != nil {
			return err
		}
		return finish()
	}
	if o.Show {
		// The walk's lines go to standard output, the topology where
		// it is asked for, as in infiniband-diags.
		sw := bufio.NewWriter(o.IO.Out)
		(&subnet.TopologyWriter{W: sw, Fabric: fab}).Visits()
		if err := sw.Flush(); err != nil {
			return err
		}
	}
	w := cmdutil.NewTableWriter(out)
	t := &subnet.TopologyWriter{W: w, Fabric: fab, Names: o.names, Full: o.Full, Group: o.Group}
	switch {
	case o.Ports:
		t.Ports()
	case len(o.List) > 0:
		t.List(o.List)
	case orig != nil:
		t.Diff(orig, topologyDiffCheck(o.DiffCheck))
	case o.Format == "dot":
		t.Dot()
	default:
		if o.Group {
			t.Chassis = fab.GroupChassis()
		}
		t.Header(o.Now(), o.MaxHops)
		t.Dump()
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return finish()
}

// closeFile closes the output file, if any, and returns the first error.
func closeFile(f *os.File, err error) error {
	if f != nil {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

// fabricJSON is the --json document of a fabric.
func fabricJSON(f *subnet.Fabric, names *nodemap.Map) any {
	type remoteJSON struct {
		NodeGUID    string `json:"nodeGUID"`
		PortGUID    string `json:"portGUID"`
		Port        int    `json:"port"`
		Description string `json:"description"`
	}
	type portJSON struct {
		Port            int         `json:"port"`
		PortGUID        string      `json:"portGUID"`
		LID             int         `json:"lid"`
		LMC             int         `json:"lmc"`
		LinkState       int         `json:"linkState"`
		PhysLinkState   int         `json:"physLinkState"`
		LinkWidthActive string      `json:"linkWidthActive"`
		LinkSpeedActive string      `json:"linkSpeedActive"`
		Remote          *remoteJSON `json:"remote,omitempty"`
	}
	type nodeJSON struct {
		Type            string     `json:"type"`
		NodeGUID        string     `json:"nodeGUID"`
		SystemImageGUID string     `json:"systemImageGUID"`
		PortGUID        string     `json:"portGUID"`
		VendorID        uint32     `json:"vendorID"`
		DeviceID        uint16     `json:"deviceID"`
		NumPorts        int        `json:"numPorts"`
		Description     string     `json:"description"`
		LID             int        `json:"lid,omitempty"`
		LMC             int        `json:"lmc,omitempty"`
		EnhancedPort0   bool       `json:"enhancedPort0,omitempty"`
		Path            string     `json:"path"`
		Ports           []portJSON `json:"ports"`
	}
	type doc struct {
		FromNode string     `json:"fromNode"`
		FromPort int        `json:"fromPort"`
		MaxHops  int        `json:"maxHops"`
		MADs     int        `json:"mads"`
		Nodes    []nodeJSON `json:"nodes"`
		Errors   []string   `json:"errors,omitempty"`
	}
	d := doc{FromNode: f.From.GUID.String(), FromPort: f.FromPort, MaxHops: f.MaxHops, MADs: f.MADs, Nodes: []nodeJSON{}}
	for _, typ := range []mad.NodeType{mad.NodeTypeSwitch, mad.NodeTypeCA, mad.NodeTypeRouter} {
		for _, n := range f.ByType(typ) {
			nj := nodeJSON{Type: n.Type.String(), NodeGUID: n.GUID.String(), SystemImageGUID: n.Info.SystemImageGUID.String(),
				PortGUID: n.Info.PortGUID.String(), VendorID: n.Info.VendorID, DeviceID: n.Info.DeviceID, NumPorts: n.NumPorts,
				Description: names.Name(uint64(n.GUID), n.Desc), LID: int(n.SMALID), LMC: int(n.SMALMC),
				EnhancedPort0: n.EnhancedPort0, Path: subnet.FormatPath(n.Path), Ports: []portJSON{}}
			for _, p := range n.Ports {
				if p == nil || (p.Num == 0 && n.Type == mad.NodeTypeSwitch) {
					continue
				}
				pj := portJSON{Port: p.Num, PortGUID: p.GUID.String(), LID: int(p.BaseLID), LMC: int(p.LMC)}
				pj.LinkWidthActive, pj.LinkSpeedActive = subnet.LinkCompat(p)
				if p.Info != nil {
					pj.LinkState, pj.PhysLinkState = int(p.Info.LinkState), int(p.Info.PhysLinkState)
				}
				if r := p.Remote; r != nil {
					pj.Remote = &remoteJSON{NodeGUID: r.Node.GUID.String(), PortGUID: r.GUID.String(), Port: r.Num,
						Description: names.Name(uint64(r.Node.GUID), r.Node.Desc)}
				}
				nj.Ports = append(nj.Ports, pj)
			}
			d.Nodes = append(d.Nodes, nj)
		}
	}
	for _, e := range f.Errors {
		d.Errors = append(d.Errors, e.Error())
	}
	return d
}
