package fabric

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// ibhosts, ibswitches, ibrouters and ibnodes are shell scripts in
// infiniband-diags: they run ibnetdiscover (or read a topology file) and
// pick lines out of the topology with awk. ibtool does the same to a
// topology file's text, so a file from either tool, or hand-edited, gives
// what the scripts give; a fresh discovery's lines it makes from the nodes
// discovered, as the scripts would pick them from ibnetdiscover's text.

// nodeListKinds are the node list tools.
var nodeListKinds = []nodeListKind{
	{"ibhosts", "list the channel adapters of the fabric", []string{"Ca"}},
	{"ibswitches", "list the switches of the fabric", []string{"Switch"}},
	{"ibrouters", "list the routers of the fabric", []string{"Rt"}},
	{"ibnodes", "list the channel adapters and switches of the fabric", []string{"Ca", "Switch"}},
}

func init() {
	for _, k := range nodeListKinds {
		cmdutil.Register(cmdutil.Tool{Name: k.name, Summary: k.summary, New: func(f *cmdutil.Factory) *cobra.Command { return newNodeListCmd(f, k, nil) }})
	}
}

// nodeListKind is one of the node list scripts: the topology line
// keywords it picks, in order.
type nodeListKind struct {
	name, summary string
	keywords      []string
}

// nodeListOptions are the options of a node list tool.
type nodeListOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Discovery cmdutil.DiscoveryOptions
	Kind      nodeListKind
	// TopologyFile is read instead of discovering, when set.
	TopologyFile string
	// Lines returns the lines the tool prints: picked from the topology
	// file's text, or made from a fresh discovery's nodes (with a partial
	// discovery's error).
	Lines func() ([]nodeListLine, error)
}

func newNodeListCmd(f *cmdutil.Factory, k nodeListKind, runF func(*nodeListOptions) error) *cobra.Command {
	o := &nodeListOptions{IO: f.IO, Kind: k}
	what := map[string]string{"ibhosts": "channel adapters (hosts)", "ibswitches": "switches", "ibrouters": "routers",
		"ibnodes": "channel adapters, then switches"}[k.name]
	c := &cobra.Command{
		Use:   k.name + " [options] [<topology-file>]",
		Short: k.summary,
		Long: fmt.Sprintf(`%s lists the %s of the fabric, one line each, as infiniband-diags'
%s script does: from a fresh discovery, or from a topology file that
ibnetdiscover wrote.`, k.name, what, k.name),
		Example: fmt.Sprintf("  %s\n  %s topo.net", k.name, k.name),
		Args:    cmdutil.ArgsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			if len(args) == 1 {
				o.TopologyFile = args[0]
			}
			o.Lines = func() ([]nodeListLine, error) {
				if o.TopologyFile != "" {
					b, err := os.ReadFile(o.TopologyFile)
					if err != nil {
						return nil, &cmdutil.UsageError{Err: err}
					}
					return textNodeLines(b, k.keywords), nil
				}
				fab, err := f.DiscoverFabric(k.name, &o.Common, &o.Discovery, nil)
				if err != nil {
					return nil, cmdutil.WithContext(err, "discovery")
				}
				return fabricNodeLines(fab, k.keywords), cmdutil.ReportPartial(k.name, fab, f.IO.ErrOut)
			}
			if runF != nil {
				return runF(o)
			}
			return nodeListRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	return c
}

func nodeListRun(o *nodeListOptions) error {
	lines, partial := o.Lines()
	if lines == nil && partial != nil {
		return partial
	}
	if o.Common.JSON {
		nodes := []nodeListLine{}
		for _, l := range lines {
			if l.Type != "" {
				nodes = append(nodes, l)
			}
		}
		if err := cmdutil.WriteJSONDocument(o.IO.Out, nodes); err != nil {
			return err
		}
		return partial
	}
	w := cmdutil.NewTableWriter(o.IO.Out)
	for _, l := range lines {
		w.WriteString(l.Text)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return partial
}

// nodeListLine is one line of a node list, with the fields --json gives.
type nodeListLine struct {
	Type     string `json:"type"`
	NodeGUID string `json:"nodeGUID"`
	NumPorts string `json:"numPorts"`
	// Description is what follows the '#' of the topology line: the
	// quoted description, and for a switch its port 0 LID.
	Description string `json:"description"`
	Text        string `json:"-"`
}

// awkFields splits a line into fields as awk's default FS does.
func awkFields(s string) []string { return strings.Fields(s) }

// awkSubstr is awk's substr(s, m, n) for m >= 1 (1-based, clamped).
func awkSubstr(s string, m, n int) string {
	start := max(m-1, 0)
	if start >= len(s) || n <= 0 {
		return ""
	}
	return s[start:min(start+n, len(s))]
}

var (
	afterHash = &cmdutil.LazyRegexp{Expr: `#[ \t]*`}
	portZero  = &cmdutil.LazyRegexp{Expr: `port 0.*`}
)

// afterComment is the scripts' substr($0, match($0, "#[ \t]*")+RLENGTH):
// the line from just after the first '#' and its blanks; the whole line
// when there is no '#' (match gives 0 and RLENGTH -1).
func afterComment(line string) string {
	loc := afterHash.Get().FindStringIndex(line)
	if loc == nil {
		return line
	}
	return line[loc[1]:]
}

// textNodeLines are the lines the scripts pick from topology text for
// each keyword in turn.
func textNodeLines(text []byte, keywords []string) []nodeListLine {
	var lines []nodeListLine
	for _, kw := range keywords {
		lines = append(lines, pickNodeLines(text, kw)...)
	}
	return lines
}

// fabricNodeLines are the lines the scripts would pick from the topology
// ibnetdiscover prints of fab, made from its nodes: for each keyword in
// turn the nodes of its type in the order ibnetdiscover prints them, each
// node's comment as its node line has it.
func fabricNodeLines(fab *subnet.Fabric, keywords []string) []nodeListLine {
	types := map[string]mad.NodeType{"Ca": mad.NodeTypeCA, "Switch": mad.NodeTypeSwitch, "Rt": mad.NodeTypeRouter}
	var lines []nodeListLine
	for _, kw := range keywords {
		for _, n := range fab.ByType(types[kw]) {
			lines = append(lines, fabricNodeLine(n, kw, ""))
		}
	}
	return lines
}

// keptNodeLines are the lines the scripts would pick for keyword from
// the ibnetdiscover -g topology of fab that the Perl scripts keep: the
// chassis first, a chassis slot's node written as a switch whatever its
// type, a Xsigo HCA's comment ending " (scp)".
func keptNodeLines(fab *subnet.Fabric, keyword string) []nodeListLine {
	tw := &subnet.TopologyWriter{Fabric: fab, Group: true, Chassis: fab.GroupChassis()}
	var lines []nodeListLine
	for _, e := range tw.Entries() {
		kw, scp := "Switch", ""
		if !e.AsSwitch {
			kw = map[mad.NodeType]string{mad.NodeTypeCA: "Ca", mad.NodeTypeRouter: "Rt"}[e.Node.Type]
			if subnet.IsXsigoHCA(e.Node.GUID) {
				scp = " (scp)"
			}
		}
		if kw == keyword {
			lines = append(lines, fabricNodeLine(e.Node, kw, scp))
		}
	}
	return lines
}

// fabricNodeLine is the line the scripts make of n's node line, which
// starts with kw; suffix ends the node line's comment.
func fabricNodeLine(n *subnet.Node, kw, suffix string) nodeListLine {
	var names *nodemap.Map // ibnetdiscover's topology names nodes by their cleaned descriptions
	desc := "\"" + names.Name(uint64(n.GUID), n.Desc) + "\"" + suffix
	if kw == "Switch" {
		port0 := "base"
		if n.EnhancedPort0 {
			port0 = "enhanced"
		}
		desc = fmt.Sprintf("\"%s\" %s port 0 lid %d lmc %d", names.Name(uint64(n.GUID), n.Desc), port0, n.SMALID, n.SMALMC)
	}
	l := nodeListLine{Type: kw, NodeGUID: fmt.Sprintf("0x%016x", uint64(n.GUID)), NumPorts: strconv.Itoa(n.NumPorts), Description: desc}
	l.Text = l.Type + "\t: " + l.NodeGUID + " ports " + l.NumPorts + " " + desc
	return l
}

// pickNodeLines applies the script's awk program for the keyword ("Ca",
// "Switch" or "Rt") to the topology text: the node lines it rewrites, and
// lines from the tools' own messages (starting "ib", or holding ibpanic:,
// ibwarn: or iberror:) as they are.
func pickNodeLines(text []byte, keyword string) []nodeListLine {
	var out []nodeListLine
	for _, line := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		if strings.HasPrefix(line, keyword) {
			out = append(out, nodeLine(line, keyword))
		}
		if strings.HasPrefix(line, "ib") {
			out = append(out, nodeListLine{Text: line})
			continue
		}
		for _, m := range []string{"ibpanic:", "ibwarn:", "iberror:"} {
			if strings.Contains(line, m) {
				out = append(out, nodeListLine{Text: line})
			}
		}
	}
	return out
}

// nodeLine rewrites one node line of the topology.
func nodeLine(line, keyword string) nodeListLine {
	f := awkFields(line)
	field := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	l := nodeListLine{Type: field(0), NodeGUID: "0x" + awkSubstr(field(2), 4, 16), NumPorts: field(1)}
	desc := afterComment(line)
	if keyword == "Switch" {
		desc = switchListDesc(desc)
	}
	l.Description = desc
	l.Text = l.Type + "\t: " + l.NodeGUID + " ports " + l.NumPorts + " " + desc
	return l
}

// switchListDesc is ibswitches' rewriting of a Switch line's comment:
// the description, the port 0 kind ("base port 0" is dropped from where
// it is, then put back), and the port 0 information.
func switchListDesc(desc string) string {
	pi := 0 // awk's match: 1-based, 0 for none
	if loc := portZero.Get().FindStringIndex(desc); loc != nil {
		pi = loc[0] + 1
	}
	pinfo := awkSubstr(desc, pi, len(desc))
	if pi == 0 {
		pinfo = desc
	}
	desc = awkSubstr(desc, 1, pi-2)
	typ := "base port 0"
	ti := strings.Index(desc, typ) + 1
	if ti == 0 {
		typ = "enhanced port 0"
		ti = strings.Index(desc, typ) + 1
		if ti != 0 {
			desc = awkSubstr(desc, 1, ti-2)
		}
	} else {
		desc = awkSubstr(desc, 1, ti-2)
	}
	if ti == 0 {
		return desc + " " + pinfo
	}
	return desc + " " + typ + " " + pinfo
}
