package perf

import (
	"bufio"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibqueryerrors",
		Summary: "report the ports of the fabric whose error counters are beyond thresholds",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbqueryerrorsCmd(f, nil) },
	})
}

// ibqueryerrorsOptions are ibqueryerrors' parsed flags.
type ibqueryerrorsOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Discovery cmdutil.DiscoveryOptions
	// Suppressed are the counters -s and -c leave out, in the order given.
	Suppressed []string
	GUID       rdma.GUID // -G/-S
	guidArg    string
	DR         []uint8 // -D
	drArg      string
	SkipSL     bool // --skip-sl
	PortConfig bool // -r
	// ThresholdFile is --threshold-file.
	ThresholdFile string
	Data          bool // --data
	Details       bool // --details
	CountersOnly  bool // --counters
	ClearErrors   bool // -k
	ClearCounts   bool // -K
	LoadCache     string
	// Types are the node types to report (--switch, --ca, --router); all
	// when none is given.
	Types map[mad.NodeType]bool
	// Discover walks the fabric from a directed route with a hop bound;
	// Transactor opens the MAD transport for the counters.
	Discover func(from []uint8, hops int) (*subnet.Fabric, error)
	// ShareCPUs, when set, is called before the PMA queries; what it
	// returns is called after them (Factory.shareCPUsWithSimulator).
	ShareCPUs func() (restore func())
	names     *nodemap.Map
}

func newIbqueryerrorsCmd(f *cmdutil.Factory, runF func(*ibqueryerrorsOptions) error) *cobra.Command {
	o := &ibqueryerrorsOptions{IO: f.IO, ThresholdFile: defaultThresholdFile, Types: map[mad.NodeType]bool{}}
	var suppress []string
	var suppressCommon, switches, cas, routers bool
	c := &cobra.Command{
		Use:   "ibqueryerrors [options]",
		Short: "report the ports of the fabric whose error counters are beyond thresholds",
		Long: `ibqueryerrors discovers the fabric and reads every port's PortCounters (and
PortCountersExtended where supported), printing the error counters beyond
the thresholds of the thresholds file, as infiniband-diags' ibqueryerrors
does. The nodes are read in parallel. It exits 1 when some port has errors.
With --dry-run, -k and -K print the counter resets they would send, each
node's after its report, and send none.`,
		Example: `  ibqueryerrors
  ibqueryerrors -c -r             # leave out PortRcvSwitchRelayErrors; link info
  ibqueryerrors --data --details
  ibqueryerrors -k -K             # clear error and data counters after reading
  ibqueryerrors -k --dry-run      # the resets -k would send, none sent
  ibqueryerrors --counters --switch`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			for _, s := range suppress {
				o.Suppressed = append(o.Suppressed, suppressedFields(s)...)
			}
			if suppressCommon {
				o.Suppressed = append(o.Suppressed, "PortRcvSwitchRelayErrors")
			}
			for t, on := range map[mad.NodeType]bool{mad.NodeTypeSwitch: switches, mad.NodeTypeCA: cas, mad.NodeTypeRouter: routers} {
				if on {
					o.Types[t] = true
				}
			}
			var err error
			if o.GUID, o.DR, err = cmdutil.ParseNodeSelectors(o.guidArg, o.drArg); err != nil {
				return err
			}
			if o.DR != nil && o.LoadCache != "" {
				return cmdutil.UsageErrorf("cannot specify cache and direct route path")
			}
			o.Discover = func(from []uint8, hops int) (*subnet.Fabric, error) {
				if o.LoadCache != "" {
					return cmdutil.LoadFabric(o.LoadCache)
				}
				d := o.Discovery
				d.MaxHops = hops
				// Only -r prints what PortInfo says; the rest needs
				// the nodes, their LIDs and the walk's order.
				d.SANoPortInfo = !o.PortConfig
				return f.DiscoverFabric("ibqueryerrors", &o.Common, &d, from)
			}
			o.ShareCPUs = func() func() { return f.ShareCPUsWithSimulator(&o.Common) }
			if runF != nil {
				return runF(o)
			}
			return ibqueryerrorsRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsNodeMap|cmdutil.FlagsDryRun|cmdutil.FlagsNoSMPortShort)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	fl := c.Flags()
	fl.StringArrayVarP(&suppress, "suppress", "s", nil, "suppress the errors listed (err1,err2,...)")
	fl.BoolVarP(&suppressCommon, "suppress-common", "c", false, "suppress some of the common counters (PortRcvSwitchRelayErrors)")
	fl.StringVarP(&o.guidArg, "port-guid", "G", "", "report the node containing the port with this GUID")
	fl.StringVarP(&o.guidArg, "S", "S", "", "same as -G")
	fl.StringVarP(&o.drArg, "Direct", "D", "", "report the node at this directed route")
	fl.BoolVar(&o.SkipSL, "skip-sl", false, "do not read the SL to every destination from the SA")
	fl.BoolVarP(&o.PortConfig, "report-port", "r", false, "report port link information")
	fl.StringVar(&o.ThresholdFile, "threshold-file", defaultThresholdFile, "error thresholds file")
	fl.BoolP("GNDN", "R", false, "(obsolete; does nothing)")
	fl.BoolVar(&o.Data, "data", false, "include data counters for ports with errors")
	fl.BoolVar(&switches, "switch", false, "print data for switches only")
	fl.BoolVar(&cas, "ca", false, "print data for CAs only")
	fl.BoolVar(&routers, "router", false, "print data for routers only")
	fl.BoolVar(&o.Details, "details", false, "include transmit discard and receive error details")
	fl.BoolVar(&o.CountersOnly, "counters", false, "print data counters only")
	fl.BoolVarP(&o.ClearErrors, "clear-errors", "k", false, "clear error counters after reading")
	fl.BoolVarP(&o.ClearCounts, "clear-counts", "K", false, "clear data counters after reading")
	fl.StringVar(&o.LoadCache, "load-cache", "", "read the fabric from this cache file instead of discovering")
	return c
}

// queryErrorsJSON is ibqueryerrors' --json document; its fields are in
// the order of their keys.
type queryErrorsJSON struct {
	BadNodes         int               `json:"badNodes"`
	BadPorts         int               `json:"badPorts"`
	DryRun           []*madrpc.Plan    `json:"dryRun,omitzero"`
	NodesChecked     int               `json:"nodesChecked"`
	PMAQueryFailures int               `json:"pmaQueryFailures"`
	Ports            []portErrorsJSON  `json:"ports"`
	PortsChecked     int               `json:"portsChecked"`
	Suppressed       []string          `json:"suppressed"`
	Thresholds       map[string]uint64 `json:"thresholds"`
}

// queryErrorsSummary counts what ibqueryerrors checked and found.
type queryErrorsSummary struct {
	nodes, badNodes, ports, badPorts, pmaFailures int
}

func ibqueryerrorsRun(o *ibqueryerrorsOptions) error {
	var err error
	if o.names, err = o.Common.LoadNodeMap("ibqueryerrors", o.IO.ErrOut); err != nil {
		return err
	}
	hops := 0
	if o.DR != nil {
		hops = 1
	}
	fab, err := o.Discover(o.DR, hops)
	if err != nil {
		if o.LoadCache != "" {
			return err
		}
		return cmdutil.WithContext(err, "discovery")
	}
	partial := cmdutil.ReportPartial("ibqueryerrors", fab, o.IO.ErrOut)
	th, err := readThresholds(o.ThresholdFile)
	if err != nil {
		return err
	}
	var nodes []*subnet.Node
	switch {
	case o.GUID != 0:
		p := fab.PortByGUID(o.GUID)
		if p == nil {
			return fmt.Errorf("no port with GUID %s in the fabric", o.GUID)
		}
		nodes = []*subnet.Node{p.Node}
	case o.DR != nil:
		nodes = []*subnet.Node{fab.From}
	default:
		nodes = fab.All()
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	var sls map[rdma.LID]uint8
	if !o.SkipSL {
		// The SL to each destination from the SA's PathRecords, as
		// infiniband-diags reads them: to the -G port, to the node at the
		// -D path, or to every port.
		var dest rdma.GUID
		switch {
		case o.GUID != 0:
			dest = o.GUID
		case o.DR != nil:
			dest = fab.From.Info.PortGUID
		}
		if sls, err = x.PathSLs(o.Common.Context(), dest, halfWorldPRTimeout); err != nil {
			return cmdutil.WithContext(err, "reading the SL to each destination from the SA (--skip-sl uses SL 0)")
		}
	}

	// Every node is read on its own, as many at once as the window has
	// MADs in flight (each node's queries go one after another), so the
	// window is kept full; the reports are printed in order.
	if o.ShareCPUs != nil {
		restore := o.ShareCPUs()
		defer restore()
	}
	reports := make([]*nodeErrors, len(nodes))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, x.Window()))
	ctx := o.Common.Context()
	for i, n := range nodes {
		if len(o.Types) > 0 && !o.Types[n.Type] {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := &nodeErrors{o: o, th: th, n: n}
			ctx := ctx
			if o.Common.DryRun {
				// The nodes' resets are planned at once: each waits
				// for the node's report to be printed.
				ctx, r.plans = cmdutil.WithPlanScope(ctx)
			}
			r.q = &pmaQuerier{ctx: ctx, x: x, sl: sls}
			r.check()
			reports[i] = r
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		// Interrupted, or the transport failed: what the queries
		// found is not the fabric's state, and nothing is reported.
		return err
	}

	var sum queryErrorsSummary
	found := []portErrorsJSON{}
	w := bufio.NewWriter(o.IO.Out)
	for _, r := range reports {
		if r == nil {
			continue
		}
		found = append(found, r.found...)
		if !o.Common.JSON {
			w.Write(r.out.Bytes())
		}
		// A dry run's resets follow the node's report (kept for the
		// document with --json), in the report's order.
		w.Write(o.Common.PlanLog.Take(r.plans))
		if r.warn.Len() > 0 {
			o.IO.ErrOut.Write(r.warn.Bytes())
		}
		sum.nodes += r.sum.nodes
		sum.badNodes += r.sum.badNodes
		sum.ports += r.sum.ports
		sum.badPorts += r.sum.badPorts
		sum.pmaFailures += r.sum.pmaFailures
	}
	if o.Common.JSON {
		doc := queryErrorsJSON{
			BadNodes: sum.badNodes, BadPorts: sum.badPorts, DryRun: o.Common.DryRunPlans(), NodesChecked: sum.nodes,
			PMAQueryFailures: sum.pmaFailures, Ports: found, PortsChecked: sum.ports,
			Suppressed: append([]string{}, o.Suppressed...), Thresholds: th.values,
		}
		if err := cmdutil.WriteJSONDocument(w, doc); err != nil {
			return err
		}
	} else {
		writeErrorsSummary(w, sum, th, o.Suppressed)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	var errs []error
	if partial != nil {
		errs = append(errs, partial)
	}
	if sum.pmaFailures > 0 {
		// Ports not read are ports not checked: the report is
		// partial, whatever the rest found (infiniband-diags exits 0).
		errs = append(errs, fmt.Errorf("%d PMA queries failed; the report is partial", sum.pmaFailures))
	}
	if sum.badPorts > 0 {
		errs = append(errs, &cmdutil.FindingsError{Summary: fmt.Sprintf("%d ports have errors beyond threshold", sum.badPorts)})
	}
	return errors.Join(errs...)
}

// writeErrorsSummary prints the report's summary (print_summary).
func writeErrorsSummary(w *bufio.Writer, sum queryErrorsSummary, th *thresholds, suppressed []string) {
	fmt.Fprintf(w, "\n## Summary: %d nodes checked, %d bad nodes found\n", sum.nodes, sum.badNodes)
	fmt.Fprintf(w, "##          %d ports checked, %d ports have errors beyond threshold\n", sum.ports, sum.badPorts)
	fmt.Fprintf(w, "## %s\n", th.text)
	if sum.pmaFailures > 0 {
		fmt.Fprintf(w, "##          %d PMA query failures\n", sum.pmaFailures)
	}
	w.WriteString("## Suppressed:")
	for _, s := range suppressed {
		w.WriteString(" " + s)
	}
	w.WriteString("\n")
}

// halfWorldPRTimeout is how long ibqueryerrors waits for the SA's
// PathRecords to every port (infiniband-diags' DEFAULT_HALF_WORLD_PR_TIMEOUT).
const halfWorldPRTimeout = 3 * time.Second
