package fabric

import (
	"bufio"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// ibprintca, ibprintswitch and ibprintrt are infiniband-diags' deprecated
// Perl scripts (ibprintca.pl, ...): they print one node's lines of the kept
// ibnetdiscover -g topology (see kept_topology.go), found by GUID (-G) or by
// a name matched in its description. ibtool reads the same topology with
// the scripts' patterns and quirks (with -R it takes the same readings,
// and the lines to print, from the fabric it discovered: see
// script_topology.go): the port lines of every matching node
// are gathered and printed, sorted, when the next node of the kind starts
// (so ibprintswitch and ibprintrt print none for the last one).

// nodePrintKind is one of the three scripts.
type nodePrintKind struct {
	name, summary string
	// keyword starts the kind's node lines (topoNamed has their
	// pattern: the GUID and the description).
	keyword string
	// ends lists the line prefixes that end a node of the kind.
	ends []string
	// list is the node list tool -l runs; what names the kind in
	// messages.
	list, what string
	// flushAtEnd says the ports of a node still open at the end of the
	// file are printed (ibprintca only).
	flushAtEnd bool
	// notFound is the message when nothing matched.
	notFound string
}

var nodePrintKinds = []nodePrintKind{
	{name: "ibprintca", summary: "print a channel adapter's lines of the topology (deprecated script)",
		keyword: "Ca", ends: []string{"Switch", "Rt"}, list: "Ca", what: "CA's", flushAtEnd: true,
		notFound: "\"%s\" not found\n   Try running with the \"-R\" option.\n   If still not found the node is probably down."},
	{name: "ibprintswitch", summary: "print a switch's lines of the topology (deprecated script)",
		keyword: "Switch", ends: []string{"Ca"}, list: "Switch", what: "switches",
		notFound: "Switch \"%s\" not found\n   Try running with the \"-R\" option."},
	{name: "ibprintrt", summary: "print a router's lines of the topology (deprecated script)",
		keyword: "Rt", ends: []string{"Switch", "Ca"}, list: "Rt", what: "Router's",
		notFound: "\"%s\" not found\n   Try running with the \"-R\" option.\n   If still not found the node is probably down."},
}

func init() {
	for _, k := range nodePrintKinds {
		for _, name := range []string{k.name, k.name + ".pl"} {
			cmdutil.Register(cmdutil.Tool{Name: name, Summary: k.summary, New: func(f *cmdutil.Factory) *cobra.Command { return newNodePrintCmd(f, name, k, nil) }})
		}
	}
}

// nodePrintOptions are the parsed flags and argument of an ibprint tool.
type nodePrintOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Discovery cmdutil.DiscoveryOptions
	Kind      nodePrintKind
	// Regenerate is -R, List -l, GUID -G.
	Regenerate, List, GUID bool
	CacheDir               string
	// Target is the GUID ("0x" and 16 digits with -G) or name to find.
	Target string
	// Discover discovers the fabric afresh. Topology, when set, gives a
	// fresh ibnetdiscover -g topology as text instead (one made
	// elsewhere), read as the kept file is.
	Discover func() (*subnet.Fabric, error)
	Topology func() ([]byte, error)
}

func newNodePrintCmd(f *cmdutil.Factory, name string, k nodePrintKind, runF func(*nodePrintOptions) error) *cobra.Command {
	o := &nodePrintOptions{IO: f.IO, Kind: k}
	c := &cobra.Command{
		Use:   name + " [options] [-G <guid> | <name>]",
		Short: k.summary,
		Long: fmt.Sprintf(`%s prints the node line and port lines of the %s named (by node GUID with
-G, otherwise a name matched as a word of its description, a regular
expression) from the ibnetdiscover -g topology kept in
/var/cache/infiniband-diags, as infiniband-diags' %s.pl does; the topology is
discovered (and kept) when missing or with -R. -l lists the nodes of the kind
instead.`, name, strings.ToLower(strings.TrimSuffix(k.what, "'s")), k.name),
		Example: fmt.Sprintf("  %s -R -l\n  %s -G 0x0002c90300a1b2c4", name, name),
		Args:    cmdutil.ArgsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			if len(args) == 1 {
				o.Target = args[0]
			}
			if o.GUID {
				o.Target = formatScriptGUID(o.Target)
			}
			if o.Target == "" && !o.List {
				return &cmdutil.UsageError{Err: fmt.Errorf("want a node name, or -G and a GUID"), Syntax: true}
			}
			o.Discover = func() (*subnet.Fabric, error) { return cmdutil.FreshFabric(f, name, &o.Common, &o.Discovery) }
			if runF != nil {
				return runF(o)
			}
			return nodePrintRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	fl := c.Flags()
	fl.BoolVarP(&o.Regenerate, "R", "R", false, "discover again instead of reusing the kept topology")
	fl.BoolVarP(&o.List, "list", "l", false, "list the nodes of the kind")
	fl.BoolVarP(&o.GUID, "Guid", "G", false, "the node is given by GUID")
	fl.StringVar(&o.CacheDir, "cache-dir", defaultTopologyCacheDir, "where the reused topology is kept")
	return c
}

// nodePrintJSON is an ibprint tool's --json: the matching nodes' lines.
type nodePrintJSON struct {
	Matches int      `json:"matches"`
	Lines   []string `json:"lines"`
}

func nodePrintRun(o *nodePrintOptions) error {
	k := &cmdutil.KeptTopology{Dir: o.CacheDir, CA: o.Common.CA, Port: o.Common.CAPort, Regenerate: o.Regenerate,
		Discover: o.Discover, Text: o.Topology}
	kept, partial := readKeptTopology(k)
	if kept == nil {
		return partial
	}
	if o.List {
		keywords := []string{o.Kind.list}
		lines := func() ([]nodeListLine, error) { return textNodeLines(kept.Text, keywords), partial }
		if kept.Fabric != nil {
			lines = func() ([]nodeListLine, error) { return keptNodeLines(kept.Fabric, o.Kind.list), partial }
		}
		lo := &nodeListOptions{IO: o.IO, Common: o.Common, Kind: nodeListKind{name: o.Kind.list, keywords: keywords}, Lines: lines}
		return nodeListRun(lo)
	}
	var desc *regexp.Regexp
	if re, err := regexp.Compile(`[\s"]` + o.Target + `[\s"]`); err == nil {
		desc = re
	} else {
		return cmdutil.UsageErrorf("invalid name %q: %v", o.Target, err)
	}
	lines, found := printTopologyNode(kept.Topo, o.Kind, o.Target, desc)
	if o.Common.JSON {
		out := nodePrintJSON{Matches: found, Lines: []string{}}
		for _, l := range lines {
			out.Lines = append(out.Lines, strings.TrimSuffix(l, "\n"))
		}
		if err := cmdutil.WriteJSONDocument(o.IO.Out, out); err != nil {
			return err
		}
	} else {
		w := bufio.NewWriter(o.IO.Out)
		for _, l := range lines {
			w.WriteString(l)
		}
		if found > 1 {
			fmt.Fprintf(w, "\nWARNING: Found %d %s with the name \"%s\"\n", found, o.Kind.what, o.Target)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if partial != nil {
		return partial
	}
	if found == 0 {
		return &cmdutil.StatusError{Code: cmdutil.ScriptFailed, Summary: fmt.Sprintf(o.Kind.notFound, o.Target)}
	}
	return nil
}

// printTopologyNode is the scripts' main loop, on the topology's sections
// as they read its lines: the lines printed and how many nodes matched.
func printTopologyNode(topo *scriptTopology, k nodePrintKind, target string, desc *regexp.Regexp) ([]string, int) {
	var out []string
	ports := map[int]string{} // never emptied, as in the scripts
	flush := func() {
		nums := make([]int, 0, len(ports))
		for n := range ports {
			nums = append(nums, n)
		}
		sort.Ints(nums)
		for _, n := range nums {
			out = append(out, ports[n])
		}
	}
	in, found := false, 0
	for _, s := range topo.Sections {
		if n := s.Node; n != nil {
			if n.Keyword == k.keyword && n.Named {
				if in {
					in = false
					flush()
				}
				if "0x"+n.GUID == target || desc.MatchString(n.Comment) {
					out = append(out, n.Text)
					in = true
					found++
				}
			}
			if slices.Contains(k.ends, n.Keyword) {
				in = false
			}
		}
		if !in {
			continue
		}
		for _, p := range s.Ports {
			if p.Num >= 0 {
				ports[p.Num] = p.Text
			}
		}
	}
	if in && k.flushAtEnd {
		flush()
	}
	return out, found
}

// printPortLine is the scripts' /^\[(\d+)\].*/.
var printPortLine = &cmdutil.LazyRegexp{Expr: `^\[(\d+)\]`}
