package fabric

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/route"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibroute",
		Summary: "dump a switch's unicast or multicast forwarding table",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbrouteCmd(f, nil) },
	})
}

// ibrouteOptions are ibroute's parsed flags and arguments.
type ibrouteOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	Target endport.Target
	// StartLID and EndLID bound the dump; 0 means from the first, or to
	// the table's top.
	StartLID, EndLID int
	All              bool // -a: invalid entries too
	Brief            bool // -n: no destination lookups
	Multicast        bool // -M: the multicast table
	// Discovery is python-rdma's --discovery, --cache and
	// --refresh-cache; with --cache, Discover returns the fabric (read
	// from the cache file, or discovered and written to it) that the
	// destinations are looked up in.
	Discovery cmdutil.DiscoveryOptions
	Discover  func() (*subnet.Fabric, error)
	names     *nodemap.Map
}

func newIbrouteCmd(f *cmdutil.Factory, runF func(*ibrouteOptions) error) *cobra.Command {
	o := &ibrouteOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "ibroute [options] <dest dr_path|lid|guid> [<startlid> [<endlid>]]",
		Short: "dump a switch's unicast or multicast forwarding table",
		Long: `ibroute reads a switch's linear forwarding table (or, with -M, its multicast
forwarding table) and prints it as infiniband-diags' ibroute does: each LID
with its output port and, unless -n, the node and port GUID the LID leads to.
The destinations are looked up in parallel.`,
		Example: `  ibroute 4              # LIDs with valid output ports of the switch at LID 4
  ibroute -a 4           # every LID, invalid ports too
  ibroute -n 4           # no destination lookups
  ibroute 4 0x10 0x20    # a LID range
  ibroute -M 4           # non-empty MLIDs
  ibroute -D 0,1         # the switch one hop away by direct route`,
		Args: cmdutil.ArgsRange(1, 3),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := finishRouteDiscovery(c, &o.Common, &o.Discovery); err != nil {
				return err
			}
			if o.Discovery.Cache != "" {
				o.Discover = func() (*subnet.Fabric, error) {
					return f.DiscoverFabric("ibroute", &o.Common, &o.Discovery, nil)
				}
			}
			t, err := o.Common.ParseTarget(args[0])
			if err != nil {
				return err
			}
			o.Target = t
			for i, dst := range []*int{&o.StartLID, &o.EndLID} {
				if len(args) > i+1 {
					n, err := cmdutil.ParseUintArg(args[i+1], 0xffff)
					if err != nil {
						return cmdutil.UsageErrorf("invalid LID %q: %v", args[i+1], err)
					}
					*dst = int(n)
				}
			}
			if runF != nil {
				return runF(o)
			}
			return ibrouteRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsTarget|cmdutil.FlagsNodeMap|cmdutil.FlagsSA|cmdutil.FlagsMKey)
	fl := c.Flags()
	fl.BoolVarP(&o.All, "all", "a", false, "show all lids, even invalid entries")
	fl.BoolVarP(&o.Brief, "no_dests", "n", false, "do not try to resolve destinations")
	fl.BoolVarP(&o.Multicast, "Multicast", "M", false, "show multicast forwarding tables")
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	return c
}

// finishRouteDiscovery folds python-rdma's discovery flags of ibroute and
// ibtracert, whose --sa (FlagsSA) answers their SMP Gets from the SA's
// records: as in python-rdma's LibIBOpts, --sa means --discovery sa and
// --discovery sa means --sa; --sa with another --discovery is a usage
// error.
func finishRouteDiscovery(c *cobra.Command, common *cmdutil.CommonOptions, d *cmdutil.DiscoveryOptions) error {
	if err := d.Finish(); err != nil {
		return err
	}
	if common.ViaSA && d.Mode != "sa" {
		if c.Flags().Changed("discovery") {
			return cmdutil.UsageErrorf("--sa reads the SA's records; it cannot go with --discovery %s", d.Mode)
		}
		d.Mode = "sa"
	}
	if d.Mode == "sa" {
		common.ViaSA = true
	}
	return nil
}

func ibrouteRun(o *ibrouteOptions) error {
	x, p, st, err := o.readTable()
	if err != nil {
		return err
	}
	if o.Multicast {
		return dumpMulticast(o, p, st)
	}
	start, end := unicastRange(o.IO.ErrOut, o, st.LFT.Top)
	entries, err := o.unicastDests(x, st, start, end)
	if err != nil {
		return err
	}
	return writeUnicast(o, p, st.Switch, start, end, entries)
}

// readTable reads the target switch's table: the transactor it used, the
// resolved path to the switch, and the table, the switch's description
// named by the node map.
func (o *ibrouteOptions) readTable() (*madrpc.Transactor, mad.Path, *route.SwitchTables, error) {
	p, err := o.Target.Path()
	if err != nil {
		return nil, p, nil, err
	}
	if o.names, err = o.Common.LoadNodeMap("ibroute", o.IO.ErrOut); err != nil {
		return nil, p, nil, err
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return nil, p, nil, err
	}
	ctx := o.Common.Context()
	if p, err = x.Resolve(ctx, p); err != nil {
		return nil, p, nil, err
	}
	st, err := route.ReadSwitch(ctx, x, p, route.CollectOptions{Multicast: o.Multicast, Start: o.StartLID, End: o.EndLID, All: o.All})
	if err != nil {
		return nil, p, nil, readSwitchError(err)
	}
	st.Switch.Desc = o.names.Name(uint64(st.Switch.GUID), st.Switch.Desc)
	return x, p, st, nil
}

// readSwitchError says which block a failed read was of, as ibroute did
// when it read the blocks one by one.
func readSwitchError(err error) error {
	var re *route.ReadError
	if !errors.As(err, &re) {
		return err
	}
	if re.Attr == "LinearForwardingTable" {
		return cmdutil.WithContext(re.Err, "reading LFT block %d", re.Modifier)
	}
	block, j := int(re.Modifier&0x1ff), int(re.Modifier>>28)
	return cmdutil.WithContext(re.Err, "reading MFT block %d, ports %d-%d", block, j*mad.MFTPortsPerMask, (j+1)*mad.MFTPortsPerMask-1)
}

// dumped is the switch a dump is of, in --json.
func dumped(sw *subnet.Node) dumpedSwitch {
	return dumpedSwitch{NodeDescription: sw.Desc, NodeGUID: sw.GUID}
}

// lftEntry is one LID of the unicast dump.
type lftEntry struct {
	LID   int    `json:"lid"`
	Port  int    `json:"port"`
	Valid bool   `json:"valid"`
	Dest  string `json:"destination,omitempty"`
	text  string // what follows the port in the text
	// described says the LID starts its port's LIDs and was looked up:
	// destType is the node's type, Dest its name.
	described bool
	destType  mad.NodeType
}

// dumpedSwitch is the switch a dump is of, in --json.
type dumpedSwitch struct {
	NodeDescription string    `json:"nodeDescription"`
	NodeGUID        rdma.GUID `json:"nodeGUID"`
}

// unicastJSON is ibroute's --json document of a unicast dump.
type unicastJSON struct {
	EndLID  int        `json:"endLid"`
	Entries []lftEntry `json:"entries"`
	dumpedSwitch
	StartLID int    `json:"startLid"`
	Switch   string `json:"switch"`
}

// unicastEntries are the LIDs of the switch's LFT that the dump lists
// (with all, the invalid ones too), from start to end.
func unicastEntries(st *route.SwitchTables, start, end int, all bool) []lftEntry {
	var entries []lftEntry
	for lid := start; lid <= end; lid++ {
		port, ok := st.LFT.Port(rdma.LID(lid))
		if !ok {
			continue
		}
		valid := port <= st.Switch.NumPorts
		if !valid && !all {
			continue
		}
		entries = append(entries, lftEntry{LID: lid, Port: port, Valid: valid})
	}
	return entries
}

// unicastRange is the LID range the dump covers, with ibroute's warning
// when the switch's top is past the unicast LIDs.
func unicastRange(w io.Writer, o *ibrouteOptions, top int) (int, int) {
	start, end, truncated := route.LFTRange(o.StartLID, o.EndLID, top)
	if truncated {
		asked := top
		if o.EndLID != 0 && o.EndLID < top {
			asked = o.EndLID
		}
		fmt.Fprintf(w, "ibroute: warning: illegal lft top %d, truncate to %d\n", asked, mad.MaxUnicastLID)
	}
	return start, end
}

// unicastDests are the dump's entries from start to end, each valid one
// described (unless -n) by its destination, looked up in the --cache
// fabric or by SMPs.
func (o *ibrouteOptions) unicastDests(x *madrpc.Transactor, st *route.SwitchTables, start, end int) ([]lftEntry, error) {
	entries := unicastEntries(st, start, end, o.All)
	if o.Brief {
		return entries, nil
	}
	var fab *subnet.Fabric
	if o.Discover != nil {
		var err error
		if fab, err = o.Discover(); err != nil {
			return nil, cmdutil.WithContext(err, "discovery")
		}
	}
	describeDestinations(o.Common.Context(), x, fab, entries, o.names)
	return entries, nil
}

// writeUnicast prints the unicast dump as infiniband-diags does, or its
// --json document.
func writeUnicast(o *ibrouteOptions, p mad.Path, sw *subnet.Node, start, end int, entries []lftEntry) error {
	if o.Common.JSON {
		return cmdutil.WriteJSONDocument(o.IO.Out, unicastJSON{Switch: p.String(), dumpedSwitch: dumped(sw),
			StartLID: start, EndLID: end, Entries: entries})
	}
	b := fmt.Appendf(nil, "Unicast lids [0x%x-0x%x] of switch %s guid 0x%016x (%s):\n", start, end, p, uint64(sw.GUID), sw.Desc)
	b = append(b, "  Lid  Out   Destination\n       Port     Info \n"...)
	for _, e := range entries {
		b = fmt.Appendf(b, "0x%04x %03d %s\n", e.LID, e.Port&0xff, e.text)
	}
	b = fmt.Appendf(b, "%d %slids dumped \n", len(entries), validWord(o.All))
	_, err := o.IO.Out.Write(b)
	return err
}

func validWord(all bool) string {
	if all {
		return ""
	}
	return "valid "
}

// lmcPaths is dump_lid's state from LID to LID of a forwarding table dump:
// the LID range of the last destination port with an LMC, whose other
// LIDs print as "path #n out of m", and the port GUID last looked up.
type lmcPaths struct {
	base, last int
	portGUID   rdma.GUID
}

// within returns the text of a LID inside the last LMC range, if it is.
func (s *lmcPaths) within(lid int, valid bool) (string, bool) {
	if lid > s.last {
		return "", false
	}
	switch {
	case !valid:
		return fmt.Sprintf(": (path #%d - illegal port)", lid-s.base), true
	case s.portGUID == 0:
		return fmt.Sprintf(": (path #%d out of %d)", lid-s.base+1, s.last-s.base+1), true
	}
	return fmt.Sprintf(": (path #%d out of %d: portguid %s)", lid-s.base+1, s.last-s.base+1, s.portGUID), true
}

// port records the destination port a LID was looked up to (GUID 0 when
// the lookup failed); a port with an LMC starts a new range.
func (s *lmcPaths) port(guid rdma.GUID, baseLID, lmc int) {
	s.portGUID = guid
	if lmc > 0 {
		s.base, s.last = baseLID, baseLID+(1<<lmc)-1
	}
}

// lidDest is what a destination LID's NodeInfo, PortInfo and NodeDesc say.
type lidDest struct {
	ok       bool
	nodeType mad.NodeType
	portGUID rdma.GUID
	baseLID  int
	lmc      int
	desc     string
	nodeGUID rdma.GUID
}

// describeDestinations looks every valid entry's LID up, in fab (the
// --cache fabric; nil for none) or else by SMPs in parallel, and writes
// each entry's text as infiniband-diags' dump_lid does, including its
// "path #n out of m" for the LIDs of a port with an LMC.
func describeDestinations(ctx context.Context, x *madrpc.Transactor, fab *subnet.Fabric, entries []lftEntry, names *nodemap.Map) {
	dests := make([]lidDest, len(entries))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range entries {
		if !entries[i].Valid {
			continue
		}
		if d, ok := fabricDest(fab, entries[i].LID); ok {
			dests[i] = d
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			dests[i] = lookupLID(ctx, x, entries[i].LID)
		}()
	}
	wg.Wait()
	var paths lmcPaths
	for i := range entries {
		e := &entries[i]
		if t, ok := paths.within(e.LID, e.Valid); ok {
			e.text = t
			continue
		}
		if !e.Valid {
			e.text = ": (illegal port)"
			continue
		}
		d := dests[i]
		if !d.ok {
			paths.port(0, 0, 0)
			e.text = ": (unknown node and type)"
			continue
		}
		paths.port(d.portGUID, d.baseLID, d.lmc)
		typ := d.nodeType.String()
		desc := names.Name(uint64(d.nodeGUID), d.desc)
		e.text = fmt.Sprintf(": (%s portguid %s: '%s')", typ, d.portGUID, desc)
		e.Dest, e.described, e.destType = desc, true, d.nodeType
	}
}

// fabricDest is lookupLID's answer from a discovered fabric: false when
// there is none or no port of it has the LID.
func fabricDest(fab *subnet.Fabric, lid int) (lidDest, bool) {
	if fab == nil {
		return lidDest{}, false
	}
	p := fab.PortByLID(rdma.LID(lid))
	if p == nil {
		return lidDest{}, false
	}
	n := p.Node
	return lidDest{ok: true, nodeType: n.Type, portGUID: p.GUID, baseLID: int(p.BaseLID), lmc: int(p.LMC), desc: n.Desc, nodeGUID: n.GUID}, true
}

// lookupLID reads a LID's NodeDescription, PortInfo and NodeInfo.
func lookupLID(ctx context.Context, x *madrpc.Transactor, lid int) lidDest {
	q := madrpc.NewQuerier(x, mad.LIDPath(rdma.LID(lid)))
	var nd mad.NodeDescription
	var pi mad.PortInfo
	var ni mad.NodeInfo
	for _, a := range []mad.Attribute{&nd, &pi, &ni} {
		if _, err := q.Get(ctx, a, 0); err != nil {
			return lidDest{}
		}
	}
	return lidDest{ok: true, nodeType: ni.NodeType, portGUID: ni.PortGUID, baseLID: int(pi.LID), lmc: int(pi.LMC), desc: nd.NodeDescription.String(), nodeGUID: ni.NodeGUID}
}

// mftEntry is one MLID of the multicast dump.
type mftEntry struct {
	MLID  int      `json:"mlid"`
	Masks []uint16 `json:"portMasks"` // 16 ports a mask, port 0 first
	Ports []int    `json:"ports"`
}

// multicastJSON is ibroute's --json document of a multicast dump.
type multicastJSON struct {
	EndMLID int        `json:"endMlid"`
	Entries []mftEntry `json:"entries"`
	dumpedSwitch
	StartMLID int    `json:"startMlid"`
	Switch    string `json:"switch"`
}

func dumpMulticast(o *ibrouteOptions, p mad.Path, st *route.SwitchTables) error {
	sw := st.Switch
	nports := sw.NumPorts
	start, end := mftRange(o.IO.ErrOut, "ibroute", o.StartLID, o.EndLID, int(sw.SwitchInfo.MulticastFDBCap), int(sw.SwitchInfo.MulticastFDBTop), o.All)
	var entries []mftEntry
	for mlid := start; mlid <= end; mlid++ {
		e := mftEntry{MLID: mlid, Ports: []int{}}
		nonzero := false
		for j := range mad.MFTPositions(nports) {
			m := st.MFT.PortMask(rdma.LID(mlid), j)
			e.Masks = append(e.Masks, m)
			nonzero = nonzero || m != 0
			e.Ports = mad.MaskPorts(e.Ports, m, j, 0, nports)
		}
		if nonzero || o.All {
			entries = append(entries, e)
		}
	}
	if o.Common.JSON {
		return cmdutil.WriteJSONDocument(o.IO.Out, multicastJSON{Switch: p.String(), dumpedSwitch: dumped(sw),
			StartMLID: start, EndMLID: end, Entries: entries})
	}
	return writeMulticast(o.IO.Out, o, p, sw, start, end, entries)
}

// mftRange is the MLID range infiniband-diags' dump_multicast_tables reads
// of a switch, from the range asked (0: from the first, to the top) and
// the switch's capacity and top, with its warnings to w.
func mftRange(w io.Writer, tool string, start, end, capacity, top int, all bool) (int, int) {
	s, e, warn := route.MFTRange(start, end, capacity, top, all)
	if warn.IllegalTop {
		fmt.Fprintf(w, "%s: warning: illegal top mlid %x\n", tool, top)
	}
	if warn.IllegalStart {
		fmt.Fprintf(w, "%s: warning: illegal start mlid %x, set to %x\n", tool, start, mad.MinMulticastLID)
	}
	if warn.IllegalEnd {
		fmt.Fprintf(w, "%s: warning: illegal end mlid %x, truncate to %x\n", tool, warn.End, mad.MaxMulticastLID)
	}
	return s, e
}

// writeMulticast prints the multicast dump as infiniband-diags does.
func writeMulticast(w io.Writer, o *ibrouteOptions, p mad.Path, sw *subnet.Node, start, end int, entries []mftEntry) error {
	nports := sw.NumPorts
	b := fmt.Appendf(nil, "Multicast mlids [0x%x-0x%x] of switch %s guid 0x%016x (%s):\n", start, end, p, uint64(sw.GUID), sw.Desc)
	if o.Brief {
		b = append(b, " MLid       Port Mask\n"...)
	} else {
		if nports > 9 {
			b = append(b, "            "...)
			for i := 0; i <= nports; i++ {
				c := byte(' ')
				if i%10 == 0 {
					c = byte('0' + i/10)
				}
				b = append(b, c, ' ')
			}
			b = append(b, '\n')
		}
		b = append(b, "     Ports: "...)
		for i := 0; i <= nports; i++ {
			b = fmt.Appendf(b, "%d ", i%10)
		}
		b = append(b, "\n MLid\n"...)
	}
	if o.Common.Verbose > 0 {
		b = fmt.Appendf(b, "Switch multicast mlid capability is %d top is 0x%x\n", sw.SwitchInfo.MulticastFDBCap, sw.SwitchInfo.MulticastFDBTop)
	}
	for _, e := range entries {
		b = fmt.Appendf(b, "0x%04x      ", e.MLID)
		if o.Brief {
			for _, m := range e.Masks {
				b = fmt.Appendf(b, "%04x", m)
			}
		} else {
			for i := 0; i <= nports; i++ {
				c := byte(' ')
				if e.Masks[i/mad.MFTPortsPerMask]&(1<<(i%mad.MFTPortsPerMask)) != 0 {
					c = 'x'
				}
				b = append(b, c, ' ')
			}
		}
		b = append(b, '\n')
	}
	b = fmt.Appendf(b, "%d %smlids dumped \n", len(entries), validWord(o.All))
	_, err := w.Write(b)
	return err
}
