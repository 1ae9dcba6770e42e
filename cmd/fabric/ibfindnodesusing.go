package fabric

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// ibfindnodesusing is infiniband-diags' Perl script of that name: for a
// switch port it lists the CAs whose routes leave by that port, and those
// whose routes come back in by its peer. It reads the kept ibnetdiscover -g
// topology (see kept_topology.go) with the script's patterns (with -R it
// takes the same readings from the fabric it discovered: see
// script_topology.go), and the
// switches' forwarding tables and their destinations as ibroute reads
// them, as typed entries.

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibfindnodesusing",
		Summary: "list the nodes routed through a switch port",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbfindnodesusingCmd(f, nil) },
	})
}

// ibfindnodesusingOptions are ibfindnodesusing's parsed flags and arguments.
type ibfindnodesusingOptions struct {
	IO         cmdutil.IOStreams
	Common     cmdutil.CommonOptions
	Discovery  cmdutil.DiscoveryOptions
	Regenerate bool
	CacheDir   string
	// Switch is the switch argument as the script formats it
	// ("0x%016s"), Port the port argument as typed.
	Switch, Port string
	// Target is the switch when -L or -D (python-rdma's) gave it by LID
	// or directed route; SwitchGUID asks it its node GUID.
	Target     *endport.Target
	SwitchGUID func(endport.Target) (rdma.GUID, error)
	// AllNodes is -a (python-rdma's): list every routed end port, not
	// just the CAs.
	AllNodes bool
	// Discover discovers the fabric afresh. Topology, when set, gives a
	// fresh ibnetdiscover -g topology as text instead (one made
	// elsewhere), read as the kept file is.
	Discover func() (*subnet.Fabric, error)
	Topology func() ([]byte, error)
	// Routes reads a switch's unicast table and looks its destinations
	// up, as ibroute -G GUID does.
	Routes func(guid string) ([]lftEntry, error)
}

func newIbfindnodesusingCmd(f *cmdutil.Factory, runF func(*ibfindnodesusingOptions) error) *cobra.Command {
	o := &ibfindnodesusingOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "ibfindnodesusing [options] <switch_guid> <port>",
		Short: "list the nodes routed through a switch port",
		Long: `ibfindnodesusing lists the channel adapters whose routes leave a switch by the
given port, and those whose routes come back in through the port at the
other end of its link, as infiniband-diags' script does. It reads the
ibnetdiscover -g topology kept in /var/cache/infiniband-diags (discovered
when missing or with -R) and the switches' forwarding tables.`,
		Example: "  ibfindnodesusing -R 0x0002c90200401234 12",
		Args:    cmdutil.ArgsRange(0, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			if len(args) < 2 || args[1] == "" {
				return &cmdutil.UsageError{Err: fmt.Errorf("want a switch GUID and a port"), Syntax: true}
			}
			o.Switch, o.Port = formatScriptGUID(args[0]), args[1]
			if err := o.parseSwitchTarget(c, args[0]); err != nil {
				return err
			}
			o.SwitchGUID = func(t endport.Target) (rdma.GUID, error) { return nodeGUIDOf(&o.Common, t) }
			o.Discover = func() (*subnet.Fabric, error) {
				return cmdutil.FreshFabric(f, "ibfindnodesusing", &o.Common, &o.Discovery)
			}
			o.Routes = func(guid string) ([]lftEntry, error) {
				t, err := endport.ParseTarget(guid, endport.GUID)
				if err != nil {
					return nil, err
				}
				return o.routesOf(t)
			}
			if runF != nil {
				return runF(o)
			}
			return ibfindnodesusingRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	fl := c.Flags()
	fl.BoolVarP(&o.Regenerate, "R", "R", false, "discover again instead of reusing the kept topology")
	fl.StringVar(&o.CacheDir, "cache-dir", defaultTopologyCacheDir, "where the reused topology is kept")
	cmdutil.AddTargetFlags(c, &o.Common, "LGD")
	fl.BoolVarP(&o.AllNodes, "all", "a", false, "list every end port routed through the link, switches and routers too, not just CAs (python-rdma's)")
	return c
}

// parseSwitchTarget reads the switch argument as python-rdma's
// ibfindnodesusing does when -L, -G or -D says its kind: a LID or DR path
// is asked its node GUID when the run starts, a port GUID is the switch's
// (a switch's port GUIDs are its node GUID). Without them it stays the
// script's GUID or node description.
func (o *ibfindnodesusingOptions) parseSwitchTarget(c *cobra.Command, arg string) error {
	fl := c.Flags()
	if !fl.Changed("Lid") && !fl.Changed("Guid") && !fl.Changed("Direct") {
		return nil
	}
	t, err := o.Common.ParseTarget(arg)
	if err != nil {
		return err
	}
	if t.Kind == endport.GUID {
		o.Switch = fmt.Sprintf("0x%016x", uint64(t.GUID))
		return nil
	}
	o.Target = &t
	return nil
}

// routesOf reads the unicast table of the switch t and looks up its
// destinations, as ibroute does without options.
func (o *ibfindnodesusingOptions) routesOf(t endport.Target) ([]lftEntry, error) {
	ro := &ibrouteOptions{IO: o.IO, Common: o.Common, Target: t}
	x, _, st, err := ro.readTable()
	if err != nil {
		return nil, err
	}
	start, end := unicastRange(o.IO.ErrOut, ro, st.LFT.Top)
	return ro.unicastDests(x, st, start, end)
}

// nodeGUIDOf asks t for its NodeInfo and returns its node GUID.
func nodeGUIDOf(common *cmdutil.CommonOptions, t endport.Target) (rdma.GUID, error) {
	p, err := t.Path()
	if err != nil {
		return 0, err
	}
	x, err := common.Transactor()
	if err != nil {
		return 0, err
	}
	ctx := common.Context()
	if p, err = x.Resolve(ctx, p); err != nil {
		return 0, err
	}
	var ni mad.NodeInfo
	if _, err := (&madrpc.Querier{X: x, Path: p}).Get(ctx, &ni, 0); err != nil {
		return 0, cmdutil.WithContext(err, "node info query of %s", t)
	}
	return ni.NodeGUID, nil
}

// formatScriptGUID is IBswcountlimits.pm's format_guid: lower case, then
// "0x" and the digits right-aligned in 16 zero-padded places.
func formatScriptGUID(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'F' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
	if i := strings.Index(s, "0x"); i >= 0 {
		s = s[i+2:]
	}
	if len(s) < 16 {
		s = strings.Repeat("0", 16-len(s)) + s
	}
	return "0x" + s
}

// linkEnd is one switch port's peer, as get_link_ends records it: by
// the switch's port as written.
type linkEnd struct {
	port, remGUID, remPort, remDesc string
}

// The scripts' patterns.
var (
	fnuLinkSw   = &cmdutil.LazyRegexp{Expr: `^Switch.*"S-(.*)"\s+#.*"(.*)".* lid (\d+).*`}
	fnuLinkEnds = &cmdutil.LazyRegexp{Expr: `^\[(\d+)\](?:\[ext \d+\])?\s+"[HSR]-(.+)"\[(\d+)\](?:\[ext \d+\])?(\(.+\))?\s+#.*"(.*)"\.* lid (\d+).*`}
	// trailing splits a host name into its prefix and trailing digits.
	trailing = &cmdutil.LazyRegexp{Expr: `^(.*?)(\d*)$`}
)

// linkEnds is get_link_ends: the switches' port lines' other ends, by
// switch GUID ("0x" and 16 digits) and port. Like the script it files a
// port line under the last switch line it read, until a Ca or Rt line.
func linkEnds(topo *scriptTopology) map[string]map[string]linkEnd {
	ends := map[string]map[string]linkEnd{}
	inSwitch := false
	guid := ""
	for _, s := range topo.Sections {
		if n := s.Node; n != nil {
			if n.LinkGUID != "" {
				guid, inSwitch = n.LinkGUID, true
			}
			if n.Keyword == "Ca" || n.Keyword == "Rt" {
				inSwitch = false
			}
		}
		if !inSwitch {
			continue
		}
		for _, p := range s.Ports {
			if p.Link == nil {
				continue
			}
			if ends["0x"+guid] == nil {
				ends["0x"+guid] = map[string]linkEnd{}
			}
			ends["0x"+guid][p.Link.port] = *p.Link
		}
	}
	return ends
}

// findSwitch is the script's search for the switch: the first Switch
// line whose GUID is sw, or whose comment holds sw and a blank. It
// returns the GUID's digits and the comment.
func findSwitch(topo *scriptTopology, sw string) (guid, desc string, found bool) {
	for _, s := range topo.Sections {
		n := s.Node
		if n == nil || n.Keyword != "Switch" || !n.Named {
			continue
		}
		guid, desc = n.GUID, n.Comment
		if "0x"+guid == sw || strings.Contains(desc, sw+" ") || strings.Contains(desc, sw+"\t") {
			return guid, desc, true
		}
	}
	return guid, desc, false
}

// routedHosts is get_hosts_routed: the CAs a switch's unicast table
// sends out of port (with all, every end port: python-rdma's -a), by the
// names ibroute prints. Like the script it takes the port as a number (0
// when it is none) and only a LID ibroute describes (the first of its
// port's LIDs, not the "path #n" ones).
func routedHosts(entries []lftEntry, port string, all bool) []string {
	want, _ := strconv.Atoi(port)
	var hosts []string
	for _, e := range entries {
		if !e.described || e.Port&0xff != want {
			continue
		}
		switch e.destType {
		case mad.NodeTypeCA:
		case mad.NodeTypeSwitch, mad.NodeTypeRouter:
			if !all {
				continue
			}
		default:
			continue
		}
		hosts = append(hosts, e.Dest)
	}
	return hosts
}

// compressHostlist is the script's compress_hostlist (with sortn and
// comp2) on its list, which starts with an undefined entry: names are
// grouped by the prefix before their trailing digits, runs of consecutive
// numbers become "first-last", prefixes are sorted, and the undefined
// entry becomes a leading empty name. It returns the words the script
// prints, joined by spaces.
func compressHostlist(hosts []string) string {
	type entry struct {
		name  string
		undef bool
	}
	list := []entry{{undef: true}}
	for _, h := range hosts {
		list = append(list, entry{name: h})
	}
	num := func(s string) int {
		n, _ := strconv.Atoi(s)
		return n
	}
	// sortn: by the trailing number, stable.
	sort.SliceStable(list, func(i, j int) bool {
		return num(trailing.Get().FindStringSubmatch(list[i].name)[2]) < num(trailing.Get().FindStringSubmatch(list[j].name)[2])
	})
	// comp2: per prefix, groups of numbers; a number joins the current
	// group when the group's last number is one less (an empty group's
	// last counts as 0).
	groups := map[string][][]string{}
	index := map[string]int{}
	for _, e := range list {
		m := trailing.Get().FindStringSubmatch(e.name)
		prefix, digits := m[1], m[2]
		g := groups[prefix]
		i := index[prefix]
		for len(g) <= i {
			g = append(g, nil)
		}
		last := 0
		if cur := g[i]; len(cur) > 0 {
			last = num(cur[len(cur)-1])
		}
		if last != num(digits)-1 {
			i++
			index[prefix] = i
			for len(g) <= i {
				g = append(g, nil)
			}
		}
		g[i] = append(g[i], digits)
		groups[prefix] = g
	}
	var prefixes []string
	for p := range groups {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	var out []string
	for _, p := range prefixes {
		for _, g := range groups[p] {
			switch {
			case len(g) > 1:
				out = append(out, p+g[0]+"-"+g[len(g)-1])
			case len(g) == 1:
				out = append(out, p+g[0])
			}
		}
	}
	// The script joins with commas, splits on them (dropping trailing
	// empty fields) and prints the words with spaces.
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, " ")
}

// portUsersJSON is ibfindnodesusing's --json document: the switch port,
// its peer, and the hosts routed out of and back in through the link, as
// the words of the text's compressed host lists.
type portUsersJSON struct {
	Description       string   `json:"description"`
	Port              string   `json:"port"`
	RemoteDescription string   `json:"remoteDescription"`
	RemoteGUID        string   `json:"remoteGUID"`
	RemotePort        string   `json:"remotePort"`
	RoutedIn          []string `json:"routedIn"`
	RoutedOut         []string `json:"routedOut"`
	SwitchGUID        string   `json:"switchGUID"`
}

func ibfindnodesusingRun(o *ibfindnodesusingOptions) error {
	if o.Target != nil {
		guid, err := o.SwitchGUID(*o.Target)
		if err != nil {
			return err
		}
		o.Switch = fmt.Sprintf("0x%016x", uint64(guid))
	}
	k := &cmdutil.KeptTopology{Dir: o.CacheDir, CA: o.Common.CA, Port: o.Common.CAPort, Regenerate: o.Regenerate,
		Discover: o.Discover, Text: o.Topology}
	kept, partial := readKeptTopology(k)
	if kept == nil {
		return partial
	}
	ends := linkEnds(kept.Topo)
	guid, desc, found := findSwitch(kept.Topo, o.Switch)
	if !found {
		fmt.Fprintf(o.IO.Out, "Switch \"%s\" not found\n   Try running with the \"-R\" or \"-P\" option.\n", o.Switch)
		return &cmdutil.FindingsError{Summary: fmt.Sprintf("switch %s not found", o.Switch)}
	}
	switchGUID := "0x" + guid
	end := ends[switchGUID][o.Port]
	hosts := func(guid, port string) string {
		if guid == "" {
			return compressHostlist(nil)
		}
		entries, err := o.Routes(guid)
		if err != nil {
			fmt.Fprintf(o.IO.ErrOut, "ibfindnodesusing: ibroute -G %s: %v\n", guid, err)
		}
		return compressHostlist(routedHosts(entries, port, o.AllNodes))
	}
	out, back := hosts(switchGUID, o.Port), hosts(end.remGUID, end.remPort)
	if o.Common.JSON {
		words := func(s string) []string {
			w := strings.Fields(s)
			if w == nil {
				w = []string{}
			}
			return w
		}
		if err := cmdutil.WriteJSONDocument(o.IO.Out, portUsersJSON{
			SwitchGUID: switchGUID, Port: o.Port, Description: desc,
			RemoteGUID: end.remGUID, RemotePort: end.remPort, RemoteDescription: end.remDesc,
			RoutedOut: words(out), RoutedIn: words(back),
		}); err != nil {
			return err
		}
		return partial
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s (%s)  ==>>  %s %s (%s)\n", switchGUID, o.Port, desc, end.remGUID, end.remPort, end.remDesc)
	fmt.Fprintf(&b, "%s\n\n", out)
	fmt.Fprintf(&b, "%s %s (%s)  <<==  %s %s (%s)\n", switchGUID, o.Port, desc, end.remGUID, end.remPort, end.remDesc)
	fmt.Fprintf(&b, "%s\n", back)
	if _, err := o.IO.Out.Write(b.Bytes()); err != nil {
		return err
	}
	return partial
}
