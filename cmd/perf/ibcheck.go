package perf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// The ibcheck* family are infiniband-diags' deprecated shell scripts
// (rdma-core's infiniband-diags/scripts, built with ENABLE_IBDIAGS_COMPAT):
// small per-node and per-port checks (ibchecknode, ibcheckport,
// ibcheckerrs, ...) built on smpquery and perfquery, and fabric-wide
// loops over ibnetdiscover's topology (ibchecknet, ibcheckerrors, ...,
// in ibcheck_net.go) that run the small ones for every node and port.
// ibtool sends the same queries itself and prints what the scripts print,
// colours included; the fabric-wide ones query every node at once and
// print in the topology's order.

// scriptIBPath is where the scripts find the C tools (@IBSCRIPTPATH@): it
// shows in the error lines smpquery and perfquery print, which the scripts
// pass on.
const scriptIBPath = "/usr/sbin/"

// ANSI colours of the scripts' green, red and blue.
const (
	ansiGreen = "\033[1;032m"
	ansiRed   = "\033[1;031m"
	ansiBlue  = "\033[1;034m"
	ansiReset = "\033[0;39m"
)

// scriptStyle is how a script prints: its -N, -v and -b.
type scriptStyle struct {
	NoColor bool // -N, -nocolor
	Verbose bool // -v
	Brief   bool // -b: no details before FAILED
}

// green is the scripts' green(): OK lines only with -v.
func (s scriptStyle) green(b *bytes.Buffer, msg string) {
	if !s.Verbose {
		return
	}
	if s.NoColor {
		b.WriteString(msg + "\n")
		return
	}
	b.WriteString(ansiGreen + " " + msg + " " + ansiReset + "\n")
}

// red is the scripts' red(): FAILED, always.
func (s scriptStyle) red(b *bytes.Buffer, msg string) {
	if s.NoColor {
		b.WriteString(msg + "\n")
		return
	}
	b.WriteString(ansiRed + " " + msg + " " + ansiReset + "\n")
}

// blue is the awk programs' blue(): the details of a failure, not with -b.
func (s scriptStyle) blue(b *bytes.Buffer, msg string) {
	switch {
	case s.Brief, msg == "":
	case s.NoColor:
		b.WriteString(msg)
	default:
		b.WriteString(ansiBlue + msg + ansiReset)
	}
}

// fixScriptArgs turns the scripts' single-dash long options (-nocolor,
// -timeout) into the double-dash ones the flag parser takes.
func fixScriptArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		switch a {
		case "-nocolor", "-timeout":
			a = "-" + a
		}
		out = append(out, a)
	}
	return out
}

// parseScriptFlags parses args for a command with flag parsing turned off
// (so that -nocolor is not taken for -n -o -c ...); it returns the
// positional arguments, or errHelpShown after printing help or the
// version.
func parseScriptFlags(c *cobra.Command, args []string) ([]string, error) {
	fl := c.Flags()
	if err := fl.Parse(fixScriptArgs(args)); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, errHelpShown
		}
		return nil, cmdutil.FlagError(c, err)
	}
	if h, _ := fl.GetBool("help"); h {
		return nil, errHelpShown
	}
	if v, _ := fl.GetBool("version"); v && c.Version != "" {
		fmt.Fprintf(c.OutOrStdout(), "%s (ibtool) %s\n", c.Name(), c.Version)
		return nil, errVersionShown
	}
	return fl.Args(), nil
}

// errHelpShown and errVersionShown end a script-style command that only
// printed help or its version.
var (
	errHelpShown    = errors.New("help")
	errVersionShown = errors.New("version")
)

// scriptRunE wraps a script-style command's run: flags parsed by
// parseScriptFlags, help and version handled.
func scriptRunE(run func(c *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		pos, err := parseScriptFlags(c, args)
		switch {
		case errors.Is(err, errHelpShown):
			return c.Help()
		case errors.Is(err, errVersionShown):
			return nil
		case err != nil:
			return err
		}
		return run(c, pos)
	}
}

// checkFinding is one check's outcome, for --json.
type checkFinding struct {
	Check    string            `json:"check"` // node, port, portstate, portwidth, errors, datacounts
	Target   string            `json:"target"`
	LID      string            `json:"lid"`
	Port     string            `json:"port,omitempty"`
	NodeDesc string            `json:"nodeDescription,omitempty"`
	OK       bool              `json:"ok"`
	Messages []string          `json:"messages,omitempty"`
	Counters map[string]uint64 `json:"counters,omitempty"`
}

// checkFindingsJSON is a per-node script's --json document.
type checkFindingsJSON struct {
	Findings []checkFinding `json:"findings"`
}

// checkResult is one run of a per-node script: what it prints and whether
// it passed.
type checkResult struct {
	text    []byte
	ok      bool
	finding checkFinding
	// plans are the MADs a --dry-run check did not send.
	plans *cmdutil.PlanScope
}

// nodeChecker runs the per-node scripts' queries on one transactor.
type nodeChecker struct {
	ctx   context.Context
	x     *madrpc.Transactor
	style scriptStyle
	// guid is -G: the target is a port GUID, resolved through the SA.
	guid bool
	// direct is -D: the target is a directed-route path; lidOnly is -L:
	// it is a LID. Without either a target with commas is a path.
	direct, lidOnly bool
	// th are ibcheckerrs' thresholds, checked in thOrder (nil: the error
	// counters'). thAbove is python-rdma's test (-T of the fabric-wide
	// checks): a counter fails above its threshold, not at it.
	th      map[string]uint64
	thOrder []string
	thAbove bool
}

// checkTarget is a resolved target: the LID as the script shows it, the
// route of its SMPs and the route of its PMA's GMPs.
type checkTarget struct {
	lid       string
	path, gmp mad.Path
}

// resolve is the scripts' address resolution (ibaddr): a GUID through the
// SA, a LID by asking its node; it writes the failure line to b.
func (k *nodeChecker) resolve(b *bytes.Buffer, arg string) (checkTarget, bool) {
	fail := func(what string) (checkTarget, bool) {
		b.WriteString(what + " " + arg + " address resolution: ")
		k.style.red(b, "FAILED")
		return checkTarget{}, false
	}
	if k.guid {
		g, err := rdma.ParseGUID(arg)
		if err != nil {
			return fail("guid")
		}
		p, err := k.x.Resolve(k.ctx, mad.Path{GUID: g})
		if err != nil {
			return fail("guid")
		}
		t := checkTarget{lid: fmt.Sprint(uint16(p.LID)), path: p, gmp: p}
		if _, err := k.smp(t.path).Get(k.ctx, &mad.NodeInfo{}, 0); err != nil {
			return fail("guid")
		}
		return t, true
	}
	if k.direct || (!k.lidOnly && strings.Contains(arg, ",")) {
		return k.resolveDR(arg, fail)
	}
	t, err := endport.ParseTarget(arg, endport.LID)
	if err != nil {
		return fail("lid")
	}
	ct := checkTarget{lid: arg, path: mad.LIDPath(t.LID), gmp: mad.LIDPath(t.LID)}
	if _, err := k.smp(ct.path).Get(k.ctx, &mad.NodeInfo{}, 0); err != nil {
		return fail("lid")
	}
	return ct, true
}

// resolveDR resolves python-rdma's directed-route target: the node answers
// NodeInfo down the path, and the LID of the port the path enters it by
// (PortInfo, attribute modifier 0) is the one shown and the one its PMA is
// asked at, as python-rdma asks it at the LID the SA gives for its port
// GUID.
func (k *nodeChecker) resolveDR(arg string, fail func(string) (checkTarget, bool)) (checkTarget, bool) {
	t, err := endport.ParseTarget(arg, endport.DirectRoute)
	if err != nil {
		return fail("dr")
	}
	p, err := t.Path()
	if err != nil {
		return fail("dr")
	}
	var pi mad.PortInfo
	if _, err := k.smp(p).Get(k.ctx, &mad.NodeInfo{}, 0); err != nil {
		return fail("dr")
	}
	if _, err := k.smp(p).Get(k.ctx, &pi, 0); err != nil {
		return fail("dr")
	}
	return checkTarget{lid: fmt.Sprint(pi.LID), path: p, gmp: mad.LIDPath(rdma.LID(pi.LID))}, true
}

// smp is the querier of the node at p.
func (k *nodeChecker) smp(p mad.Path) *madrpc.Querier { return madrpc.NewQuerier(k.x, p) }

// node is ibchecknode: the node answers NodeInfo.
func (k *nodeChecker) node(arg string) checkResult {
	var b bytes.Buffer
	f := checkFinding{Check: "node", Target: arg}
	t, ok := k.resolve(&b, arg)
	f.LID = t.lid
	if ok {
		if k.style.Verbose {
			b.WriteString("Node check lid " + t.lid + ": ")
		}
		k.style.green(&b, "OK")
	} else {
		f.Messages = []string{"address resolution failed"}
	}
	f.OK = ok
	return checkResult{text: b.Bytes(), ok: ok, finding: f}
}

// portCheckKind is which of the PortInfo checks a script makes.
type portCheckKind string

// The PortInfo checks: ibcheckport's, ibcheckportstate's and
// ibcheckportwidth's.
const (
	checkPortAll   portCheckKind = "port"
	checkPortState portCheckKind = "portstate"
	checkPortWidth portCheckKind = "portwidth"
)

// begin starts a port check's text and finding: the target resolved, or
// when it does not resolve, the result to return as it stands (the
// scripts' address resolution FAILED line).
func (k *nodeChecker) begin(check, arg, port string) (*bytes.Buffer, checkFinding, checkTarget, *checkResult) {
	b := new(bytes.Buffer)
	f := checkFinding{Check: check, Target: arg, Port: port}
	t, ok := k.resolve(b, arg)
	f.LID = t.lid
	if !ok {
		f.Messages = []string{"address resolution failed"}
		return b, f, t, &checkResult{text: b.Bytes(), finding: f}
	}
	return b, f, t, nil
}

// port is ibcheckport, ibcheckportstate or ibcheckportwidth: the port's
// PortInfo read and checked.
func (k *nodeChecker) port(kind portCheckKind, arg, port string) checkResult {
	b, f, t, early := k.begin(string(kind), arg, port)
	if early != nil {
		return *early
	}
	var pi mad.PortInfo
	num, err := cmdutil.ParsePortArg(port)
	if err == nil {
		_, err = k.smp(t.path).Get(k.ctx, &pi, uint32(num))
	}
	var problems string
	if err != nil {
		line := scriptIBPath + "smpquery: iberror: failed: operation portinfo: port info query failed"
		b.WriteString(line + "\n")
		f.Messages = []string{line}
	} else {
		problems = portProblems(kind, &pi, t.lid, port)
		k.style.blue(b, problems)
		f.Messages = splitLines(problems)
	}
	f.OK = err == nil && problems == ""
	head := "Port check lid " + t.lid + " port " + port + ": "
	if f.OK {
		if k.style.Verbose {
			b.WriteString(head)
		}
		k.style.green(b, "OK")
	} else {
		b.WriteString(head)
		k.style.red(b, "FAILED")
	}
	return checkResult{text: b.Bytes(), ok: f.OK, finding: f}
}

// portProblems is the awk program of the PortInfo checks: an error for a
// physical link that is not up (which ends the check), warnings for a
// logical state other than Active and for a 1X link. The scripts' LID and
// SM LID checks never fire (their switch test is broken), so they are
// left out.
func portProblems(kind portCheckKind, pi *mad.PortInfo, lid, port string) string {
	where := "  lid " + lid + " port " + port + "\n"
	var warn string
	// PortInfo's fields in smpquery's order: LinkWidthSupported,
	// LinkWidthActive, LinkState, PhysLinkState.
	if kind == checkPortWidth {
		if mad.FormatLinkWidthSupported.Text(uint32(pi.LinkWidthSupported)) == "1X" {
			return ""
		}
	}
	if kind != checkPortState && mad.FormatLinkWidth.Text(uint32(pi.LinkWidthActive)) == "1X" {
		warn += "#warn: Link configured as 1X" + where
	}
	if kind == checkPortWidth {
		return warn
	}
	if s := awkField2(mad.FormatPortState.Text(uint32(pi.LinkState))); s != "Active" {
		warn += "#warn: Logical link state is " + s + where
	}
	if s := awkField2(mad.FormatPhysPortState.Text(uint32(pi.PhysLinkState))); s != "LinkUp" {
		return "#error: Physical link state is " + s + where
	}
	return warn
}

// awkField2 is what the scripts' awk -F '[.:]*' sees of a value: up to
// its first '.' or ':'.
func awkField2(v string) string {
	if i := strings.IndexAny(v, ".:"); i >= 0 {
		return v[:i]
	}
	return v
}

// splitLines splits text into its lines, without empty ones.
func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// nodeDesc is the scripts' node name: smpquery nodedesc without its label.
func (k *nodeChecker) nodeDesc(t checkTarget) string {
	var nd mad.NodeDescription
	if _, err := k.smp(t.path).Get(k.ctx, &nd, 0); err != nil {
		return ""
	}
	// No map: the description with unprintable bytes made spaces.
	var names *nodemap.Map
	return strings.TrimLeft(names.Name(0, nd.NodeDescription.String()), ".")
}

// counters is the scripts' perfquery LID PORT: PortCounters with the
// PMA's capabilities, or the line perfquery prints when it fails (and
// whether it failed because the PMA has no AllPortSelect).
func (k *nodeChecker) counters(t checkTarget, port string) (pc *mad.PortCounters, caps mad.PMACapabilities, fail string, noAllPorts bool) {
	num, err := cmdutil.ParsePortArg(port)
	if err != nil {
		return nil, caps, scriptIBPath + "perfquery: iberror: failed: perfquery", false
	}
	pma := madrpc.NewPMA(k.x, t.gmp)
	if caps, err = pma.Capabilities(k.ctx, num); err != nil {
		return nil, caps, scriptIBPath + "perfquery: iberror: failed: classportinfo query", false
	}
	if num == mad.AllPortSelect && !caps.Has(mad.PMAAllPortSelect) {
		return nil, caps, scriptIBPath + "perfquery: iberror: failed: AllPortSelect not supported", true
	}
	pc = new(mad.PortCounters)
	if _, err := pma.Get(k.ctx, pc, num); err != nil {
		return nil, caps, scriptIBPath + "perfquery: iberror: failed: perfquery", false
	}
	caps.Hide(pc)
	return pc, caps, "", false
}

// defaultErrThresholds returns ibcheckerrs' thresholds, a new map the
// caller may change: a counter at or above its threshold is reported; 0
// turns the check off. A function, as a package-level map is built by the
// package's init at every start of every tool.
func defaultErrThresholds() map[string]uint64 {
	return map[string]uint64{
		"SymbolErrorCounter": 10, "LinkErrorRecoveryCounter": 10, "LinkDownedCounter": 10, "PortRcvErrors": 10,
		"PortRcvRemotePhysicalErrors": 100, "PortRcvSwitchRelayErrors": 100, "PortXmitDiscards": 100,
		"PortXmitConstraintErrors": 100, "PortRcvConstraintErrors": 100, "LocalLinkIntegrityErrors": 10,
		"ExcessiveBufferOverrunErrors": 10, "VL15Dropped": 100,
	}
}

// portSelectMismatch is the scripts' check that perfquery answered for the
// port asked ("" when it did).
func portSelectMismatch(pc *mad.PortCounters, lid, port string) string {
	num, _ := cmdutil.ParsePortArg(port)
	if int(pc.PortSelect) != num {
		return fmt.Sprintf("error: lid %s port %d does not match query (%s)\n", lid, pc.PortSelect, port)
	}
	return ""
}

// portName is how the scripts name the port: "all" for 255.
func portName(port string) string {
	if port == "255" {
		return "all"
	}
	return port
}

// errs is ibcheckerrs: the port's (or with 255 every port's) error
// counters against the thresholds.
func (k *nodeChecker) errs(arg, port string) checkResult {
	b, f, t, early := k.begin("errors", arg, port)
	if early != nil {
		return *early
	}
	f.NodeDesc = k.nodeDesc(t)
	head := "Error check on lid " + t.lid + " (" + f.NodeDesc + ") port " + portName(port) + ": "
	pc, _, fail, noAll := k.counters(t, port)
	if noAll {
		f.OK = true
		f.Messages = []string{"AllPortSelect not supported"}
		if k.style.Verbose {
			b.WriteString(head)
		}
		k.style.green(b, "AllPortSelect not supported")
		return checkResult{text: b.Bytes(), ok: true, finding: f}
	}
	var problems string
	if fail != "" {
		b.WriteString(fail + "\n")
		f.Messages = []string{fail}
	} else if problems = portSelectMismatch(pc, t.lid, port); problems == "" {
		f.Counters = map[string]uint64{}
		names := k.thOrder
		if names == nil {
			names = mad.PortErrorCounters
		}
		for i, v := range mad.CounterValues(pc, names...) {
			name := names[i]
			f.Counters[name] = v
			if th := k.th[name]; th > 0 && (v > th || v == th && !k.thAbove) {
				problems += fmt.Sprintf("#warn: counter %s = %d \t(threshold %d) lid %s port %s\n", name, v, th, t.lid, port)
			}
		}
	}
	if fail == "" {
		k.style.blue(b, problems)
		f.Messages = splitLines(problems)
	}
	f.OK = fail == "" && problems == ""
	return k.verdict(b, f, head)
}

// verdict ends a counter check's text as the scripts do: the head (with
// -v, or on failure) and a green OK or a red FAILED.
func (k *nodeChecker) verdict(b *bytes.Buffer, f checkFinding, head string) checkResult {
	if f.OK {
		if k.style.Verbose {
			b.WriteString(head)
		}
		k.style.green(b, "OK")
	} else {
		b.WriteString(head)
		k.style.red(b, "FAILED")
	}
	return checkResult{text: b.Bytes(), ok: f.OK, finding: f}
}

// dataCounts is ibdatacounts: the port's counters whose names match the
// script's (Xmt|Rcv)(Pkts|Data), which with perfquery's names are the
// receive ones only.
func (k *nodeChecker) dataCounts(arg, port string) checkResult {
	b, f, t, early := k.begin("datacounts", arg, port)
	if early != nil {
		return *early
	}
	f.NodeDesc = k.nodeDesc(t)
	head := "Error on lid " + t.lid + " (" + f.NodeDesc + ") port " + portName(port) + ": "
	pc, caps, fail, noAll := k.counters(t, port)
	var problems string
	if fail != "" {
		if !noAll { // the awk program skips lines that name AllPortSelect
			b.WriteString(fail + "\n")
		}
		f.Messages = []string{fail}
	} else {
		num, _ := cmdutil.ParsePortArg(port)
		fmt.Fprintf(b, "# Port counters: %s port %d (CapMask: 0x%02X)\n", t.gmp, num, uint16(caps.Mask))
		if problems = portSelectMismatch(pc, t.lid, port); problems == "" {
			f.Counters = map[string]uint64{"PortRcvData": uint64(pc.PortRcvData), "PortRcvPkts": uint64(pc.PortRcvPkts)}
			fmt.Fprintf(b, "PortRcvData:.........................%d\n", pc.PortRcvData)
			fmt.Fprintf(b, "PortRcvPkts:.........................%d\n", pc.PortRcvPkts)
		}
		k.style.blue(b, problems)
		f.Messages = splitLines(problems)
	}
	f.OK = fail == "" && problems == ""
	return k.verdict(b, f, head)
}
