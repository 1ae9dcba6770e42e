package fabric

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/route"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// dump_fts discovers the fabric and dumps every switch's forwarding table
// as ibroute does, each switch reached by the directed route discovery
// found it by (infiniband-diags' dump_fts.c). dump_lfts and dump_mfts (with
// and without .sh) are infiniband-diags' wrapper scripts: dump_fts, or
// dump_fts -M, then a deprecation warning on standard output.

func init() {
	cmdutil.Register(cmdutil.Tool{Name: "dump_fts", Summary: "dump the forwarding tables of every switch",
		New: func(f *cmdutil.Factory) *cobra.Command { return newDumpFtsCmd(f, "dump_fts", false, nil) }})
	for _, name := range []string{"dump_lfts", "dump_lfts.sh"} {
		cmdutil.Register(cmdutil.Tool{Name: name, Summary: "dump the unicast forwarding tables of every switch (dump_fts)",
			New: func(f *cmdutil.Factory) *cobra.Command { return newDumpFtsCmd(f, name, false, nil) }})
	}
	for _, name := range []string{"dump_mfts", "dump_mfts.sh"} {
		cmdutil.Register(cmdutil.Tool{Name: name, Summary: "dump the multicast forwarding tables of every switch (dump_fts -M)",
			New: func(f *cmdutil.Factory) *cobra.Command { return newDumpFtsCmd(f, name, true, nil) }})
	}
}

// dumpFtsOptions are dump_fts's parsed flags and arguments.
type dumpFtsOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Discovery cmdutil.DiscoveryOptions
	Tool      string
	// Script is set for the dump_lfts and dump_mfts wrappers, which
	// print a warning after the dump.
	Script    bool
	All       bool // -a
	Brief     bool // -n
	Multicast bool // -M
	// DRDiscovery is python-rdma's -D of dump_lfts and dump_mfts:
	// discover by directed route (--discovery dr).
	DRDiscovery      bool
	StartLID, EndLID int
	// Discover walks the fabric; Transactor opens the MAD transport for
	// the tables.
	Discover func() (*subnet.Fabric, error)
	names    *nodemap.Map
}

func newDumpFtsCmd(f *cmdutil.Factory, name string, multicast bool, runF func(*dumpFtsOptions) error) *cobra.Command {
	o := &dumpFtsOptions{IO: f.IO, Tool: name, Script: name != "dump_fts", Multicast: multicast}
	c := &cobra.Command{
		Use:   name + " [options] [<startlid> [<endlid>]]",
		Short: "dump the forwarding tables of every switch",
		Long: name + ` discovers the fabric and prints every switch's linear forwarding table
(or, with -M, its multicast forwarding table) as ibroute does, with each
LID's destination looked up in the discovered fabric. The tables of all
switches are read at once.`,
		Example: fmt.Sprintf("  %s\n  %s -n 0x10 0x20\n  %s -a", name, name, name),
		Args:    cmdutil.ArgsRange(0, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.finishDRDiscovery(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			for i, dst := range []*int{&o.StartLID, &o.EndLID} {
				if len(args) > i {
					n, err := cmdutil.ParseUintArg(args[i], 0xffff)
					if err != nil {
						return cmdutil.UsageErrorf("invalid LID %q: %v", args[i], err)
					}
					*dst = int(n)
				}
			}
			o.Discover = func() (*subnet.Fabric, error) { return f.DiscoverFabric(name, &o.Common, &o.Discovery, nil) }
			if runF != nil {
				return runF(o)
			}
			return dumpFtsRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsNodeMap|cmdutil.FlagsJSON)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	fl := c.Flags()
	fl.BoolVarP(&o.All, "all", "a", false, "show all lids, even invalid entries")
	fl.BoolVarP(&o.Brief, "no_dests", "n", false, "do not try to resolve destinations")
	fl.BoolVarP(&o.Multicast, "Multicast", "M", multicast, "show multicast forwarding tables")
	if o.Script {
		fl.BoolVarP(&o.DRDiscovery, "D", "D", false, "discover by directed route, the same as --discovery dr (python-rdma's)")
	}
	return c
}

// finishDRDiscovery folds -D into --discovery: dr, and with another
// --discovery, or --sa that means sa, a usage error (python-rdma's
// "Can't combine --sa with discovery mode").
func (o *dumpFtsOptions) finishDRDiscovery(c *cobra.Command) error {
	if !o.DRDiscovery {
		return nil
	}
	if c.Flags().Changed("discovery") && !strings.EqualFold(o.Discovery.Mode, "dr") {
		return cmdutil.UsageErrorf("-D discovers by directed route; it cannot go with --discovery %s", o.Discovery.Mode)
	}
	if o.Discovery.SA || o.Common.SAPathArg != "" {
		return cmdutil.UsageErrorf("-D discovers by directed route; it cannot go with --sa or --sa-path")
	}
	o.Discovery.Mode = "dr"
	return nil
}

func dumpFtsRun(o *dumpFtsOptions) error {
	var err error
	if o.names, err = o.Common.LoadNodeMap(o.Tool, o.IO.ErrOut); err != nil {
		return err
	}
	fab, err := o.Discover()
	if err != nil {
		return cmdutil.WithContext(err, "discovery")
	}
	partial := cmdutil.ReportPartial(o.Tool, fab, o.IO.ErrOut)
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	switches := fab.ByType(mad.NodeTypeSwitch)
	collected, err := route.Collect(o.Common.Context(), x, switches, route.CollectOptions{Multicast: o.Multicast,
		Start: o.StartLID, End: o.EndLID, All: o.All, ViaSA: o.Discovery.Mode == "sa", SMKey: o.Common.SMKey})
	if err != nil {
		return err
	}
	if collected.SAError != nil {
		fmt.Fprintf(o.IO.ErrOut, "%s: warning: %v; reading the tables by SMP\n", o.Tool, collected.SAError)
	}
	tables := collected.Switches
	if o.Common.JSON {
		failed := 0
		for _, t := range tables {
			for _, e := range t.Errs {
				fmt.Fprintf(o.IO.ErrOut, "%s: %v\n", o.Tool, e)
			}
			failed += len(t.Errs)
		}
		if err := cmdutil.WriteJSONDocument(o.IO.Out, ftsJSON(o, fab, tables)); err != nil {
			return err
		}
		if failed > 0 && partial == nil {
			partial = fmt.Errorf("%d forwarding table reads failed", failed)
		}
		return partial
	}
	w := bufio.NewWriterSize(o.IO.Out, 64<<10)
	dests := &lidDests{fab: fab, names: o.names, text: make(map[int]string)}
	failed := 0
	for _, t := range tables {
		if t.Switch.SwitchInfo == nil {
			fmt.Fprintf(o.IO.ErrOut, "%s: switch %s %q: no SwitchInfo; table not read\n", o.Tool, t.Switch.GUID, t.Switch.Desc)
			failed++
			continue
		}
		for _, e := range t.Errs {
			fmt.Fprintf(o.IO.ErrOut, "%s: %v\n", o.Tool, e)
		}
		failed += len(t.Errs)
		if o.Multicast {
			writeSwitchMFT(w, o, t)
		} else {
			writeSwitchLFT(w, o, dests, t)
		}
	}
	if o.Script {
		cmd := "dump_fts"
		if o.Multicast {
			cmd = "dump_fts -M"
		}
		fmt.Fprintf(w, "\n*** WARNING ***: this command has been replaced by %s\n\n\n", cmd)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 && partial == nil {
		partial = fmt.Errorf("%d forwarding table reads failed", failed)
	}
	return partial
}

// lftRange is the LID range dump_unicast_tables reads for a switch.
func (o *dumpFtsOptions) lftRange(n *subnet.Node, warn bool) (start, end int) {
	start, end, truncated := route.LFTRange(o.StartLID, o.EndLID, int(n.SwitchInfo.LinearFDBTop))
	if truncated && warn {
		top := int(n.SwitchInfo.LinearFDBTop)
		if o.EndLID != 0 && o.EndLID < top {
			top = o.EndLID
		}
		fmt.Fprintf(o.IO.ErrOut, "%s: warning: illegal lft top %d, truncate to %d\n", o.Tool, top, mad.MaxUnicastLID)
	}
	return start, end
}

// mftRange is the MLID range dump_multicast_tables reads for a switch.
func (o *dumpFtsOptions) mftRange(n *subnet.Node, warn bool) (start, end int) {
	w := io.Discard
	if warn {
		w = o.IO.ErrOut
	}
	return mftRange(w, o.Tool, o.StartLID, o.EndLID, int(n.SwitchInfo.MulticastFDBCap), int(n.SwitchInfo.MulticastFDBTop), o.All)
}

// drPathString is libibmad's portid2str of a directed route from here.
func drPathString(p []uint8) string { return "DR path slid 0; dlid 0; " + subnet.FormatPath(p) }

// lidDests caches the destination text of each LID (dump_lid's
// ": (Switch portguid 0x...: 'name')"), the same for every switch.
type lidDests struct {
	fab   *subnet.Fabric
	names *nodemap.Map
	text  map[int]string
}

// of returns the LID's port (nil when the fabric has none) and its text.
func (d *lidDests) of(lid int) (*subnet.Port, string) {
	p := d.fab.PortByLID(rdma.LID(lid))
	if p == nil {
		return nil, ": (node info not available fabric scan)"
	}
	t, ok := d.text[lid]
	if !ok {
		t = fmt.Sprintf(": (%s portguid 0x%016x: '%s')", p.Node.Type.String(), uint64(p.GUID),
			d.names.Name(uint64(p.Node.GUID), p.Node.Desc))
		d.text[lid] = t
	}
	return p, t
}

// appendLFTLine appends "0x%04x %03d " and the text, as dump_unicast_tables
// prints a LID.
func appendLFTLine(b []byte, lid, port int, text string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '0', 'x', hex[lid>>12&0xf], hex[lid>>8&0xf], hex[lid>>4&0xf], hex[lid&0xf], ' ')
	b = append(b, byte('0'+port/100%10), byte('0'+port/10%10), byte('0'+port%10), ' ')
	b = append(b, text...)
	return append(b, '\n')
}

// writeSwitchLFT prints one switch's unicast table (dump_unicast_tables),
// each LID's destination looked up in the fabric (dump_lid).
func writeSwitchLFT(w *bufio.Writer, o *dumpFtsOptions, dests *lidDests, t *route.SwitchTables) {
	n := t.Switch
	start, end := o.lftRange(n, true)
	fmt.Fprintf(w, "Unicast lids [0x%x-0x%x] of switch %s guid 0x%016x (%s):\n", start, end, drPathString(n.Path),
		uint64(n.GUID), o.names.Name(uint64(n.GUID), n.Desc))
	w.WriteString("  Lid  Out   Destination\n       Port     Info \n")
	count := 0
	var paths lmcPaths
	var line []byte
	first, last := route.LFTBlocks(start, end)
	for block := first; block <= last; block++ {
		lft := t.LFT.Blocks[block]
		if lft == nil {
			continue
		}
		for lid := max(block*mad.LFTBlockSize, start); lid < min((block+1)*mad.LFTBlockSize, end+1); lid++ {
			port := int(lft.Port(lid))
			valid := port <= n.NumPorts
			if !valid && !o.All {
				continue
			}
			text := ""
			if !o.Brief {
				var inRange bool
				text, inRange = paths.within(lid, valid)
				switch {
				case inRange:
				case !valid:
					text = ": (illegal port)"
				default:
					var p *subnet.Port
					if p, text = dests.of(lid); p != nil {
						paths.port(p.GUID, int(p.BaseLID), int(p.LMC))
					} else {
						paths.port(0, 0, 0)
					}
				}
			}
			line = appendLFTLine(line[:0], lid, port&0xff, text)
			w.Write(line)
			count++
		}
	}
	fmt.Fprintf(w, "%d %slids dumped \n", count, validWord(o.All))
}

// writeSwitchMFT prints one switch's multicast table
// (dump_multicast_tables).
func writeSwitchMFT(w *bufio.Writer, o *dumpFtsOptions, t *route.SwitchTables) {
	n := t.Switch
	start, end := o.mftRange(n, true)
	nports := n.NumPorts
	fmt.Fprintf(w, "Multicast mlids [0x%x-0x%x] of switch %s guid 0x%016x (%s):\n", start, end, drPathString(n.Path),
		uint64(n.GUID), o.names.Name(uint64(n.GUID), n.Desc))
	if o.Brief {
		w.WriteString(" MLid       Port Mask\n")
	} else {
		if nports > 9 {
			w.WriteString("            ")
			for i := 0; i <= nports; i++ {
				c := byte(' ')
				if i%10 == 0 {
					c = byte('0' + i/10)
				}
				w.WriteByte(c)
				w.WriteByte(' ')
			}
			w.WriteByte('\n')
		}
		w.WriteString("     Ports: ")
		for i := 0; i <= nports; i++ {
			fmt.Fprintf(w, "%d ", i%10)
		}
		w.WriteString("\n MLid\n")
	}
	if o.Common.Verbose > 0 {
		fmt.Fprintf(w, "Switch multicast mlid capability is %d top is 0x%x\n", n.SwitchInfo.MulticastFDBCap, n.SwitchInfo.MulticastFDBTop)
	}
	masks := make([]uint16, mad.MFTPositions(nports))
	count := 0
	for block := mad.MFTBlock(start); block <= mad.MFTBlock(end); block++ {
		first := mad.MinMulticastLID + block*mad.MFTBlockSize
		for mlid := max(first, start); mlid < min(first+mad.MFTBlockSize, end+1); mlid++ {
			nonzero := false
			for j := range masks {
				masks[j] = t.MFT.PortMask(rdma.LID(mlid), j)
				nonzero = nonzero || masks[j] != 0
			}
			if !nonzero && !o.All {
				continue
			}
			fmt.Fprintf(w, "0x%04x      ", mlid)
			if o.Brief {
				for _, m := range masks {
					fmt.Fprintf(w, "%04x", m)
				}
			} else {
				for i := 0; i <= nports; i++ {
					c := byte(' ')
					if masks[i/mad.MFTPortsPerMask]&(1<<(i%mad.MFTPortsPerMask)) != 0 {
						c = 'x'
					}
					w.WriteByte(c)
					w.WriteByte(' ')
				}
			}
			w.WriteByte('\n')
			count++
		}
	}
	fmt.Fprintf(w, "%d %smlids dumped \n", count, validWord(o.All))
}

// ftsJSON is the --json document: each switch with the entries it routes
// (unicast: LID, port and destination; multicast: MLID and ports).
func ftsJSON(o *dumpFtsOptions, fab *subnet.Fabric, tables []*route.SwitchTables) any {
	type entryJSON struct {
		LID         int    `json:"lid"`
		Port        int    `json:"port,omitempty"`
		Ports       []int  `json:"ports,omitempty"`
		Destination string `json:"destination,omitempty"`
		PortGUID    string `json:"portGUID,omitempty"`
	}
	type switchJSON struct {
		NodeGUID    string      `json:"nodeGUID"`
		Description string      `json:"description"`
		LID         int         `json:"lid"`
		Path        string      `json:"path"`
		Entries     []entryJSON `json:"entries"`
	}
	out := []switchJSON{}
	for _, t := range tables {
		n := t.Switch
		if n.SwitchInfo == nil {
			continue
		}
		sj := switchJSON{NodeGUID: n.GUID.String(), Description: o.names.Name(uint64(n.GUID), n.Desc), LID: int(n.SMALID),
			Path: subnet.FormatPath(n.Path), Entries: []entryJSON{}}
		if o.Multicast {
			start, end := o.mftRange(n, false)
			for mlid := start; mlid <= end; mlid++ {
				ports := t.Ports(rdma.LID(mlid))
				if len(ports) > 0 || o.All {
					sj.Entries = append(sj.Entries, entryJSON{LID: mlid, Ports: ports})
				}
			}
		} else {
			start, end := o.lftRange(n, false)
			for lid := start; lid <= end; lid++ {
				port, ok := t.LFT.Port(rdma.LID(lid))
				if !ok {
					continue
				}
				if port > n.NumPorts && !o.All {
					continue
				}
				e := entryJSON{LID: lid, Port: port}
				if p := fab.PortByLID(rdma.LID(lid)); p != nil && port <= n.NumPorts && !o.Brief {
					e.Destination = o.names.Name(uint64(p.Node.GUID), p.Node.Desc)
					e.PortGUID = p.GUID.String()
				}
				sj.Entries = append(sj.Entries, e)
			}
		}
		out = append(out, sj)
	}
	return out
}
