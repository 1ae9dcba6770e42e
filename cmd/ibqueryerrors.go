package cmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func init() {
	register(Tool{
		Name:    "ibqueryerrors",
		Summary: "report the ports of the fabric whose error counters are beyond thresholds",
		New:     func(f *Factory) *cobra.Command { return newIbqueryerrorsCmd(f, nil) },
	})
}

// defaultThresholdFile is infiniband-diags' error thresholds file.
const defaultThresholdFile = "/etc/infiniband-diags/error_thresholds"

// allPortsSelect is PortSelect 0xFF: every port of the node at once.
const allPortsSelect = 0xff

// ibqueryerrorsOptions are ibqueryerrors' parsed flags.
type ibqueryerrorsOptions struct {
	IO        IOStreams
	Common    CommonOptions
	Discovery discoveryOptions
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
	Discover   func(from []uint8, hops int) (*subnet.Fabric, error)
	Transactor func() (*mad.Transactor, error)
	// ShareCPUs, when set, is called before the PMA queries; what it
	// returns is called after them (Factory.shareCPUsWithSimulator).
	ShareCPUs func() (restore func())
	names     *nodemap.Map
}

func newIbqueryerrorsCmd(f *Factory, runF func(*ibqueryerrorsOptions) error) *cobra.Command {
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
			if err := o.Common.finish(c); err != nil {
				return err
			}
			if err := o.Discovery.finish(); err != nil {
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
			if o.GUID, o.DR, err = parseNodeSelectors(o.guidArg, o.drArg); err != nil {
				return err
			}
			if o.DR != nil && o.LoadCache != "" {
				return usageErrorf("cannot specify cache and direct route path")
			}
			o.Discover = func(from []uint8, hops int) (*subnet.Fabric, error) {
				if o.LoadCache != "" {
					return loadFabric(o.LoadCache)
				}
				d := o.Discovery
				d.MaxHops = hops
				// Only -r prints what PortInfo says; the rest needs
				// the nodes, their LIDs and the walk's order.
				d.saNoPortInfo = !o.PortConfig
				return f.discoverFabric("ibqueryerrors", &o.Common, &d, from)
			}
			o.Transactor = func() (*mad.Transactor, error) { return f.fabricTransactor(&o.Common, &o.Discovery) }
			o.ShareCPUs = func() func() { return f.shareCPUsWithSimulator(&o.Common) }
			if runF != nil {
				return runF(o)
			}
			return ibqueryerrorsRun(o)
		},
	}
	addCommonFlags(c, &o.Common, flagsLocalPort|flagsMAD|flagsJSON|flagsNodeMap|flagsDryRun)
	addDiscoveryFlags(c, &o.Discovery)
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

// errorCounters are the PortCounters fields ibqueryerrors checks, in
// libibmad's order (IB_PC_ERR_SYM_F to IB_PC_VL15_DROPPED_F without
// CounterSelect2), then PortXmitWait.
var errorCounters = []string{
	"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
	"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
	"PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
}

// pcFieldNames are libibmad's PortCounters field names, IB_PC_FIRST_F to
// IB_PC_LAST_F: what -s may name.
var pcFieldNames = []string{
	"PortSelect", "CounterSelect", "SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter",
	"PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
	"PortXmitConstraintErrors", "PortRcvConstraintErrors", "CounterSelect2", "LocalLinkIntegrityErrors",
	"ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts",
	"PortXmitWait",
}

// thresholdNames are the fields a thresholds file may set
// (IB_PC_EXT_ERR_SYM_F to IB_PC_EXT_XMT_WAIT_F).
var thresholdNames = append(append([]string(nil), errorCounters...), "PortXmitWait")

// suppressedFields returns the PortCounters fields a -s list names; names
// that are not fields are ignored, as infiniband-diags does.
func suppressedFields(list string) []string {
	var out []string
	for _, v := range strings.Split(list, ",") {
		for _, f := range pcFieldNames {
			if v == f {
				out = append(out, f)
			}
		}
	}
	return out
}

// thresholds are the values an error counter must exceed to count.
type thresholds struct {
	values map[string]uint64
	// text is the summary's "Thresholds: [name = v]..." line; "(null)"
	// when there is no file, as infiniband-diags prints it.
	text string
}

// readThresholds reads a thresholds file (set_thresholds): NAME=VALUE
// lines, '#' comments; unknown names are ignored. A missing file means
// thresholds of 0.
func readThresholds(path string) (*thresholds, error) {
	t := &thresholds{values: map[string]uint64{}, text: "(null)"}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return t, nil
	}
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	text := "Thresholds: "
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, val, _ := strings.Cut(line, "=")
		v, err := parseCULong(val)
		if err != nil {
			return nil, usageErrorf("%s: bad threshold line %q: %v", path, line, err)
		}
		for _, f := range thresholdNames {
			if name == f {
				t.values[f] = v
				text += fmt.Sprintf("[%s = %d]", name, v)
			}
		}
	}
	t.text = text
	return t, nil
}

// parseCULong parses a number as strtoul(s, NULL, 0) takes it, leading
// blanks allowed: decimal, 0x hex or 0 octal (the file format is
// infiniband-diags'), trailing text ignored, nothing read being 0.
func parseCULong(s string) (uint64, error) {
	s = strings.TrimLeft(s, " \t")
	base := 10
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base = 8
	}
	end := 0
	for end < len(s) {
		d, err := strconv.ParseUint(s[end:end+1], base, 8)
		if err != nil || d >= uint64(base) {
			break
		}
		end++
	}
	if end == 0 {
		return 0, nil
	}
	return strconv.ParseUint(s[:end], base, 64)
}

// humanReadable is conv_cnt_human_readable: the value scaled by 1024s and
// its unit; data counters count 4-byte words.
func humanReadable(v uint64, data bool) (float32, string) {
	ui := 0
	div := uint64(1)
	for tmp := v / 1024; tmp != 0; tmp /= 1024 {
		ui++
		div *= 1024
	}
	val := float32(v)
	if data {
		val *= 4
		if val/float32(div) > 1024 {
			ui++
			div *= 1024
		}
	}
	val /= float32(div)
	units := []string{"", "K", "M", "G", "T", "P", "E"}
	if data {
		units = []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	}
	if ui < len(units) {
		return val, units[ui]
	}
	return val, ""
}

// counterText is " [name == v (x.xxxU)]".
func counterText(name string, v uint64, data bool) string {
	f, unit := humanReadable(v, data)
	return fmt.Sprintf(" [%s == %d (%5.3f%s)]", name, v, f, unit)
}

// queryErrorsSummary counts what ibqueryerrors checked and found.
type queryErrorsSummary struct {
	nodes, badNodes, ports, badPorts, pmaFailures int
}

func ibqueryerrorsRun(o *ibqueryerrorsOptions) error {
	var err error
	if o.names, err = o.Common.loadNodeMap("ibqueryerrors", o.IO.ErrOut); err != nil {
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
		return withContext(err, "discovery")
	}
	partial := reportPartial("ibqueryerrors", fab, o.IO.ErrOut)
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
	x, err := o.Transactor()
	if err != nil {
		return err
	}
	defer x.Close()
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
		if sls, err = x.PathSLs(o.Common.context(), dest, halfWorldPRTimeout); err != nil {
			return withContext(err, "reading the SL to each destination from the SA (--skip-sl uses SL 0)")
		}
	}

	// Every node is read on its own, as many at once as the window has
	// MADs in flight (each node's queries go one after another); the
	// reports are printed in order. A quarter of the window left the
	// simulator idle between answers: 824 ms against 745 ms on the
	// 4,000-host tree.
	if o.ShareCPUs != nil {
		restore := o.ShareCPUs()
		defer restore()
	}
	reports := make([]*nodeErrors, len(nodes))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, x.Window()))
	ctx := o.Common.context()
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
				ctx, r.plans = withPlanScope(ctx)
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
		w.Write(o.Common.planLog.take(r.plans))
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
		suppressed := append([]string{}, o.Suppressed...)
		doc := map[string]any{
			"ports": found, "nodesChecked": sum.nodes, "badNodes": sum.badNodes, "portsChecked": sum.ports,
			"badPorts": sum.badPorts, "pmaQueryFailures": sum.pmaFailures, "thresholds": th.values, "suppressed": suppressed,
		}
		o.Common.addDryRun(doc)
		if err := writeJSONDocument(w, doc); err != nil {
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
		errs = append(errs, &FindingsError{Summary: fmt.Sprintf("%d ports have errors beyond threshold", sum.badPorts)})
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

// pmaQuerier sends PerfMgt Gets and Sets by LID.
type pmaQuerier struct {
	ctx context.Context
	x   *mad.Transactor
	// sl is the SL to each LID; nil or a missing LID: SL 0.
	sl map[rdma.LID]uint8
}

// path is the route to lid, on its SL.
func (q *pmaQuerier) path(lid rdma.LID) mad.Path {
	p := mad.LIDPath(lid)
	p.SL = q.sl[lid]
	return p
}

// get reads attr with PortSelect port from lid.
func (q *pmaQuerier) get(lid rdma.LID, attr string, port int) ([]byte, error) {
	l := mad.LayoutByName(attr)
	data := make([]byte, 192)
	data[1] = byte(port)
	r, err := q.x.Do(q.ctx, &mad.Request{Path: q.path(lid), Class: mad.ClassPerf, Method: mad.MethodGet, AttrID: l.ID, Name: l.Name, Data: data})
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), r.Data()...), nil
}

// set writes data (PortSelect and the selects in it) to attr at lid.
func (q *pmaQuerier) set(lid rdma.LID, attr string, data []byte) error {
	l := mad.LayoutByName(attr)
	_, err := q.x.Do(q.ctx, &mad.Request{Path: q.path(lid), Class: mad.ClassPerf, Method: mad.MethodSet, AttrID: l.ID, Name: l.Name, Data: data})
	return err
}

// nodeErrors checks one node (print_node) and keeps what it prints.
type nodeErrors struct {
	o      *ibqueryerrorsOptions
	th     *thresholds
	n      *subnet.Node
	q      *pmaQuerier
	out    bytes.Buffer
	warn   bytes.Buffer
	sum    queryErrorsSummary
	header bool
	name   string
	// capMask and capMask2 are the PMA's ClassPortInfo capability masks.
	capMask  uint16
	capMask2 uint32
	// found are the ports reported, for --json.
	found []portErrorsJSON
	// plans are the resets a --dry-run check did not send.
	plans *planScope
}

// portErrorsJSON is one reported port in --json: its counters beyond
// threshold (or, with --counters, its data counters).
type portErrorsJSON struct {
	NodeGUID    string            `json:"nodeGUID"`
	PortGUID    string            `json:"portGUID"`
	Description string            `json:"description"`
	Port        string            `json:"port"` // a number, or "ALL"
	Counters    map[string]uint64 `json:"counters"`
}

// record keeps a reported port for --json.
func (r *nodeErrors) record(num int, counters map[string]uint64) {
	port := "ALL"
	guid := r.n.Info.PortGUID
	if num != allPortsSelect {
		port = strconv.Itoa(num)
		if p := r.n.Port(num); p != nil {
			guid = p.GUID
		}
	}
	r.found = append(r.found, portErrorsJSON{NodeGUID: r.n.GUID.String(), PortGUID: guid.String(), Description: r.name, Port: port, Counters: counters})
}

func (r *nodeErrors) warnf(format string, a ...any) {
	fmt.Fprintf(&r.warn, "ibqueryerrors: warning: "+format+"\n", a...)
}

// lidOf is the LID the node's port num is asked at: the switch's, or the
// CA port's own.
func (r *nodeErrors) lidOf(num int) rdma.LID {
	if r.n.Type == mad.NodeTypeSwitch {
		return r.n.SMALID
	}
	return r.n.Ports[num].BaseLID
}

func (r *nodeErrors) check() {
	n := r.n
	r.name = r.o.names.Name(uint64(n.GUID), n.Desc)
	start := 1
	if n.Type == mad.NodeTypeSwitch && n.EnhancedPort0 {
		start = 0
	}
	// The PMA's capabilities, asked at the switch or the first port.
	capPort := r.firstPort()
	allPorts := false
	lid := r.lidOf(capPort)
	if cpi, err := r.q.get(lid, "ClassPortInfo", capPort); err != nil {
		r.warnf("ClassPortInfo query failed on %s, Lid %d port %d: %v", r.name, lid, capPort, err)
		r.sum.pmaFailures++
	} else {
		r.capMask, r.capMask2 = pmaCapMasks(cpi)
		allPorts = r.capMask&pmAllPortSelect != 0
	}
	if r.o.CountersOnly {
		for num := start; num <= n.NumPorts; num++ {
			if n.Ports[num] == nil {
				continue
			}
			r.dataCounters(num)
			r.sum.ports++
			if !allPorts {
				r.clear(num)
			}
		}
	} else {
		skip := allPorts && !r.errors(allPortsSelect)
		if skip {
			r.sum.ports += n.NumPorts
		} else {
			for num := start; num <= n.NumPorts; num++ {
				if n.Ports[num] == nil {
					continue
				}
				r.errors(num)
				r.sum.ports++
				if !allPorts {
					r.clear(num)
				}
			}
		}
	}
	r.sum.nodes++
	if allPorts {
		r.clear(allPortsSelect)
	}
}

// portLID is the LID port num (or every port) is asked at.
func (r *nodeErrors) portLID(num int) rdma.LID {
	if num == allPortsSelect {
		return r.lidOf(r.firstPort())
	}
	return r.lidOf(num)
}

// firstPort is the port the node's LID comes from: 0 for a switch, the
// lowest known port of a CA.
func (r *nodeErrors) firstPort() int {
	if r.n.Type == mad.NodeTypeSwitch {
		return 0
	}
	for num := 1; num <= r.n.NumPorts; num++ {
		if r.n.Ports[num] != nil {
			return num
		}
	}
	return 0
}

func (r *nodeErrors) suppressed(name string) bool {
	for _, s := range r.o.Suppressed {
		if s == name {
			return true
		}
	}
	return false
}

// errors reads and reports one port's (or every port's) error counters
// (print_errors and print_results); it reports whether it found any.
func (r *nodeErrors) errors(num int) bool {
	lid := r.portLID(num)
	pc, err := r.q.get(lid, "PortCounters", num)
	if err != nil {
		r.warnf("PortCounters query failed on %s, Lid %d port %d: %v", r.name, lid, num, err)
		r.sum.pmaFailures++
		return false
	}
	var pce []byte
	if r.capMask&(pmExtWidth|pmExtWidthNoIETF) != 0 {
		if pce, err = r.q.get(lid, "PortCountersExtended", num); err != nil {
			r.warnf("PortCountersExtended query failed on %s, Lid %d port %d: %v", r.name, lid, num, err)
			r.sum.pmaFailures++
			return false
		}
	}
	pcl, pcel := mad.LayoutByName("PortCounters"), mad.LayoutByName("PortCountersExtended")
	if r.capMask&pmXmitWait == 0 {
		f, _ := pcl.Field("PortXmitWait")
		f.SetValue(pc, 0)
	}
	var text strings.Builder
	counters := map[string]uint64{}
	check := func(name string) bool {
		if r.capMask2&pm2AddlPortCounters != 0 && pce != nil {
			f, _ := pcel.Field(name)
			if v := f.Value(pce); v > r.th.values[name] {
				text.WriteString(counterText(name, v, false))
				counters[name] = v
				return true
			}
			return false
		}
		f, _ := pcl.Field(name)
		if v := f.Value(pc); v > r.th.values[name] {
			fmt.Fprintf(&text, " [%s == %d]", name, uint32(v))
			counters[name] = uint64(uint32(v))
			return true
		}
		return false
	}
	for _, name := range errorCounters {
		if r.suppressed(name) || !check(name) || !r.o.Details {
			continue
		}
		// infiniband-diags reads the details attribute and decodes it
		// with the other attribute's fields (its field ranges are
		// swapped); ibtool does the same so the output matches.
		switch name {
		case "PortXmitDiscards":
			text.WriteString(r.details(lid, num, "PortXmitDiscardDetails", "PortRcvErrorDetails", counters))
		case "PortRcvErrors":
			text.WriteString(r.details(lid, num, "PortRcvErrorDetails", "PortXmitDiscardDetails", counters))
		}
	}
	if !r.suppressed("PortXmitWait") {
		check("PortXmitWait")
	}
	if text.Len() == 0 {
		return false
	}
	if r.o.Data {
		data, l := pc, pcl
		names := []string{"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"}
		if pce != nil {
			data, l = pce, pcel
			if r.capMask&pmExtWidth != 0 {
				names = append(names, "PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts")
			}
		}
		for _, name := range names {
			f, _ := l.Field(name)
			if v := f.Value(data); v != 0 {
				text.WriteString(counterText(name, v, name == "PortXmitData" || name == "PortRcvData"))
				counters[name] = v
			}
		}
	}
	r.nodeHeader("Errors for")
	if num != allPortsSelect || r.n.Type == mad.NodeTypeSwitch {
		r.record(num, counters)
	}
	if num == allPortsSelect {
		if r.n.Type == mad.NodeTypeSwitch {
			fmt.Fprintf(&r.out, "   GUID 0x%x port ALL:%s\n", uint64(r.n.Ports[0].GUID), text.String())
		}
		return true
	}
	fmt.Fprintf(&r.out, "   GUID 0x%x port %d:%s\n", uint64(r.n.Ports[num].GUID), num, text.String())
	if r.o.PortConfig {
		r.portConfig(num)
	}
	r.sum.badPorts++
	return true
}

// nodeHeader prints the node's header once and counts it bad.
func (r *nodeErrors) nodeHeader(what string) {
	if r.header {
		return
	}
	r.header = true
	if r.n.Type == mad.NodeTypeSwitch {
		fmt.Fprintf(&r.out, "%s 0x%x \"%s\"\n", what, uint64(r.n.Ports[0].GUID), r.name)
	} else {
		fmt.Fprintf(&r.out, "%s \"%s\"\n", what, r.name)
	}
	r.sum.badNodes++
}

// details reads attr and lists its non-zero counters as decodeAs's
// fields (query_and_dump).
func (r *nodeErrors) details(lid rdma.LID, num int, attr, decodeAs string, counters map[string]uint64) string {
	data, err := r.q.get(lid, attr, num)
	if err != nil {
		r.warnf("%s query failed on %s, Lid %d port %d: %v", attr, r.name, lid, num, err)
		r.sum.pmaFailures++
		return ""
	}
	var b strings.Builder
	for _, f := range mad.LayoutByName(decodeAs).Fields {
		if f.Name == "PortSelect" || f.Name == "CounterSelect" {
			continue
		}
		if v := f.Value(data); v != 0 {
			fmt.Fprintf(&b, " [%s == %d]", f.Label, uint32(v))
			counters[f.Label] = uint64(uint32(v))
		}
	}
	return b.String()
}

// dataCounters prints one port's data counters (print_data_cnts).
func (r *nodeErrors) dataCounters(num int) {
	lid := r.portLID(num)
	attr := "PortCounters"
	names := []string{"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"}
	if r.capMask&(pmExtWidth|pmExtWidthNoIETF) != 0 {
		attr = "PortCountersExtended"
		if r.capMask&pmExtWidth != 0 {
			names = append(names, "PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts")
		}
	}
	data, err := r.q.get(lid, attr, num)
	if err != nil {
		r.warnf("%s query failed on %s, Lid %d port %d: %v", attr, r.name, lid, num, err)
		r.sum.pmaFailures++
		return
	}
	if !r.header {
		fmt.Fprintf(&r.out, "Data Counters for 0x%x \"%s\"\n", uint64(r.n.GUID), r.name)
		r.header = true
	}
	if num == allPortsSelect {
		fmt.Fprintf(&r.out, "   GUID 0x%x port ALL:", uint64(r.n.GUID))
	} else {
		fmt.Fprintf(&r.out, "   GUID 0x%x port %d:", uint64(r.n.GUID), num)
	}
	l := mad.LayoutByName(attr)
	counters := map[string]uint64{}
	for _, name := range names {
		f, _ := l.Field(name)
		r.out.WriteString(counterText(name, f.Value(data), name == "PortXmitData" || name == "PortRcvData"))
		counters[name] = f.Value(data)
	}
	r.record(num, counters)
	r.out.WriteByte('\n')
	if num != allPortsSelect && r.o.PortConfig {
		r.portConfig(num)
	}
}

// clear resets the counters -k and -K ask for (clear_port).
func (r *nodeErrors) clear(num int) {
	lid := r.portLID(num)
	var mask uint32
	if r.o.ClearErrors {
		mask |= 0xfff
		if r.capMask&pmXmitWait != 0 {
			mask |= 0x10000
		}
	}
	if r.o.ClearCounts {
		mask |= 0xf000
	}
	reset := func(attr string, mask uint32) error {
		data := make([]byte, 192)
		data[1] = byte(num)
		setResetMask(data, attr, mask)
		return r.q.set(lid, attr, data)
	}
	if mask != 0 {
		if err := reset("PortCounters", mask); err != nil {
			fmt.Fprintf(&r.warn, "ibqueryerrors: failed to reset errors %s port %d: %v\n", r.name, num, err)
		}
	}
	if r.o.ClearErrors && r.o.Details {
		_ = reset("PortXmitDiscardDetails", 0xf)
		_ = reset("PortRcvErrorDetails", 0x3f)
	}
	if r.capMask&(pmExtWidth|pmExtWidthNoIETF) != 0 {
		mask = 0
		if r.o.ClearCounts {
			mask = 0x0f
			if r.capMask&pmExtWidth != 0 {
				mask = 0xff
			}
		}
		if r.o.ClearErrors && r.capMask2&pm2AddlPortCounters != 0 {
			mask |= 0xfff0000
			if r.capMask&pmXmitWait != 0 {
				mask |= 1 << 28
			}
		}
		if mask != 0 {
			if err := reset("PortCountersExtended", mask); err != nil {
				fmt.Fprintf(&r.warn, "ibqueryerrors: failed to reset extended data counters %s, Lid %d port %d: %v\n", r.name, lid, num, err)
			}
		}
	}
}

// portConfig prints the port's link line (print_port_config): iblinkinfo's
// port line with "Link info:" before it, no space between the LID and the
// port, and the far end's GUID.
func (r *nodeErrors) portConfig(num int) {
	p := r.n.Port(num)
	if p == nil {
		return
	}
	l := &linkPrinter{o: &iblinkinfoOptions{names: r.o.names}}
	lid := p.BaseLID
	if r.n.Type == mad.NodeTypeSwitch {
		lid = r.n.SMALID
	}
	b := appendInt([]byte("       Link info: "), int(lid), 6)
	b = append(appendPortNum(b, p), " =="...)
	b = append(l.appendLink(b, p), "==>  "...)
	if p.Remote != nil {
		b = l.appendPeer(b, p, true)
	} else {
		b = append(b, noPeerText...)
	}
	r.out.Write(b)
}
