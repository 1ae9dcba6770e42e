package cmdutil

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/hugeheap"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// DiscoveryOptions are the flags of the tools that discover the fabric.
type DiscoveryOptions struct {
	// Outstanding is -o: SMPs in flight at once (0: ibtool's default).
	Outstanding int
	// MaxHops bounds the walk (0: no bound).
	MaxHops int
	// NoMlxEPI turns off MlnxExtPortInfo queries.
	NoMlxEPI bool
	// Mode is --discovery: "dr", "lid" or "sa", folded to lower case by
	// Finish (python-rdma spells them DR, LID, SA).
	Mode string
	// SANoPortInfo, set by a tool that reads no PortInfo, has SA
	// discovery leave out the PortInfoRecords.
	SANoPortInfo bool
	// Cache is --cache and RefreshCache --refresh-cache: python-rdma's
	// discovery cache (discovery_cache.go).
	Cache        string
	RefreshCache bool
	// WritesCache, set by ibnetdiscover, leaves Cache to the tool:
	// infiniband-diags' ibnetdiscover --cache writes a fresh discovery.
	WritesCache bool
	// SA is python-rdma's --sa on a discovery tool: --discovery sa
	// (--sa-path implies it too).
	SA bool
	// PortsRead, set by a tool, is told of the ports a directed-route
	// or LID-routed walk reads as it goes (subnet.Options.PortsRead).
	PortsRead func(subnet.NodePorts)
	// smkeyArg is --smkey as typed: the SM_Key of the run's SA queries
	// (Finish puts it in the common options' SMKey).
	smkeyArg string

	flags  *pflag.FlagSet // the command's, to see whether --discovery was given
	common *CommonOptions
}

// defaultOutstanding is the window discovery uses unless -o says otherwise:
// libibnetdisc keeps 2 SMPs in flight, which is what makes it slow.
const defaultOutstanding = 64

// fabricHeapHint is how much heap discovery advises the kernel to back
// with huge pages (see hugeheap): a 30,000-node fabric's walk builds about
// 200 MB, and memory the walk never reaches costs nothing.
const fabricHeapHint = 256 << 20

// AddDiscoveryFlags registers the discovery flags on c; the run's
// transactor then opens with the discovery's window.
func AddDiscoveryFlags(c *cobra.Command, o *CommonOptions, d *DiscoveryOptions) {
	o.discovery = d
	fl := c.Flags()
	fl.IntVarP(&d.Outstanding, "outstanding_smps", "o", 0, fmt.Sprintf("SMPs in flight at once during the scan (default %d)", defaultOutstanding))
	addMKeyFlag(c, o)
	fl.BoolVar(&d.NoMlxEPI, "no-mlx-epi", false, "do not read MlnxExtPortInfo (FDR10) from Mellanox QDR links")
	fl.StringVar(&d.Cache, "cache", "", "python-rdma's discovery cache: read the fabric from this file when it is there, else discover and write it ($C/${CA} device, $P/${PORT} port, $A both)")
	fl.BoolVar(&d.RefreshCache, "refresh-cache", false, "discover even when the --cache file is there, and write it anew")
	fl.StringVar(&d.Mode, "discovery", "dr", "dr: every SMP by directed route; lid: a node's SMPs by LID once its LID is known; sa: the SA's records, no SMPs (any case)")
	d.flags, d.common = fl, o
	if fl.Lookup("smkey") == nil {
		// 0, not python-rdma's 1: what the run sent before the flag and
		// what infiniband-diags' SA clients send unless ibdiag.conf's
		// sa_key says otherwise (docs/differences.md).
		o.saFlags = true // ibdiag.conf's sa_key when --smkey is not given
		fl.StringVar(&d.smkeyArg, "smkey", "", "SM_Key of the SA queries (--discovery sa's, --sa's): decimal, 0x hex or 0 octal (default 0, or ibdiag.conf's sa_key)")
	}
	if fl.Lookup("sa") == nil {
		fl.BoolVar(&d.SA, "sa", false, "discover through the SA (python-rdma's; the same as --discovery sa)")
		fl.StringVar(&o.SAPathArg, "sa-path", "", "send SA queries to this LID, port GUID, GID or IBPath(...) instead of the local port's SM; implies --sa")
	}
}

// Finish checks and folds the discovery flags.
func (d *DiscoveryOptions) Finish() error {
	switch mode := strings.ToLower(d.Mode); mode {
	case "dr", "lid", "sa":
		d.Mode = mode
	default:
		return UsageErrorf("invalid --discovery %q: want dr, lid or sa (any case)", d.Mode)
	}
	// python-rdma: --sa (or --sa-path) discovers through the SA, and
	// cannot go with another --discovery.
	if d.SA || d.common != nil && d.common.SAPathArg != "" {
		flag := "--sa"
		if !d.SA {
			flag = "--sa-path"
		}
		if d.Mode != "sa" && d.flags != nil && d.flags.Changed("discovery") {
			return UsageErrorf("%s discovers through the SA; it cannot go with --discovery %s", flag, d.Mode)
		}
		d.Mode = "sa"
	}
	if d.Outstanding < 0 {
		return UsageErrorf("invalid -o %d: want 1 or more", d.Outstanding)
	}
	if d.smkeyArg != "" {
		// As python-rdma's optparse reads an int, and as --smkey of
		// the --sa tools reads it: 0x hex, 0b binary, a leading 0 octal.
		key, err := strconv.ParseUint(d.smkeyArg, 0, 64)
		if err != nil || strings.Contains(d.smkeyArg, "_") {
			return UsageErrorf("invalid --smkey %q: want a number (0x hex, 0b binary, a leading 0 octal) up to 0xffffffffffffffff", d.smkeyArg)
		}
		d.common.SMKey = key
	}
	return nil
}

// DiscoverFabric opens the transport the common options name and walks the
// fabric, then groups chassis as libibnetdisc does after every walk (which
// gives chassis ports their external numbers). Progress goes to stderr when
// it is a terminal. The queries that failed are left in the fabric's Errors
// for the caller to report.
//
// With --cache the fabric comes from the cache file when it is there, and
// a fresh discovery is written to it (discovery_cache.go).
func (f *Factory) DiscoverFabric(tool string, o *CommonOptions, d *DiscoveryOptions, from []uint8) (*subnet.Fabric, error) {
	var cache string
	if d.usesCache(from) {
		var err error
		if cache, err = f.cacheFile(o, d); err != nil {
			return nil, err
		}
		if fab, err := f.loadCached(tool, o, d, cache); fab != nil || err != nil {
			return fab, err
		}
	}
	fab, err := f.walkFabric(o, d, from)
	if err != nil {
		return nil, err
	}
	if _, err := fab.GroupChassisErr(); err != nil {
		fmt.Fprintf(f.IO.ErrOut, "%s: warning: %v; chassis are not grouped\n", tool, err)
	}
	if cache != "" {
		if err := f.saveCached(tool, o, fab, cache); err != nil {
			return nil, err
		}
	}
	return fab, nil
}

// walkFabric is discoverFabric without the chassis grouping.
func (f *Factory) walkFabric(o *CommonOptions, d *DiscoveryOptions, from []uint8) (*subnet.Fabric, error) {
	// The fabric is built in well under a second, so where a page fault
	// costs microseconds (virtual machines) the faults of 4 KiB pages are
	// a visible part of the walk (docs/bench.md).
	hugeheap.Advise(fabricHeapHint)
	x, err := o.Transactor()
	if err != nil {
		return nil, err
	}
	if d.Mode == "sa" {
		if len(from) > 0 || d.MaxHops > 0 {
			return nil, UsageErrorf("--discovery sa reads the whole subnet from the SA; a scan from a node or of a few hops needs dr or lid")
		}
		return subnet.DiscoverSA(o.Context(), x, subnet.SAOptions{NoPortInfo: d.SANoPortInfo})
	}
	so := subnet.Options{From: from, MaxHops: d.MaxHops, MlnxExtPortInfo: !d.NoMlxEPI, LIDRouted: d.Mode == "lid", PortsRead: d.PortsRead}
	var progress *progressLine
	if f.IO.ErrOutIsTTY {
		progress = &progressLine{w: f.IO.ErrOut}
		so.Progress = func(nodes, hops int) { progress.show("discovering: %d nodes, %d hops", nodes, hops) }
		defer progress.clear()
	}
	defer f.ShareCPUsWithSimulator(o)()
	return subnet.Discover(o.Context(), x, so)
}

// window is the transactor's window for a discovery: -o, or ibtool's
// default.
func (d *DiscoveryOptions) window() int {
	if d.Outstanding == 0 {
		return defaultOutstanding
	}
	return d.Outstanding
}

// ParseNodeSelectors parses the -G (port GUID) and -D (directed route)
// arguments that name one node of the fabric; empty ones give zero values.
func ParseNodeSelectors(guidArg, drArg string) (rdma.GUID, []uint8, error) {
	var guid rdma.GUID
	var dr []uint8
	if guidArg != "" {
		g, err := rdma.ParseGUID(guidArg)
		if err != nil {
			return 0, nil, UsageErrorf("invalid port GUID %q: %v", guidArg, err)
		}
		guid = g
	}
	if drArg != "" {
		t, err := endport.ParseTarget(drArg, endport.DirectRoute)
		if err != nil {
			return 0, nil, &UsageError{Err: err}
		}
		p, err := smpPath(t)
		if err != nil {
			return 0, nil, err
		}
		dr = p.DR
	}
	return guid, dr, nil
}

// ReportPartial writes each failed query of a partial discovery to errOut
// and returns the error the tool ends with: nil when nothing failed.
func ReportPartial(tool string, fab *subnet.Fabric, errOut io.Writer) error {
	if !fab.Partial() {
		return nil
	}
	for _, e := range fab.Errors {
		fmt.Fprintf(errOut, "%s: %v\n", tool, e)
	}
	return fmt.Errorf("discovery incomplete: %d queries failed; the fabric shown is partial", len(fab.Errors))
}

// progressLine rewrites one line on a terminal, at most ten times a second.
type progressLine struct {
	w     io.Writer
	last  time.Time
	shown bool
}

func (p *progressLine) show(format string, a ...any) {
	if now := time.Now(); now.Sub(p.last) >= 100*time.Millisecond {
		p.last = now
		p.shown = true
		fmt.Fprintf(p.w, "\r\033[K"+format, a...)
	}
}

func (p *progressLine) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
