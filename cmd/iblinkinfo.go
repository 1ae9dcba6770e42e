package cmd

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func init() {
	register(Tool{
		Name:    "iblinkinfo",
		Summary: "report the state of every link of the fabric",
		New:     func(f *Factory) *cobra.Command { return newIblinkinfoCmd(f, nil) },
	})
}

// iblinkinfoOptions are iblinkinfo's parsed flags.
type iblinkinfoOptions struct {
	IO        IOStreams
	Common    CommonOptions
	Discovery discoveryOptions
	// GUID is -S/-G: print the node with this port GUID.
	GUID    rdma.GUID
	guidArg string
	// DR is -D: scan from this directed route and print the node there.
	DR    []uint8
	drArg string
	// Hops is -n: hops to scan beyond the -D node (0: 1 with -D, else
	// no bound).
	Hops       int
	All        bool // -a
	DownOnly   bool // -d
	Line       bool // -l
	Additional bool // -p
	// Only is --switches-only or --cas-only; 0 for every type.
	Only mad.NodeType
	// LoadCache reads the fabric from a cache file instead of
	// discovering; Diff prints what changed since a cached fabric,
	// DiffCheck what to compare; FilterDownPorts hides the ports that
	// are down in that cached fabric too.
	LoadCache, Diff, FilterDownPorts string
	DiffCheck                        diffFlags
	diffCheckArg                     string
	// Discover walks the fabric from a directed route (nil: the local
	// port) with the hop bound.
	Discover func(from []uint8, hops int) (*subnet.Fabric, error)
	names    *nodemap.Map
}

func newIblinkinfoCmd(f *Factory, runF func(*iblinkinfoOptions) error) *cobra.Command {
	o := &iblinkinfoOptions{IO: f.IO}
	var switchesOnly, casOnly bool
	c := &cobra.Command{
		Use:   "iblinkinfo [options]",
		Short: "report the state of every link of the fabric",
		Long: `iblinkinfo discovers the fabric and prints every port of every node: its LID,
width, speed, state and physical state, the port at the other end, and what
the link could run at when both ends support more, as infiniband-diags'
iblinkinfo does.`,
		Example: `  iblinkinfo                      # every link
  iblinkinfo -d                   # down ports only
  iblinkinfo -l                   # one line per port
  iblinkinfo --switches-only
  iblinkinfo -D 0,1               # the switch one hop away
  iblinkinfo -S 0x0002c90300a1b2c4`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.finish(c); err != nil {
				return err
			}
			if err := o.Discovery.finish(); err != nil {
				return err
			}
			if switchesOnly && casOnly {
				return usageErrorf("--switches-only and --cas-only: give one")
			}
			if switchesOnly {
				o.Only = mad.NodeTypeSwitch
			} else if casOnly {
				o.Only = mad.NodeTypeCA
			}
			var err error
			if o.GUID, o.DR, err = parseNodeSelectors(o.guidArg, o.drArg); err != nil {
				return err
			}
			if o.DR != nil && o.GUID != 0 {
				return usageErrorf("-D and -S name the node to print; give one")
			}
			if o.Hops < 0 {
				return usageErrorf("invalid hops %d", o.Hops)
			}
			if o.DR != nil && o.LoadCache != "" {
				return usageErrorf("cannot specify cache and direct route path")
			}
			o.DiffCheck = diffPort | diffState
			if c.Flags().Changed("diffcheck") {
				d, err := parseDiffCheck(o.diffCheckArg, iblinkinfoDiffKeys)
				if err != nil {
					return err
				}
				o.DiffCheck = d
			}
			o.Discover = func(from []uint8, hops int) (*subnet.Fabric, error) {
				if o.LoadCache != "" {
					return loadFabric(o.LoadCache)
				}
				d := o.Discovery
				d.MaxHops = hops
				return f.discoverFabric("iblinkinfo", &o.Common, &d, from)
			}
			if runF != nil {
				return runF(o)
			}
			return iblinkinfoRun(o)
		},
	}
	addCommonFlags(c, &o.Common, flagsLocalPort|flagsMAD|flagsJSON|flagsNodeMap|flagsNoDebugShort)
	addDiscoveryFlags(c, &o.Discovery)
	fl := c.Flags()
	fl.StringVarP(&o.guidArg, "switch", "S", "", "print the node with this port GUID")
	fl.StringVarP(&o.guidArg, "port-guid", "G", "", "(same as -S)")
	fl.StringVarP(&o.drArg, "Direct", "D", "", "scan from this directed route and print the node there")
	fl.IntVarP(&o.Hops, "hops", "n", 0, "hops to scan beyond the -D node (default 1)")
	fl.BoolVarP(&o.All, "all", "a", false, "print every node of a partial scan")
	fl.BoolVarP(&o.DownOnly, "down", "d", false, "print only down links")
	fl.BoolVarP(&o.Line, "line", "l", false, "print each link on one line")
	fl.BoolVarP(&o.Additional, "additional", "p", false, "print additional port settings (HOQLife, VLStallCount)")
	fl.BoolVar(&switchesOnly, "switches-only", false, "print only switches")
	fl.BoolVar(&casOnly, "cas-only", false, "print only CAs")
	fl.StringVar(&o.LoadCache, "load-cache", "", "read the fabric from this cache file instead of discovering")
	fl.StringVar(&o.Diff, "diff", "", "print what changed since the fabric in this cache file")
	fl.StringVar(&o.diffCheckArg, "diffcheck", "", "what --diff compares: port,state,lid,nodedesc (default port,state)")
	fl.StringVar(&o.FilterDownPorts, "filterdownports", "", "hide ports that are down in this cached fabric too")
	fl.BoolP("R", "R", false, "ignored (infiniband-diags keeps it for old scripts)")
	fl.MarkHidden("R")
	return c
}

func iblinkinfoRun(o *iblinkinfoOptions) error {
	var err error
	if o.names, err = o.Common.loadNodeMap("iblinkinfo", o.IO.ErrOut); err != nil {
		return err
	}
	var orig, filter *subnet.Fabric
	if o.Diff != "" {
		if orig, err = loadFabric(o.Diff); err != nil {
			return err
		}
	}
	if o.FilterDownPorts != "" {
		if filter, err = loadFabric(o.FilterDownPorts); err != nil {
			return err
		}
	}
	hops := o.Hops
	if o.DR != nil && hops == 0 {
		hops = 1
	}
	fab, err := o.Discover(o.DR, hops)
	if err != nil {
		if o.LoadCache != "" {
			return err
		}
		return withContext(err, "discovery")
	}
	partial := reportPartial("iblinkinfo", fab, o.IO.ErrOut)
	var nodes []*subnet.Node
	one := false // a single node named by -S or -D
	switch {
	case !o.All && o.GUID != 0:
		p := fab.PortByGUID(o.GUID)
		if p == nil {
			return fmt.Errorf("no port with GUID %s in the fabric", o.GUID)
		}
		if o.Only == 0 || p.Node.Type == o.Only {
			nodes = []*subnet.Node{p.Node}
		}
		one = true
	case !o.All && o.DR != nil:
		if o.Only == 0 || fab.From.Type == o.Only {
			nodes = []*subnet.Node{fab.From}
		}
		one = true
	case o.Only != 0:
		nodes = fab.ByType(o.Only)
	default:
		nodes = fab.All()
	}
	if o.Common.JSON {
		if err := writeJSONDocument(o.IO.Out, linkInfoJSON(nodes, o)); err != nil {
			return err
		}
		return partial
	}
	w := newTableWriter(o.IO.Out)
	l := &linkPrinter{w: w, o: o, filter: filter}
	if orig != nil {
		l.diff(orig, fab, nodes, one)
	} else {
		for _, n := range nodes {
			l.node(n, "")
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return partial
}

// linkPrinter prints nodes as iblinkinfo.c's print_node does.
type linkPrinter struct {
	w *bufio.Writer
	o *iblinkinfoOptions
	// filter, when set, hides the ports down in it and here.
	filter *subnet.Fabric
	buf    []byte // the line being built
}

func (l *linkPrinter) name(n *subnet.Node) string { return l.o.names.Name(uint64(n.GUID), n.Desc) }

// nodeTypeName is iblinkinfo's nodetype_str.
func nodeTypeName(n *subnet.Node) string {
	if s := n.Type.Abbrev(); s != "" {
		return s
	}
	return "??"
}

// node prints the node's ports (the down ones with -d), its header first.
func (l *linkPrinter) node(n *subnet.Node, prefix string) {
	header := false
	for num := 1; num <= n.NumPorts; num++ {
		p := n.Port(num)
		if p == nil {
			continue
		}
		if l.o.DownOnly && linkState(p) != mad.PortStateDown {
			continue
		}
		if !header && !l.o.Line {
			l.header(n, prefix)
		}
		header = true
		l.port(p, prefix)
	}
}

// header prints "Switch: 0x... name:" or "CA: name:".
func (l *linkPrinter) header(n *subnet.Node, prefix string) {
	if n.Type == mad.NodeTypeSwitch {
		guid := n.Info.PortGUID
		if p0 := n.Port(0); p0 != nil {
			guid = p0.GUID
		}
		fmt.Fprintf(l.w, "%sSwitch: 0x%016x %s:\n", prefix, uint64(guid), l.name(n))
		return
	}
	fmt.Fprintf(l.w, "%s%s: %s:\n", prefix, nodeTypeName(n), l.name(n))
}

// linkState is the port's PortState, 0 when its PortInfo was not read.
func linkState(p *subnet.Port) mad.PortState {
	if p.Info == nil {
		return 0
	}
	return p.Info.LinkState
}

// info returns the port's PortInfo, zero when it was not read (as
// libibnetdisc's zeroed buffer). Callers only read it.
func info(p *subnet.Port) *mad.PortInfo {
	if p.Info == nil {
		return &zeroPortInfo
	}
	return p.Info
}

// extInfo returns the port's MlnxExtPortInfo, zero when not read. Callers
// only read it.
func extInfo(p *subnet.Port) *mad.MlnxExtPortInfo {
	if p.ExtInfo == nil {
		return &zeroExtInfo
	}
	return p.ExtInfo
}

// noPeerText ends the line of a port that is down and has no far end.
const noPeerText = "           [  ] \"\" ( )\n"

// zeroPortInfo and zeroExtInfo stand for attributes not read; never
// written.
var (
	zeroPortInfo mad.PortInfo
	zeroExtInfo  mad.MlnxExtPortInfo
)

// capMaskOf is the capability mask libibnetdisc's tools read for a port:
// port 0's for a switch (0 when port 0 is unknown), the port's own for a
// CA; ok is false when there is none to read.
func capMaskOf(p *subnet.Port) (mask uint32, ok bool) {
	q := p
	if p.Node.Type == mad.NodeTypeSwitch {
		if q = p.Node.Port(0); q == nil {
			return 0, false
		}
	}
	return info(q).CapabilityMask, true
}

// appendLink appends the "( 4X 2.5 Gbps Active/ LinkUp)" part of a port
// line to b.
func (l *linkPrinter) appendLink(b []byte, p *subnet.Port) []byte {
	pi := info(p)
	width, speed := uint32(pi.LinkWidthActive), uint32(pi.LinkSpeedActive)
	fdr10 := extInfo(p).LinkSpeedActive&1 != 0
	var ext uint32
	if mask, ok := capMaskOf(p); ok {
		if mask&mad.PortCapIsExtendedSpeedsSupported != 0 {
			ext = uint32(pi.LinkSpeedExtActive)
		}
	} else {
		width, speed = 0, 0
	}
	if pi.LinkState != mad.PortStateDown {
		b = append(b, '(')
		b = appendRight(b, 3, func(b []byte) []byte { return mad.FormatLinkWidth.AppendText(b, width) })
		b = append(b, ' ')
		b = appendRight(b, 18, func(b []byte) []byte { return appendSpeedText(b, ext, speed, fdr10) })
		b = append(b, ' ')
	} else {
		b = append(b, "(              "...)
	}
	b = appendRight(b, 6, func(b []byte) []byte { return mad.FormatPortState.AppendText(b, uint32(pi.LinkState)) })
	b = append(b, '/')
	b = appendRight(b, 8, func(b []byte) []byte { return mad.FormatPhysPortState.AppendText(b, uint32(pi.PhysLinkState)) })
	b = append(b, ')')
	if pi.LinkState != mad.PortStateDown && l.o.Additional {
		b = strconv.AppendUint(append(b, " (HOQ:"...), uint64(pi.HOQLife), 10)
		b = strconv.AppendUint(append(b, " VL_Stall:"...), uint64(pi.VLStallCount), 10)
		b = append(b, ')')
	}
	return b
}

// appendRight appends what add appends, right-aligned in a field of width
// w, as fmt's %*s does.
func appendRight(b []byte, w int, add func([]byte) []byte) []byte {
	start := len(b)
	b = add(b)
	if n := len(b) - start; n < w {
		pad := w - n
		for range pad {
			b = append(b, ' ')
		}
		copy(b[start+pad:], b[start:start+n])
		for i := start; i < start+pad; i++ {
			b[i] = ' '
		}
	}
	return b
}

// appendInt appends v right-aligned in a field of width w (fmt's %*d).
func appendInt(b []byte, v, w int) []byte {
	return appendRight(b, w, func(b []byte) []byte { return strconv.AppendInt(b, int64(v), 10) })
}

// appendGUID appends v as "0x" and 16 hex digits (fmt's 0x%016x).
func appendGUID(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	b = append(b, '0', 'x')
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[v>>uint(shift)&0xf])
	}
	return b
}

// appendPortNum appends a port's number and external number as print_port
// does: "%4d[%2s]".
func appendPortNum(b []byte, p *subnet.Port) []byte {
	b = append(appendInt(b, p.Num, 4), '[')
	if p.ExtNum != 0 {
		b = appendInt(b, p.ExtNum, 2)
	} else {
		b = append(b, "  "...)
	}
	return append(b, ']')
}

// filtered reports whether --filterdownports hides the port: down here
// and down in the filter fabric (filterdownport_check).
func (l *linkPrinter) filtered(p *subnet.Port) bool {
	if l.filter == nil || linkState(p) != mad.PortStateDown {
		return false
	}
	fn := l.filter.NodeByGUID(p.Node.GUID)
	if fn == nil {
		return false
	}
	fp := fn.Port(p.Num)
	return fp != nil && linkState(fp) == mad.PortStateDown
}

// port prints one port line (print_port).
func (l *linkPrinter) port(p *subnet.Port, prefix string) {
	if l.filtered(p) {
		return
	}
	n := p.Node
	b := append(l.buf[:0], prefix...)
	if l.o.Line {
		b = append(appendGUID(b, uint64(p.GUID)), " \""...)
		b = append(appendRight(b, 30, func(b []byte) []byte { return append(b, l.name(n)...) }), "\" "...)
	} else {
		b = append(b, "      "...)
	}
	lid := n.SMALID
	if n.Type != mad.NodeTypeSwitch {
		if !l.o.Line {
			b = append(appendGUID(b, uint64(p.GUID)), ' ')
		}
		lid = p.BaseLID
	}
	b = append(appendInt(b, int(lid), 6), ' ')
	b = append(appendPortNum(b, p), " =="...)
	b = append(l.appendLink(b, p), "==>  "...)
	switch {
	case p.Remote != nil:
		b = l.appendPeer(b, p, l.o.Line)
	case linkState(p) == mad.PortStateDown:
		b = append(b, noPeerText...)
	default:
		b = append(b, "    \"Port not available\"\n"...)
	}
	l.buf = b
	l.w.Write(b)
}

// peerLID is the LID printed for a link's far end: its port's, or for a
// switch port its port 0's.
func peerLID(r *subnet.Port) rdma.LID {
	if r.BaseLID == 0 {
		return r.Node.SMALID
	}
	return r.BaseLID
}

// appendPeer appends the far end of a linked port as print_port writes
// it (with its port GUID first when withGUID): LID, port, name, and what
// the link could run at.
func (l *linkPrinter) appendPeer(b []byte, p *subnet.Port, withGUID bool) []byte {
	r := p.Remote
	if withGUID {
		b = append(appendGUID(b, uint64(r.GUID)), ' ')
	}
	b = append(appendInt(b, int(peerLID(r)), 6), ' ')
	b = append(appendPortNum(b, r), " \""...)
	b = append(append(b, l.name(r.Node)...), "\" ("...)
	widthMsg, speedMsg := couldBe(p)
	return append(append(append(append(b, widthMsg...), ' '), speedMsg...), ")\n"...)
}

// maxWidth is ibdiag_common.c's get_max_width: the widest width in a set.
func maxWidth(set uint8) uint32 {
	r := 0
	switch {
	case set&8 != 0:
		r = 3
	case set&4 != 0:
		r = 2
	case set&2 != 0:
		r = 1
	case set&0x10 != 0:
		r = 4
	}
	return 1 << r
}

// highestBit is get_max: the highest bit set, 1 for none.
func highestBit(v uint32) uint32 {
	r := 0
	for v >>= 1; v != 0; v >>= 1 {
		r++
	}
	return 1 << r
}

// couldBe is get_max_msg: what the link could run at when both ends
// support more than it runs at ("Could be 12X", "Could be 10.0 Gbps").
func couldBe(p *subnet.Port) (widthMsg, speedMsg string) {
	r := p.Remote
	pi, ri := info(p), info(r)
	if w := maxWidth(uint8(pi.LinkWidthSupported & ri.LinkWidthSupported)); w&uint32(pi.LinkWidthActive) == 0 {
		widthMsg = couldBeText(mad.FormatLinkWidth, w)
	}
	mask, _ := capMaskOf(p)
	rmask, _ := capMaskOf(r)
	if mask&mad.PortCapIsExtendedSpeedsSupported != 0 && rmask&mad.PortCapIsExtendedSpeedsSupported != 0 &&
		pi.LinkSpeedExtSupported != 0 && ri.LinkSpeedExtSupported != 0 {
		if s := highestBit(uint32(pi.LinkSpeedExtSupported & ri.LinkSpeedExtSupported)); s&uint32(pi.LinkSpeedExtActive) == 0 {
			speedMsg = couldBeText(mad.FormatLinkSpeedExt, s)
		}
		return widthMsg, speedMsg
	}
	if extInfo(p).LinkSpeedSupported&1 != 0 && extInfo(r).LinkSpeedSupported&1 != 0 {
		if extInfo(p).LinkSpeedActive&1 == 0 {
			if pi.LinkSpeedActive == mad.LinkSpeedQDR {
				speedMsg = "Could be FDR10 (Found link at QDR but expected speed is FDR10)"
			} else {
				speedMsg = "Could be FDR10"
			}
		}
		return widthMsg, speedMsg
	}
	if s := highestBit(uint32(pi.LinkSpeedSupported & ri.LinkSpeedSupported)); s&uint32(pi.LinkSpeedActive) == 0 {
		speedMsg = couldBeText(mad.FormatLinkSpeed, s)
	}
	return widthMsg, speedMsg
}

// couldBeTexts holds the "Could be" texts made so far: a fabric has a
// few, printed on thousands of ports.
var couldBeTexts struct {
	sync.Mutex
	m map[couldBeKey]string
}

type couldBeKey struct {
	f mad.Format
	v uint32
}

// couldBeText is "Could be " and value v in format f.
func couldBeText(f mad.Format, v uint32) string {
	couldBeTexts.Lock()
	defer couldBeTexts.Unlock()
	k := couldBeKey{f, v}
	s, ok := couldBeTexts.m[k]
	if !ok {
		if couldBeTexts.m == nil {
			couldBeTexts.m = make(map[couldBeKey]string)
		}
		s = "Could be " + f.Text(v)
		couldBeTexts.m[k] = s
	}
	return s
}

// linkInfoJSON is the --json document: the nodes printed, each port with
// its state and peer.
func linkInfoJSON(nodes []*subnet.Node, o *iblinkinfoOptions) any {
	type remoteJSON struct {
		NodeGUID    string `json:"nodeGUID"`
		PortGUID    string `json:"portGUID"`
		Port        int    `json:"port"`
		LID         int    `json:"lid"`
		Description string `json:"description"`
	}
	type portJSON struct {
		Port         int         `json:"port"`
		PortGUID     string      `json:"portGUID"`
		LID          int         `json:"lid"`
		LinkWidth    string      `json:"linkWidthActive,omitempty"`
		LinkSpeed    string      `json:"linkSpeedActive,omitempty"`
		State        string      `json:"portState"`
		PhysState    string      `json:"portPhysicalState"`
		CouldBeWidth string      `json:"couldBeWidth,omitempty"`
		CouldBeSpeed string      `json:"couldBeSpeed,omitempty"`
		HOQLife      *uint8      `json:"hoqLife,omitempty"`
		VLStallCount *uint8      `json:"vlStallCount,omitempty"`
		Remote       *remoteJSON `json:"remote,omitempty"`
		NotAvailable bool        `json:"notAvailable,omitempty"`
		ExternalPort int         `json:"externalPort,omitempty"`
	}
	type nodeJSON struct {
		Type        string     `json:"type"`
		NodeGUID    string     `json:"nodeGUID"`
		Description string     `json:"description"`
		LID         int        `json:"lid,omitempty"`
		Ports       []portJSON `json:"ports"`
	}
	out := []nodeJSON{}
	for _, n := range nodes {
		nj := nodeJSON{Type: nodeTypeName(n), NodeGUID: n.GUID.String(), Description: o.names.Name(uint64(n.GUID), n.Desc),
			LID: int(n.SMALID), Ports: []portJSON{}}
		for num := 1; num <= n.NumPorts; num++ {
			p := n.Port(num)
			if p == nil || (o.DownOnly && linkState(p) != mad.PortStateDown) {
				continue
			}
			pi := info(p)
			pj := portJSON{Port: p.Num, PortGUID: p.GUID.String(), LID: int(p.LID()), State: pi.LinkState.String(),
				PhysState: pi.PhysLinkState.String(), ExternalPort: p.ExtNum}
			if pi.LinkState != mad.PortStateDown {
				pj.LinkWidth = pi.LinkWidthActive.String()
				pj.LinkSpeed = linkSpeedText(p)
				if o.Additional {
					h, v := pi.HOQLife, pi.VLStallCount
					pj.HOQLife, pj.VLStallCount = &h, &v
				}
			}
			if r := p.Remote; r != nil {
				pj.Remote = &remoteJSON{NodeGUID: r.Node.GUID.String(), PortGUID: r.GUID.String(), Port: r.Num, LID: int(peerLID(r)),
					Description: o.names.Name(uint64(r.Node.GUID), r.Node.Desc)}
				pj.CouldBeWidth, pj.CouldBeSpeed = couldBe(p)
				pj.CouldBeWidth = strings.TrimPrefix(pj.CouldBeWidth, "Could be ")
				pj.CouldBeSpeed = strings.TrimPrefix(pj.CouldBeSpeed, "Could be ")
			} else if pi.LinkState != mad.PortStateDown {
				pj.NotAvailable = true
			}
			nj.Ports = append(nj.Ports, pj)
		}
		out = append(out, nj)
	}
	return out
}

// linkSpeedText is the speed a port line shows.
func linkSpeedText(p *subnet.Port) string {
	pi := info(p)
	var ext uint32
	if mask, ok := capMaskOf(p); ok && mask&mad.PortCapIsExtendedSpeedsSupported != 0 {
		ext = uint32(pi.LinkSpeedExtActive)
	}
	return speedText(ext, uint32(pi.LinkSpeedActive), extInfo(p).LinkSpeedActive&1 != 0)
}

// speedText names a port's speed as iblinkinfo prints it: the extended
// speed when there is one, FDR10 when MlnxExtPortInfo says so, else the
// speed.
func speedText(ext, speed uint32, fdr10 bool) string {
	return string(appendSpeedText(nil, ext, speed, fdr10))
}

// appendSpeedText appends speedText's text to b.
func appendSpeedText(b []byte, ext, speed uint32, fdr10 bool) []byte {
	switch {
	case ext != 0:
		return mad.FormatLinkSpeedExt.AppendText(b, ext)
	case fdr10:
		return append(b, "10.0 Gbps (FDR10)"...)
	}
	return mad.FormatLinkSpeed.AppendText(b, speed)
}
