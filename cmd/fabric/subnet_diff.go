package fabric

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// subnet_diff is python-rdma's command of that name: it compares a cached
// (reference) fabric with the live one, or with a second cache, by end
// ports, nodes, links, link rates and LID assignment, in python-rdma's
// format (GUIDs in the colon form).

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "subnet_diff",
		Summary: "compare a cached fabric with the current one (or another cache)",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newSubnetDiffCmd(f, nil) },
	})
}

// subnetDiffOptions are subnet_diff's parsed flags and arguments.
type subnetDiffOptions struct {
	IO                 cmdutil.IOStreams
	Common             cmdutil.CommonOptions
	Discovery          cmdutil.DiscoveryOptions
	Reference, Current string
	// Discover walks the live fabric when Current is "".
	Discover func() (*subnet.Fabric, error)
}

func newSubnetDiffCmd(f *cmdutil.Factory, runF func(*subnetDiffOptions) error) *cobra.Command {
	o := &subnetDiffOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "subnet_diff [options] REFERENCE [CURRENT]",
		Short: "compare a cached fabric with the current one (or another cache)",
		Long: `subnet_diff compares the fabric cached in REFERENCE (ibnetdiscover --cache, either
tool's format or ibtool's JSON) with the live fabric, or with the one cached
in CURRENT: end ports, nodes and links present in only one, links whose
rate changed, and LIDs assigned differently, as python-rdma's subnet_diff
prints them.`,
		Example: "  ibnetdiscover --cache ref.cache > /dev/null\n  subnet_diff ref.cache\n  subnet_diff ref.cache now.cache",
		Args:    cmdutil.ArgsRange(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			o.Reference = args[0]
			if len(args) == 2 {
				o.Current = args[1]
			}
			o.Discover = func() (*subnet.Fabric, error) { return f.DiscoverFabric("subnet_diff", &o.Common, &o.Discovery, nil) }
			if runF != nil {
				return runF(o)
			}
			return subnetDiffRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	return c
}

func subnetDiffRun(o *subnetDiffOptions) error {
	ref, err := cmdutil.LoadFabric(o.Reference)
	if err != nil {
		return err
	}
	var cur *subnet.Fabric
	var partial error
	if o.Current != "" {
		if cur, err = cmdutil.LoadFabric(o.Current); err != nil {
			return err
		}
	} else {
		if cur, err = o.Discover(); err != nil {
			return cmdutil.WithContext(err, "discovery")
		}
		partial = cmdutil.ReportPartial("subnet_diff", cur, o.IO.ErrOut)
	}
	w := bufio.NewWriter(o.IO.Out)
	writeSubnetDiff(w, cur, ref)
	if err := w.Flush(); err != nil {
		return err
	}
	return partial
}

// diffEndPort is an end port of a link: the port GUID of its end port (a
// switch's port 0) and the port number.
type diffEndPort struct {
	guid rdma.GUID
	num  int
}

func (e diffEndPort) less(f diffEndPort) bool {
	return e.guid < f.guid || e.guid == f.guid && e.num < f.num
}

// diffLink is a link with its larger end first, as python-rdma orders it.
type diffLink struct{ a, b diffEndPort }

func (l diffLink) String() string {
	return fmt.Sprintf("%s[%d] <=> %s[%d]", l.a.guid.Colon(), l.a.num, l.b.guid.Colon(), l.b.num)
}

func (l diffLink) less(m diffLink) bool {
	return l.a.less(m.a) || l.a == m.a && l.b.less(m.b)
}

// endPortGUID is the GUID of the end port a port belongs to.
func endPortGUID(p *subnet.Port) rdma.GUID {
	if p.Node.Type == mad.NodeTypeSwitch {
		return p.Node.Info.PortGUID
	}
	return p.GUID
}

// subnetSets gathers what subnet_diff compares of a fabric.
type subnetSets struct {
	endPorts map[rdma.GUID]bool
	nodes    map[rdma.GUID]bool
	links    map[diffLink]*subnet.Port // the link's first end
	lids     map[int]rdma.GUID
}

func gatherSubnet(f *subnet.Fabric) subnetSets {
	s := subnetSets{endPorts: map[rdma.GUID]bool{}, nodes: map[rdma.GUID]bool{}, links: map[diffLink]*subnet.Port{}, lids: map[int]rdma.GUID{}}
	for _, n := range f.Nodes {
		s.nodes[n.GUID] = true
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			if n.Type != mad.NodeTypeSwitch || p.Num == 0 {
				if p.GUID != 0 || n.Type == mad.NodeTypeSwitch {
					s.endPorts[endPortGUID(p)] = true
				}
				if p.BaseLID != 0 {
					for l := int(p.BaseLID); l < int(p.BaseLID)+1<<p.LMC; l++ {
						s.lids[l] = endPortGUID(p)
					}
				}
			}
			if r := p.Remote; r != nil {
				a, b := diffEndPort{endPortGUID(p), p.Num}, diffEndPort{endPortGUID(r), r.Num}
				first := p
				if a.less(b) {
					a, b, first = b, a, r
				}
				s.links[diffLink{a, b}] = first
			}
		}
	}
	return s
}

// report prints a difference list as python-rdma's report() does.
func report(w io.Writer, items []string, extra, same string) {
	if len(items) == 0 {
		fmt.Fprintln(w, same)
		return
	}
	fmt.Fprintf(w, extra+"\n", len(items))
	for _, it := range items {
		fmt.Fprintf(w, "   %s\n", it)
	}
}

// guidList returns the GUIDs of a not in b, sorted, in colon form.
func guidList(a, b map[rdma.GUID]bool) []string {
	var g []rdma.GUID
	for k := range a {
		if !b[k] {
			g = append(g, k)
		}
	}
	sort.Slice(g, func(i, j int) bool { return g[i] < g[j] })
	out := make([]string, len(g))
	for i, v := range g {
		out[i] = v.Colon()
	}
	return out
}

// linkSpeedNames is python-rdma's IBA_describe.link_speed.
func linkSpeedNames(v uint8) string {
	var s []string
	for i, name := range []string{"SDR", "DDR", "QDR"} {
		if v&(1<<i) != 0 {
			s = append(s, name)
		}
	}
	return strings.Join(s, ",")
}

// linkWidthLanes is python-rdma's IBA_describe.link_width.
func linkWidthLanes(v uint8) int {
	switch v {
	case 1:
		return 1
	case 2:
		return 4
	case 4:
		return 8
	case 8:
		return 12
	}
	return 0
}

// writeSubnetDiff prints the comparison of cur with ref.
func writeSubnetDiff(w io.Writer, cur, ref *subnet.Fabric) {
	c, r := gatherSubnet(cur), gatherSubnet(ref)

	fmt.Fprintf(w, "Current subnet has %d end ports, reference subnet has %d end ports\n", len(c.endPorts), len(r.endPorts))
	report(w, guidList(c.endPorts, r.endPorts), " Current subnet has %d more end ports than the reference subnet:",
		" All end ports in the current subnet are in the reference subnet.")
	report(w, guidList(r.endPorts, c.endPorts), "Reference subnet has %d more end ports than the current subnet:",
		" All end ports in the reference subnet are in the current subnet.")

	fmt.Fprintf(w, "Current subnet has %d nodes, reference subnet has %d nodes\n", len(c.nodes), len(r.nodes))
	report(w, guidList(c.nodes, r.nodes), " Current subnet has %d more nodes than the reference subnet:",
		" All nodes in the current subnet are in the reference subnet.")
	report(w, guidList(r.nodes, c.nodes), "Reference subnet has %d more nodes than the current subnet:",
		" All nodes in the reference subnet are in the current subnet.")

	onlyIn := func(a, b map[diffLink]*subnet.Port) []string {
		var ls []diffLink
		for l := range a {
			if _, ok := b[l]; !ok {
				ls = append(ls, l)
			}
		}
		sort.Slice(ls, func(i, j int) bool { return ls[i].less(ls[j]) })
		out := make([]string, len(ls))
		for i, l := range ls {
			out[i] = l.String()
		}
		return out
	}
	fmt.Fprintf(w, "Current subnet has %d links, reference subnet has %d links\n", len(c.links), len(r.links))
	report(w, onlyIn(c.links, r.links), " Current subnet has %d more links than the reference subnet:",
		" All links in the current subnet are in the reference subnet.")
	report(w, onlyIn(r.links, c.links), "Reference subnet has %d more links than the current subnet:",
		" All links in the reference subnet are in the current subnet.")

	// Rates of the links in both, keyed (as python-rdma does) by the
	// GUID of the link's first end: one link per end port GUID counts.
	type rate struct {
		speed, width uint8
		link         diffLink
	}
	rateOf := func(p *subnet.Port, l diffLink) rate {
		pr := rate{link: l}
		if p.Info != nil {
			pr.speed, pr.width = uint8(p.Info.LinkSpeedActive), uint8(p.Info.LinkWidthActive)
		}
		return pr
	}
	var same []diffLink
	for l := range c.links {
		if _, ok := r.links[l]; ok {
			same = append(same, l)
		}
	}
	sort.Slice(same, func(i, j int) bool { return same[i].less(same[j]) })
	curRates, refRates := map[rdma.GUID]rate{}, map[rdma.GUID]rate{}
	for _, l := range same {
		curRates[l.a.guid] = rateOf(c.links[l], l)
		refRates[l.a.guid] = rateOf(r.links[l], l)
	}
	var keys []rdma.GUID
	for g := range curRates {
		if curRates[g] != refRates[g] {
			keys = append(keys, g)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var rates []string
	for _, g := range keys {
		cr, rr := curRates[g], refRates[g]
		rates = append(rates, fmt.Sprintf("%s: %s %dx  %s %dx", cr.link, linkSpeedNames(cr.speed), linkWidthLanes(cr.width),
			linkSpeedNames(rr.speed), linkWidthLanes(rr.width)))
	}
	report(w, rates, " The subnets have %d different link rates",
		" All links in the current subnet have the same rate in the reference subnet.")

	fmt.Fprintf(w, "Current subnet has %d LIDs, reference subnet has %d LIDs\n", len(c.lids), len(r.lids))
	var lids []int
	for l, g := range c.lids {
		if rg, ok := r.lids[l]; !ok || rg != g {
			lids = append(lids, l)
		}
	}
	for l := range r.lids {
		if _, ok := c.lids[l]; !ok {
			lids = append(lids, l)
		}
	}
	sort.Ints(lids)
	var lidLines []string
	for _, l := range lids {
		cg, cok := c.lids[l]
		rg, rok := r.lids[l]
		switch {
		case !cok:
			lidLines = append(lidLines, fmt.Sprintf("%5d: %-19s %s", l, "      !Cur", rg.Colon()))
		case !rok:
			lidLines = append(lidLines, fmt.Sprintf("%5d: %s %-19s", l, cg.Colon(), "      !Ref"))
		default:
			lidLines = append(lidLines, fmt.Sprintf("%5d: %s %s", l, cg.Colon(), rg.Colon()))
		}
	}
	report(w, lidLines, " The subnets have %d different LID assignments (LID: Current portGUID, Reference portGUID):",
		" All LIDs in the current subnet are the same as the reference subnet.")
}
