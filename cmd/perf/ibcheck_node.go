package perf

import (
	"bufio"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
)

// The per-node check scripts: ibchecknode, ibcheckport, ibcheckportstate,
// ibcheckportwidth, ibcheckerrs and ibdatacounts. Each checks one node or
// port by LID (or port GUID with -G), prints FAILED lines (and OK ones with
// -v) and exits 255 when the check failed, as the scripts do.

// nodeCheckTool describes one per-node check script.
type nodeCheckTool struct {
	name, summary, long string
	// port says what the port argument is: "none", "required" or
	// "optional" (255, every port, when missing).
	port string
	// brief and thresholds say whether the tool takes -b, and -T/-s;
	// pyThresholds that it takes python-rdma's -T/-s (ibcheck_pythresh.go).
	brief, thresholds, pyThresholds bool
	check                           func(k *nodeChecker, target, port string) checkResult
}

var nodeCheckTools = []nodeCheckTool{
	{name: "ibchecknode", summary: "check that a node answers (deprecated script)", port: "none",
		long:  "ibchecknode checks that the node at a LID (or port GUID with -G) answers a NodeInfo query.",
		check: func(k *nodeChecker, t, _ string) checkResult { return k.node(t) }},
	{name: "ibcheckport", summary: "check a port's link state and width (deprecated script)", port: "required",
		long:  "ibcheckport reads a port's PortInfo and fails when the physical link is not up, the\nlogical link is not Active, or the link runs at 1X.",
		check: func(k *nodeChecker, t, p string) checkResult { return k.port(checkPortAll, t, p) }},
	{name: "ibcheckportstate", summary: "check a port's link state (deprecated script)", port: "required",
		long:  "ibcheckportstate reads a port's PortInfo and fails when the physical link is not up\nor the logical link is not Active.",
		check: func(k *nodeChecker, t, p string) checkResult { return k.port(checkPortState, t, p) }},
	{name: "ibcheckportwidth", summary: "check that a port's link is not 1X (deprecated script)", port: "required",
		long:  "ibcheckportwidth reads a port's PortInfo and fails when the link runs at 1X though\nit supports more.",
		check: func(k *nodeChecker, t, p string) checkResult { return k.port(checkPortWidth, t, p) }},
	{name: "ibcheckerrs", summary: "check a port's error counters against thresholds (deprecated script)", port: "optional",
		brief: true, thresholds: true,
		long:  "ibcheckerrs reads a port's PortCounters (every port's with port 255, the default)\nand fails when an error counter is at or above its threshold (-s shows them,\n-T reads NAME=VALUE lines that change them; 0 turns a check off).",
		check: func(k *nodeChecker, t, p string) checkResult { return k.errs(t, p) }},
	{name: "ibdatacounts", summary: "print a port's receive data counters (deprecated script)", port: "optional", brief: true,
		pyThresholds: true,
		long:         "ibdatacounts reads a port's PortCounters (every port's with port 255, the default)\nand prints the receive data and packet counters, as the script's filter leaves them.\n-s prints python-rdma's thresholds (-T reads python-rdma's threshold file) and exits.",
		check:        func(k *nodeChecker, t, p string) checkResult { return k.dataCounts(t, p) }},
}

func init() {
	for _, t := range nodeCheckTools {
		cmdutil.Register(cmdutil.Tool{Name: t.name, Summary: t.summary, New: func(f *cmdutil.Factory) *cobra.Command { return newNodeCheckCmd(f, t, nil) }})
	}
}

// nodeCheckOptions are a per-node check's parsed flags and arguments.
type nodeCheckOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	Tool   nodeCheckTool
	Style  scriptStyle
	// GUID is -G: the target is a port GUID. Lid (-L) and Direct (-D)
	// are python-rdma's: the target is a LID, or a directed-route path.
	GUID, Lid, Direct bool
	// Target and Port are the arguments as typed; Port is "255" when an
	// optional port is missing.
	Target, Port string
	// ThresholdFile is -T; ShowThresholds is -s.
	ThresholdFile  string
	ShowThresholds bool
	// Thresholds are ibcheckerrs' thresholds after -T; PyThresholds
	// python-rdma's, by its member names (pyThresholds tools).
	Thresholds   map[string]uint64
	PyThresholds map[string]int64
}

func newNodeCheckCmd(f *cmdutil.Factory, t nodeCheckTool, runF func(*nodeCheckOptions) error) *cobra.Command {
	o := &nodeCheckOptions{IO: f.IO, Tool: t}
	use := t.name + " [options] <lid|guid>"
	switch t.port {
	case "required":
		use += " <port>"
	case "optional":
		use += " [<port>]"
	}
	c := &cobra.Command{
		Use:   use,
		Short: t.summary,
		Long: t.long + `

It prints what infiniband-diags' script of that name prints (the red FAILED,
and with -v the green OK; -N without colours) and exits 255 when the check
fails. Options with one dash and a long name (-nocolor, -timeout) are taken
as the script takes them.`,
		Example:            fmt.Sprintf("  %s -v 12%s\n  %s -N -G 0x0002c90300a1b2c4%s", t.name, examplePort(t), t.name, examplePort(t)),
		DisableFlagParsing: true,
		RunE: scriptRunE(func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			o.Style.Verbose = o.Common.Verbose > 0
			if err := o.parseArgs(args); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return nodeCheckRun(o)
		}),
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsNoSMPortShort|cmdutil.FlagsSA)
	fl := c.Flags()
	fl.BoolVarP(&o.GUID, "Guid", "G", false, "the target is a port GUID")
	fl.BoolVarP(&o.Lid, "Lid", "L", false, "the target is a LID (python-rdma's)")
	fl.BoolVarP(&o.Direct, "Direct", "D", false, "the target is a directed-route path such as 0,1,3 (python-rdma's)")
	fl.BoolVarP(&o.Style.NoColor, "nocolor", "N", false, "no colours")
	fl.BoolP("suppress-deprecated", "S", false, "(accepted; ibtool prints no deprecation warning)")
	if t.brief {
		fl.BoolVarP(&o.Style.Brief, "brief", "b", false, "no details before FAILED")
	}
	switch {
	case t.thresholds:
		fl.StringVarP(&o.ThresholdFile, "thresholds", "T", "", "threshold file of NAME=VALUE lines")
		fl.BoolVarP(&o.ShowThresholds, "show_thresholds", "s", false, "print the thresholds and exit")
	case t.pyThresholds:
		fl.StringVarP(&o.ThresholdFile, "thresholds", "T", "", "python-rdma's threshold file of name = value lines")
		fl.BoolVarP(&o.ShowThresholds, "show_thresholds", "s", false, "print python-rdma's thresholds and exit")
	}
	return c
}

func examplePort(t nodeCheckTool) string {
	if t.port == "none" {
		return ""
	}
	return " 1"
}

// parseArgs reads the thresholds and the target and port arguments.
func (o *nodeCheckOptions) parseArgs(args []string) error {
	if o.Style.Verbose {
		o.Style.Brief = false // -v and -b: the scripts take the last, ibtool -v
	}
	if cmdutil.Count(o.GUID, o.Lid, o.Direct) > 1 {
		return cmdutil.UsageErrorf("give one of -G, -L and -D")
	}
	switch {
	case o.Tool.thresholds:
		th, err := errThresholds(o.ThresholdFile)
		if err != nil {
			return err
		}
		o.Thresholds = th
	case o.Tool.pyThresholds:
		th, err := loadPyThresholds(o.ThresholdFile)
		if err != nil {
			return err
		}
		o.PyThresholds = th
	}
	if o.ShowThresholds {
		return nil
	}
	least := map[string]int{"none": 1, "required": 2, "optional": 1}[o.Tool.port]
	most := map[string]int{"none": 1, "required": 2, "optional": 2}[o.Tool.port]
	if len(args) < least || len(args) > most {
		return &cmdutil.UsageError{Err: fmt.Errorf("want %s, got %d argument(s)", useArgs(o.Tool), len(args)), Syntax: true}
	}
	o.Target = args[0]
	if err := o.checkTargetKind(); err != nil {
		return err
	}
	switch {
	case o.Tool.port == "none":
	case len(args) > 1 && args[1] != "":
		o.Port = args[1]
	default:
		o.Port = "255"
	}
	return nil
}

// checkTargetKind is python-rdma's -D and -L: a target of another kind
// is a usage error. A target that is no address at all is left to the
// script's "address resolution: FAILED".
func (o *nodeCheckOptions) checkTargetKind() error {
	switch {
	case o.Direct:
		if _, err := endport.ParseTarget(o.Target, endport.DirectRoute); err != nil {
			return &cmdutil.UsageError{Err: err}
		}
	case o.Lid:
		if t, err := endport.ParseTarget(o.Target, endport.Any); err == nil && t.Kind != endport.LID {
			return &cmdutil.UsageError{Err: &endport.MismatchError{Want: endport.LID, Got: t.Kind, Input: o.Target}}
		}
	}
	return nil
}

func useArgs(t nodeCheckTool) string {
	return map[string]string{"none": "<lid|guid>", "required": "<lid|guid> <port>", "optional": "<lid|guid> [<port>]"}[t.port]
}

// errThresholds are ibcheckerrs' defaults changed by the file's NAME=VALUE
// lines (the script sources it as shell); "" is no file.
func errThresholds(path string) (map[string]uint64, error) {
	th := defaultErrThresholds()
	if path == "" {
		return th, nil
	}
	if f, err := os.Open(path); err != nil {
		return nil, cmdutil.UsageErrorf("can't use threshold file '%s': %v", path, err)
	} else {
		f.Close()
	}
	file, err := readThresholds(path)
	if err != nil {
		return nil, err
	}
	for k, v := range file.values {
		if _, ok := th[k]; ok {
			th[k] = v
		}
	}
	return th, nil
}

func nodeCheckRun(o *nodeCheckOptions) error {
	if o.ShowThresholds {
		return showThresholds(o)
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	k := &nodeChecker{ctx: o.Common.Context(), x: x, style: o.Style, guid: o.GUID, direct: o.Direct, lidOnly: o.Lid, th: o.Thresholds}
	r := o.Tool.check(k, o.Target, o.Port)
	if o.Common.JSON {
		if err := cmdutil.WriteJSONDocument(o.IO.Out, checkFindingsJSON{Findings: []checkFinding{r.finding}}); err != nil {
			return err
		}
	} else if _, err := o.IO.Out.Write(r.text); err != nil {
		return err
	}
	if !r.ok {
		return &cmdutil.StatusError{Code: cmdutil.ScriptFailed, Summary: r.finding.Check + " check of " + o.Target + " failed"}
	}
	return nil
}

// showThresholds is ibcheckerrs -s, and python-rdma's for the others.
func showThresholds(o *nodeCheckOptions) error {
	if o.Tool.pyThresholds {
		if o.Common.JSON {
			return cmdutil.WriteJSONDocument(o.IO.Out, struct {
				Thresholds map[string]int64 `json:"thresholds"`
			}{o.PyThresholds})
		}
		return writePyThresholds(o.IO.Out, o.PyThresholds)
	}
	if o.Common.JSON {
		return cmdutil.WriteJSONDocument(o.IO.Out, struct {
			Thresholds map[string]uint64 `json:"thresholds"`
		}{o.Thresholds})
	}
	w := bufio.NewWriter(o.IO.Out)
	for _, name := range mad.PortErrorCounters {
		fmt.Fprintf(w, "%s=%d\n", name, o.Thresholds[name])
	}
	return w.Flush()
}
