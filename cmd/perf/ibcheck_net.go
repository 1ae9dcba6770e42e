package perf

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/internal/awk"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// The fabric-wide check scripts: ibchecknet, ibcheckerrors, ibcheckstate,
// ibcheckwidth, ibdatacounters, ibclearcounters and ibclearerrors. Each
// reads ibnetdiscover's topology (or a topology file) with awk and runs a
// per-node script for every switch and CA port. ibtool walks a topology
// file's text with the same rules, or a fresh discovery's nodes and ports
// in the order ibnetdiscover prints them, sends every check's queries at
// once, and prints the results in the topology's order.

// netCheckTool describes one fabric-wide script.
type netCheckTool struct {
	name, summary, long string
	// flags are the script's own options: N (-N), v (-v), b (-b); and T,
	// python-rdma's -T of its perf checks (ibcheck_pythresh.go).
	flags string
	// prefetch starts the checks the script makes whatever the results;
	// render walks the topology as the script's awk program does.
	prefetch func(n *netCheck, it topoItem)
	render   func(n *netCheck) int
	// sets says the script changes state (resets counters): it takes
	// --dry-run.
	sets bool
}

var netCheckTools = []netCheckTool{
	{name: "ibchecknet", summary: "check every node, port and port's error counters (deprecated script)", flags: "NvT",
		long:     "ibchecknet checks that every node answers, every port is up, Active and not 1X,\nand every port's error counters are below ibcheckerrs' thresholds. It exits with\nthe number of problems found (at most 255).",
		prefetch: prefetchNet, render: renderChecknet},
	{name: "ibcheckerrors", summary: "check every port's error counters (deprecated script)", flags: "NvbT",
		long:     "ibcheckerrors checks every port's error counters against ibcheckerrs' thresholds.\nLike the script it exits 0 even when ports have errors; the summary counts them.",
		prefetch: prefetchNet, render: renderCheckerrors},
	{name: "ibcheckstate", summary: "check every port's link state (deprecated script)", flags: "Nv",
		long:     "ibcheckstate checks that every port's physical link is up and its logical link\nActive. Like the script it exits 0 when ports are down; the summary counts them.",
		prefetch: prefetchPorts(checkPortState), render: renderPortLoop(checkPortState)},
	{name: "ibcheckwidth", summary: "check that no link runs at 1X (deprecated script)", flags: "Nv",
		long:     "ibcheckwidth checks that no port runs at 1X when it supports more. Like the\nscript it exits 0 when some do; the summary counts them.",
		prefetch: prefetchPorts(checkPortWidth), render: renderPortLoop(checkPortWidth)},
	{name: "ibdatacounters", summary: "print every port's receive data counters (deprecated script)", flags: "NvbT",
		long:     "ibdatacounters prints ibdatacounts' receive data and packet counters of every\nswitch (all ports at once) and every CA port.",
		prefetch: prefetchData, render: renderDatacounters},
	{name: "ibclearcounters", summary: "reset every port's counters (deprecated script)", flags: "N",
		long:     "ibclearcounters resets every port's PortCounters: a switch's all at once, a\nCA's port by port.",
		prefetch: prefetchClear(false), render: renderClear(false), sets: true},
	{name: "ibclearerrors", summary: "reset every port's error counters (deprecated script)", flags: "N",
		long:     "ibclearerrors resets every port's error counters (reset mask 0x0fff): a switch's\nall at once, a CA's port by port.",
		prefetch: prefetchClear(true), render: renderClear(true), sets: true},
}

func init() {
	for _, t := range netCheckTools {
		cmdutil.Register(cmdutil.Tool{Name: t.name, Summary: t.summary, New: func(f *cmdutil.Factory) *cobra.Command { return newNetCheckCmd(f, t, nil) }})
	}
}

// netCheckOptions are a fabric-wide check's parsed flags and arguments.
type netCheckOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Discovery cmdutil.DiscoveryOptions
	Tool      netCheckTool
	Style     scriptStyle
	// TopologyFile is read instead of discovering, when set.
	TopologyFile string
	// ThresholdFile is python-rdma's -T, read into Thresholds (nil
	// without -T: the script's thresholds). Up is python-rdma's --up.
	ThresholdFile string
	Thresholds    map[string]int64
	Up            bool
	// Topology returns the topology as the scripts' lines: read from
	// TopologyFile, or made from a fresh discovery's fabric (with a
	// partial discovery's error).
	Topology func() ([]topoItem, error)
}

func newNetCheckCmd(f *cmdutil.Factory, t netCheckTool, runF func(*netCheckOptions) error) *cobra.Command {
	o := &netCheckOptions{IO: f.IO, Tool: t}
	c := &cobra.Command{
		Use:   t.name + " [options] [<topology-file>]",
		Short: t.summary,
		Long: t.long + `

It prints what infiniband-diags' script of that name prints, from a fresh
discovery or from a topology file ibnetdiscover wrote; the checks of every
node run at once and print in the topology's order. Options with one dash
and a long name (-nocolor, -timeout) are taken as the script takes them.`,
		Example:            fmt.Sprintf("  %s\n  %s topo.net", t.name, t.name),
		DisableFlagParsing: true,
		RunE: scriptRunE(func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			if len(args) > 1 {
				return &cmdutil.UsageError{Err: fmt.Errorf("want at most one topology file, got %q", args), Syntax: true}
			}
			if o.ThresholdFile != "" {
				th, err := loadPyThresholds(o.ThresholdFile)
				if err != nil {
					return err
				}
				o.Thresholds = th
			}
			if len(args) == 1 {
				o.TopologyFile = args[0]
			}
			o.Style.Verbose = o.Common.Verbose > 0 && strings.Contains(t.flags, "v")
			if o.Style.Verbose {
				o.Style.Brief = false
			}
			o.Topology = func() ([]topoItem, error) {
				if o.TopologyFile != "" {
					b, err := os.ReadFile(o.TopologyFile)
					if err != nil {
						return nil, &cmdutil.UsageError{Err: err}
					}
					return topoItems(b), nil
				}
				fab, err := f.DiscoverFabric(t.name, &o.Common, &o.Discovery, nil)
				if err != nil {
					return nil, cmdutil.WithContext(err, "discovery")
				}
				return fabricItems(fab), cmdutil.ReportPartial(t.name, fab, f.IO.ErrOut)
			}
			if runF != nil {
				return runF(o)
			}
			return netCheckRun(o)
		}),
	}
	set := cmdutil.FlagsLocalPort | cmdutil.FlagsMAD | cmdutil.FlagsJSON
	if t.sets {
		set |= cmdutil.FlagsDryRun
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, set)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	fl := c.Flags()
	if strings.Contains(t.flags, "N") {
		fl.BoolVarP(&o.Style.NoColor, "nocolor", "N", false, "no colours")
	}
	if strings.Contains(t.flags, "b") {
		fl.BoolVarP(&o.Style.Brief, "brief", "b", false, "no details before FAILED")
	}
	if strings.Contains(t.flags, "T") {
		fl.StringVarP(&o.ThresholdFile, "thresholds", "T", "", "python-rdma's threshold file of name = value lines: the only thresholds")
	}
	fl.BoolVar(&o.Up, "up", false, "leave out ports whose link is Polling or Disabled (python-rdma's)")
	return c
}

// topoItem is one line of a topology as the scripts' awk sees it: a node
// line, a port line, or another line.
type topoItem struct {
	kind topoKind
	// typ and guid are a node line's type and 16 GUID digits; lid is a
	// switch's port 0 LID or a port line's LID.
	typ, guid, lid string
	port           string // a port line's port as the scripts clean it
	line           string
	// onSwitch says a port line is a switch's (its lid is the switch's).
	onSwitch bool
}

// topoKind is what a topology line is to the scripts.
type topoKind int

const (
	topoOther topoKind = iota
	topoNode
	topoPort
)

// portParens is the scripts' sub("\\(.*\\)", "", port).
var portParens = &cmdutil.LazyRegexp{Expr: `\(.*\)`}

// topoItems splits topology text into the scripts' lines.
func topoItems(text []byte) []topoItem {
	var items []topoItem
	for _, line := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		f := strings.Fields(line) // awk's default FS
		field := func(i int) string {
			if i < len(f) {
				return f[i]
			}
			return ""
		}
		switch {
		case strings.HasPrefix(line, "Ca"), strings.HasPrefix(line, "Switch"), strings.HasPrefix(line, "Rt"):
			it := topoItem{kind: topoNode, typ: field(0), guid: awk.Substr(field(2), 4, 16), line: line}
			if it.typ == "Switch" {
				it.lid = awkLIDAfter(line, "port 0 lid ")
			}
			items = append(items, it)
		case strings.HasPrefix(line, "["):
			port := portParens.Get().ReplaceAllString(field(0), "")
			port = strings.NewReplacer("[", "", "]", "").Replace(port)
			items = append(items, topoItem{kind: topoPort, port: port, lid: awkLIDAfter(line, " lid "), line: line})
		default:
			items = append(items, topoItem{line: line})
		}
	}
	return items
}

// fabricItems are the scripts' lines of the topology ibnetdiscover would
// print of fab, made from its nodes and ports rather than from the text:
// the switches, then the CAs, then the routers, each followed by its
// linked ports. A node line's LID is a switch's port 0 LID; a port
// line's is what the line's first " lid " names: a switch port's far
// end's LID, a CA's or router's own port's base LID.
func fabricItems(fab *subnet.Fabric) []topoItem {
	items := []topoItem{}
	for _, typ := range []mad.NodeType{mad.NodeTypeSwitch, mad.NodeTypeCA, mad.NodeTypeRouter} {
		name := map[mad.NodeType]string{mad.NodeTypeSwitch: "Switch", mad.NodeTypeCA: "Ca", mad.NodeTypeRouter: "Rt"}[typ]
		for _, n := range fab.ByType(typ) {
			it := topoItem{kind: topoNode, typ: name, guid: fmt.Sprintf("%016x", uint64(n.GUID))}
			if typ == mad.NodeTypeSwitch {
				it.lid = strconv.Itoa(int(n.SMALID))
			}
			items = append(items, it)
			for num := 1; num <= n.NumPorts; num++ {
				p := n.Port(num)
				if p == nil || p.Remote == nil {
					continue
				}
				lid := int(p.BaseLID)
				if typ == mad.NodeTypeSwitch {
					lid = int(p.Remote.LID())
				}
				items = append(items, topoItem{kind: topoPort, port: strconv.Itoa(num), lid: strconv.Itoa(lid)})
			}
		}
	}
	return items
}

// awkLIDAfter is the scripts' lid = substr($0, index($0, marker) +
// len(marker)); substr(lid, 1, index(lid, " ") - 1).
func awkLIDAfter(line, marker string) string {
	i := strings.Index(line, marker) + 1 // awk's index: 0 when missing
	rest := awk.Substr(line, i+len(marker), len(line))
	return awk.Substr(rest, 1, strings.Index(rest, " "))
}

// passThrough is the scripts' rules for the tools' own messages in the
// topology: lines starting "ib", and lines with ibpanic:, ibwarn: or
// iberror:.
func passThrough(w *bytes.Buffer, line string) {
	if strings.HasPrefix(line, "ib") {
		w.WriteString(line + "\n")
		return
	}
	for _, m := range []string{"ibpanic:", "ibwarn:", "iberror:"} {
		if strings.Contains(line, m) {
			w.WriteString(line + "\n")
		}
	}
}

// netCheck is one run of a fabric-wide script.
type netCheck struct {
	o     *netCheckOptions
	k     *nodeChecker
	items []topoItem
	out   bytes.Buffer
	// findings are the checks' outcomes in the order printed, for --json.
	findings []checkFinding
	summary  map[string]int
	// results holds each check, run once.
	mu      sync.Mutex
	results map[string]*checkFuture
	sem     chan struct{}
}

// checkFuture is a check started in the background.
type checkFuture struct {
	done chan struct{}
	r    checkResult
}

// start runs check under key in the background unless it already runs.
func (n *netCheck) start(key string, check func() checkResult) *checkFuture {
	n.mu.Lock()
	defer n.mu.Unlock()
	if f := n.results[key]; f != nil {
		return f
	}
	f := &checkFuture{done: make(chan struct{})}
	n.results[key] = f
	go func() {
		n.sem <- struct{}{}
		defer func() { <-n.sem; close(f.done) }()
		f.r = check()
	}()
	return f
}

// run prints the result of the check (starting it if needed) and reports
// whether it passed, as the script's system() call does.
func (n *netCheck) run(key string, check func() checkResult) bool {
	f := n.start(key, check)
	<-f.done
	n.out.Write(f.r.text)
	// A dry run's plans come where the check's output would, in the
	// topology's order.
	n.out.Write(n.o.Common.PlanLog.Take(f.r.plans))
	n.findings = append(n.findings, f.r.finding)
	return f.r.ok
}

// The checks the scripts call, by LID and port.
func (n *netCheck) nodeOK(lid string) bool {
	return n.run("node|"+lid, func() checkResult { return n.k.node(lid) })
}

func (n *netCheck) errsOK(lid, port string) bool {
	return n.run("errs|"+lid+"|"+port, func() checkResult { return n.k.errs(lid, port) })
}

func (n *netCheck) portOK(kind portCheckKind, lid, port string) bool {
	return n.run(string(kind)+"|"+lid+"|"+port, func() checkResult { return n.k.port(kind, lid, port) })
}

func (n *netCheck) dataOK(lid, port string) bool {
	return n.run("data|"+lid+"|"+port, func() checkResult { return n.k.dataCounts(lid, port) })
}

func (n *netCheck) printf(format string, a ...any) { fmt.Fprintf(&n.out, format, a...) }

// netCheckJSON is a fabric-wide script's --json document; its fields are
// in the order of their keys.
type netCheckJSON struct {
	DryRun   []*madrpc.Plan `json:"dryRun,omitzero"`
	Findings []checkFinding `json:"findings"`
	// Summary counts what the script counts: nodes and ports checked,
	// bad ones, failed resets; a count never made is left out.
	Summary map[string]int `json:"summary"`
}

func netCheckRun(o *netCheckOptions) error {
	items, partial := o.Topology()
	if items == nil {
		return partial
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	n := &netCheck{
		o:       o,
		k:       &nodeChecker{ctx: o.Common.Context(), x: x, style: o.Style, th: defaultErrThresholds()},
		items:   items,
		summary: map[string]int{},
		results: map[string]*checkFuture{},
		// As many checks at once as the window has MADs in flight (each
		// check's queries go one after another), so the window stays full.
		sem: make(chan struct{}, max(1, x.Window())),
	}
	if o.Thresholds != nil {
		n.k.th, n.k.thOrder = pyCheckThresholds(o.Thresholds)
		n.k.thAbove = true
	}
	if o.Up {
		n.items = n.upItems()
	}
	sw := ""
	for _, it := range n.items {
		if it.kind == topoNode {
			sw = ""
			if it.typ == "Switch" {
				sw = it.lid
			}
		}
		if it.kind == topoPort && sw != "" {
			it.lid, it.onSwitch = sw, true // the script checks a switch's ports at its LID
		}
		o.Tool.prefetch(n, it)
	}
	code := o.Tool.render(n)
	if o.Common.JSON {
		if n.findings == nil {
			n.findings = []checkFinding{}
		}
		doc := netCheckJSON{DryRun: o.Common.DryRunPlans(), Findings: n.findings, Summary: n.summary}
		if err := cmdutil.WriteJSONDocument(o.IO.Out, doc); err != nil {
			return err
		}
	} else if _, err := io.Copy(o.IO.Out, &n.out); err != nil {
		return err
	}
	if partial != nil {
		return partial
	}
	if code != 0 {
		return &cmdutil.StatusError{Code: min(code, 255), Summary: fmt.Sprintf("%d problems found", code)}
	}
	return nil
}

// prefetchNet starts ibchecknet's and ibcheckerrors' unconditional checks.
func prefetchNet(n *netCheck, it topoItem) {
	switch {
	case it.kind == topoNode && it.typ == "Switch":
		n.start("node|"+it.lid, func() checkResult { return n.k.node(it.lid) })
		n.start("errs|"+it.lid+"|255", func() checkResult { return n.k.errs(it.lid, "255") })
	case it.kind == topoPort:
		if !it.onSwitch {
			n.start("node|"+it.lid, func() checkResult { return n.k.node(it.lid) })
			n.start("errs|"+it.lid+"|"+it.port, func() checkResult { return n.k.errs(it.lid, it.port) })
		}
		if n.o.Tool.name == "ibchecknet" {
			n.start(string(checkPortAll)+"|"+it.lid+"|"+it.port, func() checkResult { return n.k.port(checkPortAll, it.lid, it.port) })
		}
	}
}

// netNodeState is the awk variables the loops share.
type netNodeState struct {
	ntype, nodeguid, lid, oldlid string
}

// checkNodeErrs is ibchecknet's and ibcheckerrors' check_node: 1 when the
// node does not answer, 2 when its error counters fail.
func (n *netCheck) checkNodeErrs(s *netNodeState, port string) int {
	if !n.nodeOK(s.lid) {
		n.summary["badNodes"]++
		n.printf("\n# %s: nodeguid 0x%s failed\n", s.ntype, s.nodeguid)
		return 1
	}
	if !n.errsOK(s.lid, port) {
		return 2
	}
	return 0
}

// renderChecknet is ibchecknet's awk program. Its -v never turns on the
// switch headers (the script sets v=0 for -v).
func renderChecknet(n *netCheck) int {
	walkErrors(n, func(ntype string) bool { return ntype != "Switch" }, true)
	n.printf("\n*** WARNING ***: this command is deprecated; Please use \"ibqueryerrors\"")
	n.printf("\n## Summary: %d nodes checked, %d bad nodes found\n", n.summary["nodesChecked"], n.summary["badNodes"])
	n.printf("##          %d ports checked, %d bad ports found\n", n.summary["portsChecked"], n.summary["badPorts"])
	n.printf("##          %d ports have errors beyond threshold\n", n.summary["portsWithErrors"])
	return n.summary["badNodes"] + n.summary["badPorts"] + n.summary["portsWithErrors"]
}

// renderCheckerrors is ibcheckerrors' awk program.
func renderCheckerrors(n *netCheck) int {
	walkErrors(n, func(string) bool { return n.o.Style.Verbose }, false)
	n.printf("\n*** WARNING ***: this command is deprecated; Please use \"ibqueryerrors\"")
	n.printf("\n## Summary: %d nodes checked, %d bad nodes found\n", n.summary["nodesChecked"], n.summary["badNodes"])
	n.printf("##          %d ports checked, %d ports have errors beyond threshold\n", n.summary["portsChecked"], n.summary["portsWithErrors"])
	return 0
}

// walkErrors is the loop ibchecknet's and ibcheckerrors' awk programs
// share: each node's header when header says so, a switch's error
// counters for all its ports at once (each port's only when those are
// beyond the thresholds), a CA's port by port, and with checkPorts
// ibchecknet's PortInfo check of every port.
func walkErrors(n *netCheck, header func(ntype string) bool, checkPorts bool) {
	var s netNodeState
	err := 0
	for _, it := range n.items {
		switch it.kind {
		case topoNode:
			n.summary["nodesChecked"]++
			s.ntype, s.nodeguid = it.typ, it.guid
			if header(s.ntype) {
				n.printf("\n# Checking %s: nodeguid 0x%s\n", s.ntype, s.nodeguid)
			}
			err = 0
			if s.ntype != "Switch" {
				continue
			}
			s.lid = it.lid
			err = n.checkNodeErrs(&s, "255")
		case topoPort:
			n.summary["portsChecked"]++
			if s.ntype != "Switch" {
				s.lid = it.lid
				if n.checkNodeErrs(&s, it.port) == 2 {
					n.summary["portsWithErrors"]++
				}
			} else if err != 0 && !n.errsOK(s.lid, it.port) {
				n.summary["portsWithErrors"]++
			}
			if checkPorts && !n.portOK(checkPortAll, s.lid, it.port) {
				if s.oldlid != s.lid {
					n.printf("# Checked %s: nodeguid 0x%s with failure\n", s.ntype, s.nodeguid)
					s.oldlid = s.lid
				}
				n.summary["badPorts"]++
			}
		default:
			passThrough(&n.out, it.line)
		}
	}
}

// prefetchPorts starts ibcheckstate's or ibcheckwidth's checks.
func prefetchPorts(kind portCheckKind) func(n *netCheck, it topoItem) {
	return func(n *netCheck, it topoItem) {
		switch {
		case it.kind == topoNode && it.typ == "Switch", it.kind == topoPort:
			n.start("node|"+it.lid, func() checkResult { return n.k.node(it.lid) })
		}
		if it.kind == topoPort {
			n.start(string(kind)+"|"+it.lid+"|"+it.port, func() checkResult { return n.k.port(kind, it.lid, it.port) })
		}
	}
}

// renderPortLoop is ibcheckstate's and ibcheckwidth's awk program.
func renderPortLoop(kind portCheckKind) func(n *netCheck) int {
	return func(n *netCheck) int {
		var s netNodeState
		checked, bad := false, false
		checkNode := func() {
			checked = true
			if !n.nodeOK(s.lid) {
				n.summary["badNodes"]++
				bad = true
			}
		}
		for _, it := range n.items {
			switch it.kind {
			case topoNode:
				n.summary["nodesChecked"]++
				s.ntype, s.nodeguid = it.typ, it.guid
				if n.o.Style.Verbose {
					n.printf("\n# Checking %s: nodeguid 0x%s\n", s.ntype, s.nodeguid)
				}
				checked, bad = false, false
				if s.ntype != "Switch" {
					continue
				}
				s.lid = it.lid
				checkNode()
			case topoPort:
				n.summary["portsChecked"]++
				if !checked {
					s.lid = it.lid
					checkNode()
				}
				if bad {
					n.printf("\n# %s: nodeguid 0x%s failed\n", s.ntype, s.nodeguid)
					continue
				}
				if !n.portOK(kind, s.lid, it.port) {
					if !n.o.Style.Verbose && s.oldlid != s.lid {
						n.printf("# Checked %s: nodeguid 0x%s with failure\n", s.ntype, s.nodeguid)
						s.oldlid = s.lid
					}
					n.summary["badPorts"]++
				}
			default:
				passThrough(&n.out, it.line)
			}
		}
		what := "ports with bad state found"
		if kind == checkPortWidth {
			what = "ports with 1x width in error found"
		}
		n.printf("\n*** WARNING ***: this command is deprecated\n")
		n.printf("\n## Summary: %d nodes checked, %d bad nodes found\n", n.summary["nodesChecked"], n.summary["badNodes"])
		n.printf("##          %d ports checked, %d %s\n", n.summary["portsChecked"], n.summary["badPorts"], what)
		return 0
	}
}

// prefetchData starts ibdatacounters' unconditional checks.
func prefetchData(n *netCheck, it topoItem) {
	switch {
	case it.kind == topoNode && it.typ == "Switch":
		n.start("node|"+it.lid, func() checkResult { return n.k.node(it.lid) })
		n.start("data|"+it.lid+"|255", func() checkResult { return n.k.dataCounts(it.lid, "255") })
	case it.kind == topoPort && !it.onSwitch:
		n.start("node|"+it.lid, func() checkResult { return n.k.node(it.lid) })
		n.start("data|"+it.lid+"|"+it.port, func() checkResult { return n.k.dataCounts(it.lid, it.port) })
	}
}

// renderDatacounters is ibdatacounters' awk program.
func renderDatacounters(n *netCheck) int {
	var s netNodeState
	checkNode := func(port string) bool {
		if !n.nodeOK(s.lid) {
			n.summary["badNodes"]++
			n.printf("\n# %s: nodeguid 0x%s failed\n", s.ntype, s.nodeguid)
			return false
		}
		return n.dataOK(s.lid, port)
	}
	failed := false
	for _, it := range n.items {
		switch it.kind {
		case topoNode:
			n.summary["nodesChecked"]++
			s.ntype, s.nodeguid = it.typ, it.guid
			if n.o.Style.Verbose {
				n.printf("\n# Checking %s: nodeguid 0x%s\n", s.ntype, s.nodeguid)
			}
			failed = false
			if s.ntype != "Switch" {
				continue
			}
			s.lid = it.lid
			failed = !checkNode("255")
		case topoPort:
			n.summary["portsChecked"]++
			if s.ntype != "Switch" {
				s.lid = it.lid
				checkNode(it.port)
			} else if failed {
				n.dataOK(s.lid, it.port)
			}
		default:
			passThrough(&n.out, it.line)
		}
	}
	n.printf("*** WARNING ***: this command is deprecated; Please use \"ibqueryerrors --counters\n")
	n.printf("\n## Summary: %d nodes checked, %d bad nodes found\n", n.summary["nodesChecked"], n.summary["badNodes"])
	n.printf("##          %d ports checked\n", n.summary["portsChecked"])
	return 0
}

// errorsResetMask is ibclearerrors' reset mask: the error counters.
const errorsResetMask = 0x0fff

// clearKey names the reset of a LID's port ("all": every port).
func clearKey(lid, port string) string { return "clear|" + lid + "|" + port }

// clear resets a port's counters as the scripts' perfquery -R (-a) LID
// [PORT [0x0fff]] does, with perfquery's own code.
func (n *netCheck) clear(lid, port string, errorsOnly bool) checkResult {
	f := checkFinding{Check: "clear", Target: lid, LID: lid, Port: port}
	po := &perfqueryOptions{IO: cmdutil.IOStreams{Out: io.Discard, ErrOut: io.Discard}, Common: n.o.Common,
		Sets: make([]bool, len(perfCounterSets)), Mask: perfDefaultMask, ExtMask: perfDefaultExtMask, ResetOnly: true}
	if errorsOnly {
		po.Mask, po.ExtMask, po.MaskGiven = errorsResetMask, errorsResetMask, true
	}
	var err error
	if port == "all" {
		po.AllPorts, po.Port = true, mad.AllPortSelect
	} else {
		po.Port, err = cmdutil.ParsePortArg(port)
	}
	var t endport.Target
	if err == nil {
		t, err = endport.ParseTarget(lid, endport.LID)
	}
	// Checks run at once: a dry run's plans wait for the render.
	ctx, plans := cmdutil.WithPlanScope(n.k.ctx)
	if err == nil {
		q := &perfquery{o: po, ctx: ctx, pma: madrpc.NewPMA(n.k.x, mad.LIDPath(t.LID))}
		err = q.run()
	}
	f.OK = err == nil
	if err != nil {
		f.Messages = []string{err.Error()}
	}
	return checkResult{ok: f.OK, finding: f, plans: plans}
}

// prefetchClear starts every reset.
func prefetchClear(errorsOnly bool) func(n *netCheck, it topoItem) {
	return func(n *netCheck, it topoItem) {
		switch {
		case it.kind == topoNode && it.typ == "Switch":
			n.start(clearKey(it.lid, "all"), func() checkResult { return n.clear(it.lid, "all", errorsOnly) })
		case it.kind == topoPort:
			n.start(clearKey(it.lid, it.port), func() checkResult { return n.clear(it.lid, it.port, errorsOnly) })
		}
	}
}

// renderClear is ibclearcounters' and ibclearerrors' awk program.
func renderClear(errorsOnly bool) func(n *netCheck) int {
	return func(n *netCheck) int {
		ntype := ""
		for _, it := range n.items {
			switch it.kind {
			case topoNode:
				n.summary["nodesChecked"]++
				ntype = it.typ
				if ntype == "Switch" && !n.run(clearKey(it.lid, "all"), func() checkResult { return n.clear(it.lid, "all", errorsOnly) }) {
					n.summary["failedResets"]++
				}
			case topoPort:
				if ntype != "Switch" && !n.run(clearKey(it.lid, it.port), func() checkResult { return n.clear(it.lid, it.port, errorsOnly) }) {
					n.summary["failedResets"]++
				}
			default:
				passThrough(&n.out, it.line)
			}
		}
		use := "ibqueryerrors -K"
		if errorsOnly {
			use = "ibqueryerrors -k"
		}
		n.printf("\n*** WARNING ***: this command is deprecated; Please use \"%s\"\n", use)
		n.printf("\n## Summary: %d nodes cleared %d errors\n", n.summary["nodesChecked"], n.summary["failedResets"])
		return 0
	}
}
