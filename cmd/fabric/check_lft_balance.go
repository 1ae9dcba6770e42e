package fabric

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// check_lft_balance is infiniband-diags' Perl script of that name: from a
// dump_lfts output and an ibnetdiscover cache it counts, for each switch,
// the CA LIDs routed out of each port, and reports switches whose ports
// carry uneven numbers (after leaving out ports that are down and ports
// that lead straight to a host). ibtool follows the script line by line,
// quirks included, so the reports match; where the script greps
// iblinkinfo's lines of the switch for a port's state, ibtool reads the
// cached ports' states themselves.

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "check_lft_balance",
		Summary: "check that switches spread the routes to hosts evenly over their ports",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newCheckLFTBalanceCmd(f, nil) },
	})
}

// checkLFTBalanceOptions are check_lft_balance's parsed flags.
type checkLFTBalanceOptions struct {
	IO        cmdutil.IOStreams
	LFTFile   string // -l: dump_lfts output
	CacheFile string // -i: ibnetdiscover cache
	Verbose   bool   // -v: every switch
	Heuristic bool   // -e: the lineboard heuristics
}

func newCheckLFTBalanceCmd(f *cmdutil.Factory, runF func(*checkLFTBalanceOptions) error) *cobra.Command {
	o := &checkLFTBalanceOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "check_lft_balance -l lft-output -i ibnetdiscover-cache [-e] [-v]",
		Short: "check that switches spread the routes to hosts evenly over their ports",
		Long: `check_lft_balance reads the output of dump_lfts (dump_lfts > lft-output) and an
ibnetdiscover cache (ibnetdiscover --cache ibnetdiscover-cache), counts the
host LIDs each switch routes out of each port, and reports the switches
whose ports differ by more than one, as infiniband-diags' script does.`,
		Example: "  dump_lfts > lfts; ibnetdiscover --cache fabric.cache > /dev/null\n  check_lft_balance -l lfts -i fabric.cache -v",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if o.LFTFile == "" {
				return cmdutil.UsageErrorf("must specify dump lfts file (-l)")
			}
			if o.CacheFile == "" {
				return cmdutil.UsageErrorf("must specify ibnetdiscover cache (-i)")
			}
			if runF != nil {
				return runF(o)
			}
			return checkLFTBalanceRun(o)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&o.LFTFile, "lft", "l", "", "dump_lfts output")
	fl.StringVarP(&o.CacheFile, "ibnetdiscover-cache", "i", "", "ibnetdiscover cache file")
	fl.BoolVarP(&o.Verbose, "verbose", "v", false, "report every switch")
	fl.BoolVarP(&o.Heuristic, "heuristic", "e", false, "look at switch balances deeper (lineboards, partly populated switches)")
	return c
}

func checkLFTBalanceRun(o *checkLFTBalanceOptions) error {
	lfts, err := os.ReadFile(o.LFTFile)
	if err != nil {
		return &cmdutil.UsageError{Err: fmt.Errorf("couldn't open dump lfts file: %w", err)}
	}
	fab, err := cmdutil.LoadFabric(o.CacheFile)
	if err != nil {
		return err
	}
	b := &lftBalance{o: o, fab: fab, out: bufio.NewWriter(o.IO.Out)}
	b.run(lfts)
	return b.out.Flush()
}

// lftBalance is the script's state while it reads the dump.
type lftBalance struct {
	o   *checkLFTBalanceOptions
	fab *subnet.Fabric
	out *bufio.Writer

	switchGUID, switchName string
	named                  bool
	portCount              map[string]int
	maybeHosts             []string
	host                   string
	hostPorts              []string
	lidsPerPort            int
	lidsPerPortCalculated  int
}

var (
	lbUnicastDR  = &cmdutil.LazyRegexp{Expr: `Unicast lids .+ of switch DR path slid .+ guid (.+) \((.+)\)`}
	lbUnicastLID = &cmdutil.LazyRegexp{Expr: `Unicast lids .+ of switch Lid .+ guid (.+) \((.+)\)`}
	lbHostLine   = &cmdutil.LazyRegexp{Expr: `.+ (.+) : \(.+ portguid .+: '(.+)'\)`}
	lbPathLine   = &cmdutil.LazyRegexp{Expr: `.+ (.+) : \(path #. out of .: portguid .+\)`}
)

func (b *lftBalance) run(lfts []byte) {
	b.portCount = map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(string(lfts), "\n"), "\n") {
		switch {
		case strings.Contains(line, "Unicast"):
			if len(b.hostPorts) > 0 {
				b.processHostPorts()
			}
			if b.named {
				b.switchUsage()
			}
			if m := lbUnicastDR.Get().FindStringSubmatch(line); m != nil {
				b.switchGUID, b.switchName, b.named = m[1], m[2], true
			}
			if m := lbUnicastLID.Get().FindStringSubmatch(line); m != nil {
				b.switchGUID, b.switchName, b.named = m[1], m[2], true
			}
			b.maybeHosts, b.portCount, b.hostPorts = nil, map[string]int{}, nil
			b.lidsPerPort, b.lidsPerPortCalculated = 0, 0
		case strings.Contains(line, "Channel") || strings.Contains(line, "Router"):
			// A failed match leaves the script's $1 and $2 as they were;
			// they come from the same line in practice.
			port, host := "", ""
			if m := lbHostLine.Get().FindStringSubmatch(line); m != nil {
				port, host = m[1], m[2]
			}
			b.host = host
			b.portCount[port]++
			if len(b.hostPorts) > 0 {
				b.processHostPorts()
			}
			b.hostPorts = []string{port}
			if b.lidsPerPort == 0 {
				b.lidsPerPort++
			} else {
				b.lidsPerPortCalculated++
			}
		case strings.Contains(line, "path"):
			port := ""
			if m := lbPathLine.Get().FindStringSubmatch(line); m != nil {
				port = m[1]
			}
			b.portCount[port]++
			if b.lidsPerPortCalculated == 0 {
				b.lidsPerPort++
			}
			b.hostPorts = append(b.hostPorts, port)
		default:
			if b.lidsPerPort != 0 {
				b.lidsPerPortCalculated++
			}
		}
	}
	if len(b.hostPorts) > 0 {
		b.processHostPorts()
	}
	b.switchUsage()
}

// processHostPorts marks the last host as maybe directly connected when
// all its LIDs leave by one port.
func (b *lftBalance) processHostPorts() {
	if len(b.hostPorts) != b.lidsPerPort {
		return
	}
	for _, p := range b.hostPorts {
		if perlNum(p) != perlNum(b.hostPorts[0]) {
			return
		}
	}
	b.maybeHosts = append(b.maybeHosts, b.host)
}

// switchNode is the current switch in the cache, as `iblinkinfo
// --load-cache CACHE -S GUID` finds it: nil (the script's empty output)
// when its GUID does not parse or the cache has no such port.
func (b *lftBalance) switchNode() *subnet.Node {
	g, err := rdma.ParseGUID(b.switchGUID)
	if err != nil {
		return nil
	}
	p := b.fab.PortByGUID(g)
	if p == nil {
		fmt.Fprintf(b.o.IO.ErrOut, "check_lft_balance: no port %s in %s\n", b.switchGUID, b.o.CacheFile)
		return nil
	}
	return p.Node
}

// portLines returns the ports of n whose iblinkinfo line the script's
// /$decport\[..\] ==/ finds for port ("001"), in iblinkinfo's order: the
// port itself, and for ports 10 and up also the ports of three digits
// that end in the same two ("112[  ] ==" holds "12[  ] ==").
func portLines(n *subnet.Node, port string) []*subnet.Port {
	if n == nil {
		return nil
	}
	want := perlNum(port)
	var out []*subnet.Port
	for num := 1; num <= n.NumPorts; num++ {
		p := n.Port(num)
		if p == nil {
			continue
		}
		if num == want || want >= 10 && num >= 100 && num%100 == want {
			out = append(out, p)
		}
	}
	return out
}

// lineHas reports whether p's iblinkinfo line holds word, as the script's
// /Down/ and /Active/ test it: in the link's state, or in what the line
// prints of the far end (its name, what the link could run at).
func lineHas(p *subnet.Port, word string) bool {
	pi := p.InfoOrZero()
	if strings.Contains(mad.FormatPortState.Text(uint32(pi.LinkState)), word) ||
		strings.Contains(mad.FormatPhysPortState.Text(uint32(pi.PhysLinkState)), word) {
		return true
	}
	if p.Remote == nil {
		return false
	}
	width, speed := p.CouldBe()
	name := (*nodemap.Map)(nil).Name(uint64(p.Remote.Node.GUID), p.Remote.Node.Desc)
	return strings.Contains(name, word) || strings.Contains(width, word) || strings.Contains(speed, word)
}

// perlNum is a string's value as a Perl number: its leading integer, 0
// when there is none.
func perlNum(s string) int {
	s = strings.TrimLeft(s, " \t")
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || end == 0 && (s[0] == '-' || s[0] == '+')) {
		end++
	}
	n, _ := strconv.Atoi(s[:end])
	return n
}

// switchUsage is output_switch_port_usage for the current switch.
func (b *lftBalance) switchUsage() {
	sw := b.switchNode()
	minUsage, maxUsage := 999999, 0
	minUsage2, maxUsage2 := 999999, 0
	var outputPorts []string
	portsOnSwitch := 0
	unbalanced := false
	for i := 1; i <= 36; i++ {
		port := fmt.Sprintf("%03d", i)
		count := b.portCount[port]
		if count == 0 {
			// is_port_up: the first line of the port; down or missing
			// leaves it out.
			lines := portLines(sw, port)
			if len(lines) == 0 || lineHas(lines[0], "Down") {
				continue
			}
		}
		portsOnSwitch++
		if b.directlyConnected(sw, port) {
			continue
		}
		outputPorts = append(outputPorts, port)
		minUsage = min(minUsage, count)
		maxUsage = max(maxUsage, count)
	}
	if maxUsage > minUsage+1 {
		unbalanced = true
	}
	if b.o.Heuristic && unbalanced && portsOnSwitch > 12 {
		// A lineboard: about half the ports balanced is balanced.
		var check []string
		for _, p := range outputPorts {
			c := b.portCount[p]
			if c == maxUsage || c == maxUsage-1 || c == 0 {
				continue
			}
			check = append(check, p)
		}
		half := portsOnSwitch / 2
		if n := len(check); n == half || n == half+1 || n == half-1 {
			for _, p := range check {
				minUsage2 = min(minUsage2, b.portCount[p])
				maxUsage2 = max(maxUsage2, b.portCount[p])
			}
			if !(maxUsage2 > minUsage2+1) {
				unbalanced = false
			}
		}
	}
	if b.o.Heuristic && unbalanced && portsOnSwitch > 12 {
		// A partly populated switch: the rest all zero is balanced.
		allZero := true
		for _, p := range outputPorts {
			c := b.portCount[p]
			if c == maxUsage || c == maxUsage-1 {
				continue
			}
			if c != 0 {
				allZero = false
				break
			}
		}
		if allZero {
			unbalanced = false
		}
	}
	if b.o.Verbose || unbalanced {
		if unbalanced {
			fmt.Fprintf(b.out, "Unbalanced Switch Port Usage: %s, %s\n", b.switchName, b.switchGUID)
		} else {
			fmt.Fprintf(b.out, "Switch Port Usage: %s, %s\n", b.switchName, b.switchGUID)
		}
		for _, p := range outputPorts {
			fmt.Fprintf(b.out, "Port %s: %d\n", p, b.portCount[p])
		}
	}
}

// directlyConnected is is_directly_connected. The script's pattern for the
// peer's name never matches iblinkinfo's lines (it wants two spaces before
// "=="), so its $1 is undefined, which as a number is 0 and equals every
// host name that does not start with a number: a port whose count is one
// host's LIDs and whose line says Active counts as leading to a host
// whenever the switch has such a host.
func (b *lftBalance) directlyConnected(sw *subnet.Node, port string) bool {
	if b.portCount[port] != b.lidsPerPort || len(b.maybeHosts) == 0 {
		return false
	}
	lines := portLines(sw, port)
	if len(lines) == 0 || !lineHas(lines[len(lines)-1], "Active") {
		return false
	}
	for _, h := range b.maybeHosts {
		if perlNum(h) == 0 {
			return true
		}
	}
	return false
}
