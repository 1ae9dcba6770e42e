package cmd

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// dump_fts discovers the fabric and dumps every switch's forwarding table
// as ibroute does, each switch reached by the directed route discovery
// found it by (infiniband-diags' dump_fts.c). dump_lfts and dump_mfts (with
// and without .sh) are infiniband-diags' wrapper scripts: dump_fts, or
// dump_fts -M, then a deprecation warning on standard output.

func init() {
	register(Tool{Name: "dump_fts", Summary: "dump the forwarding tables of every switch",
		New: func(f *Factory) *cobra.Command { return newDumpFtsCmd(f, "dump_fts", false, nil) }})
	for _, name := range []string{"dump_lfts", "dump_lfts.sh"} {
		register(Tool{Name: name, Summary: "dump the unicast forwarding tables of every switch (dump_fts)",
			New: func(f *Factory) *cobra.Command { return newDumpFtsCmd(f, name, false, nil) }})
	}
	for _, name := range []string{"dump_mfts", "dump_mfts.sh"} {
		register(Tool{Name: name, Summary: "dump the multicast forwarding tables of every switch (dump_fts -M)",
			New: func(f *Factory) *cobra.Command { return newDumpFtsCmd(f, name, true, nil) }})
	}
}

// dumpFtsOptions are dump_fts's parsed flags and arguments.
type dumpFtsOptions struct {
	IO        IOStreams
	Common    CommonOptions
	Discovery discoveryOptions
	Tool      string
	// Script is set for the dump_lfts and dump_mfts wrappers, which
	// print a warning after the dump.
	Script           bool
	All              bool // -a
	Brief            bool // -n
	Multicast        bool // -M
	StartLID, EndLID int
	// Discover walks the fabric; Transactor opens the MAD transport for
	// the tables.
	Discover   func() (*subnet.Fabric, error)
	Transactor func() (*mad.Transactor, error)
	names      *nodemap.Map
}

func newDumpFtsCmd(f *Factory, name string, multicast bool, runF func(*dumpFtsOptions) error) *cobra.Command {
	o := &dumpFtsOptions{IO: f.IO, Tool: name, Script: name != "dump_fts", Multicast: multicast}
	c := &cobra.Command{
		Use:   name + " [options] [<startlid> [<endlid>]]",
		Short: "dump the forwarding tables of every switch",
		Long: name + ` discovers the fabric and prints every switch's linear forwarding table
(or, with -M, its multicast forwarding table) as ibroute does, with each
LID's destination looked up in the discovered fabric. The tables of all
switches are read at once.`,
		Example: fmt.Sprintf("  %s\n  %s -n 0x10 0x20\n  %s -a", name, name, name),
		Args:    argsRange(0, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.finish(c); err != nil {
				return err
			}
			if err := o.Discovery.finish(); err != nil {
				return err
			}
			for i, dst := range []*int{&o.StartLID, &o.EndLID} {
				if len(args) > i {
					n, err := parseUintArg(args[i], 0xffff)
					if err != nil {
						return usageErrorf("invalid LID %q: %v", args[i], err)
					}
					*dst = int(n)
				}
			}
			o.Discover = func() (*subnet.Fabric, error) { return f.discoverFabric(name, &o.Common, &o.Discovery, nil) }
			o.Transactor = func() (*mad.Transactor, error) { return f.fabricTransactor(&o.Common, &o.Discovery) }
			if runF != nil {
				return runF(o)
			}
			return dumpFtsRun(o)
		},
	}
	addCommonFlags(c, &o.Common, flagsLocalPort|flagsMAD|flagsNodeMap|flagsJSON)
	addDiscoveryFlags(c, &o.Discovery)
	fl := c.Flags()
	fl.BoolVarP(&o.All, "all", "a", false, "show all lids, even invalid entries")
	fl.BoolVarP(&o.Brief, "no_dests", "n", false, "do not try to resolve destinations")
	fl.BoolVarP(&o.Multicast, "Multicast", "M", multicast, "show multicast forwarding tables")
	return c
}

// switchTable is what was read of one switch's table: the blocks by
// attribute modifier, and the errors.
type switchTable struct {
	node   *subnet.Node
	blocks map[uint32][]byte
	errs   []error
}

func dumpFtsRun(o *dumpFtsOptions) error {
	var err error
	if o.names, err = o.Common.loadNodeMap(o.Tool, o.IO.ErrOut); err != nil {
		return err
	}
	fab, err := o.Discover()
	if err != nil {
		return withContext(err, "discovery")
	}
	partial := reportPartial(o.Tool, fab, o.IO.ErrOut)
	x, err := o.Transactor()
	if err != nil {
		return err
	}
	defer x.Close()
	switches := fab.ByType(mad.NodeTypeSwitch)
	tables := readTables(o.Common.context(), x, switches, o)
	if o.Common.JSON {
		failed := 0
		for _, t := range tables {
			for _, e := range t.errs {
				fmt.Fprintf(o.IO.ErrOut, "%s: %v\n", o.Tool, e)
			}
			failed += len(t.errs)
		}
		if err := writeJSONDocument(o.IO.Out, ftsJSON(o, fab, tables)); err != nil {
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
		if t.node.SwitchInfo == nil {
			fmt.Fprintf(o.IO.ErrOut, "%s: switch %s %q: no SwitchInfo; table not read\n", o.Tool, t.node.GUID, t.node.Desc)
			failed++
			continue
		}
		for _, e := range t.errs {
			fmt.Fprintf(o.IO.ErrOut, "%s: %v\n", o.Tool, e)
		}
		failed += len(t.errs)
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
	start, end = o.StartLID, o.EndLID
	top := int(n.SwitchInfo.LinearFDBTop)
	if end == 0 || end > top {
		end = top
	}
	if end > maxUnicastLID {
		if warn {
			fmt.Fprintf(o.IO.ErrOut, "%s: warning: illegal lft top %d, truncate to %d\n", o.Tool, end, maxUnicastLID)
		}
		end = maxUnicastLID
	}
	return start, end
}

// mftRange is the MLID range dump_multicast_tables reads for a switch.
func (o *dumpFtsOptions) mftRange(n *subnet.Node, warn bool) (start, end int) {
	capacity, top := int(n.SwitchInfo.MulticastFDBCap), int(n.SwitchInfo.MulticastFDBTop)
	start, end = o.StartLID, o.EndLID
	warnf := func(format string, a ...any) {
		if warn {
			fmt.Fprintf(o.IO.ErrOut, o.Tool+": warning: "+format+"\n", a...)
		}
	}
	if end == 0 || end > minMulticastLID+capacity-1 {
		end = minMulticastLID + capacity - 1
	}
	if !o.All && top != 0 && top < end {
		if top < minMulticastLID-1 {
			warnf("illegal top mlid %x", top)
		} else {
			end = top
		}
	}
	if start == 0 {
		start = minMulticastLID
	} else if start < minMulticastLID {
		warnf("illegal start mlid %x, set to %x", start, minMulticastLID)
		start = minMulticastLID
	}
	if end > maxMulticastLID {
		warnf("illegal end mlid %x, truncate to %x", end, maxMulticastLID)
		end = maxMulticastLID
	}
	return start, end
}

// readTables reads every switch's table blocks, all in flight at once up
// to the transactor's window.
func readTables(ctx context.Context, x *mad.Transactor, switches []*subnet.Node, o *dumpFtsOptions) []*switchTable {
	type job struct {
		t   *switchTable
		mod uint32
	}
	var jobs []job
	tables := make([]*switchTable, len(switches))
	for i, n := range switches {
		tables[i] = &switchTable{node: n, blocks: make(map[uint32][]byte)}
	}
	if o.Discovery.Mode == "sa" {
		// The tables from the SA's records too, in one query; what it
		// lacks is read by SMP below.
		if err := saTables(ctx, x, tables, o); err != nil {
			fmt.Fprintf(o.IO.ErrOut, "%s: warning: %v; reading the tables by SMP\n", o.Tool, err)
		}
	}
	for _, t := range tables {
		n := t.node
		if n.SwitchInfo == nil {
			continue
		}
		add := func(mod uint32) {
			if _, ok := t.blocks[mod]; !ok {
				jobs = append(jobs, job{t, mod})
			}
		}
		if o.Multicast {
			start, end := o.mftRange(n, false)
			chunks := (n.NumPorts + 1 + mftPortsPerMask - 1) / mftPortsPerMask
			for block := start / mftBlockSize; block <= end/mftBlockSize; block++ {
				for j := range chunks {
					add(uint32(block-minMulticastLID/mftBlockSize) | uint32(j)<<28)
				}
			}
		} else {
			start, end := o.lftRange(n, false)
			for block := start / lftBlockSize; block < (end+lftBlockSize-1)/lftBlockSize; block++ {
				add(uint32(block))
			}
		}
	}
	attr, name := mad.AttrLinearForwardingTable, "LinearForwardingTable"
	if o.Multicast {
		attr, name = mad.AttrMulticastForwardingTable, "MulticastForwardingTable"
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, x.Window())
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r, err := x.Do(ctx, &mad.Request{Path: mad.Path{DR: j.t.node.Path}, Class: mad.ClassSMI, Method: mad.MethodGet,
				AttrID: attr, AttrMod: j.mod, Name: name, MKey: o.Discovery.MKey})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				j.t.errs = append(j.t.errs, fmt.Errorf("switch %s %q (DR path %s): %w", j.t.node.GUID, j.t.node.Desc,
					subnet.FormatPath(j.t.node.Path), err))
				return
			}
			j.t.blocks[j.mod] = append([]byte(nil), r.Data()...)
		}()
	}
	wg.Wait()
	return tables
}

// saTables fills the switches' table blocks from the SA's LFTRecords
// (MFTRecords with -M), all switches' in one SubnAdmGetTable, keyed as the
// SMPs' attribute modifiers are: an LFT block's number, an MFT block's
// number with its port position in bits 28-31.
func saTables(ctx context.Context, x *mad.Transactor, tables []*switchTable, o *dumpFtsOptions) error {
	attr, name := mad.AttrLinearForwardingTableRecord, "LFTRecord"
	if o.Multicast {
		attr, name = mad.AttrMulticastForwardingTableRecord, "MFTRecord"
	}
	res, err := x.QuerySA(ctx, &mad.SAQuery{Method: mad.MethodGetTable, AttrID: attr, Name: name, SMKey: o.Common.SMKey})
	if err != nil {
		return err
	}
	const recLen = 72 // LID, block (and position), reserved, 64 bytes of table
	if len(res.Records) > 0 && res.RecordLen < recLen {
		return fmt.Errorf("SubnAdmGetTable(%s): records of %d bytes, want %d", name, res.RecordLen, recLen)
	}
	byLID := make(map[uint16]*switchTable, len(tables))
	for _, t := range tables {
		if t.node.SwitchInfo != nil && t.node.SMALID != 0 {
			byLID[uint16(t.node.SMALID)] = t
		}
	}
	for _, r := range res.Records {
		t := byLID[binary.BigEndian.Uint16(r)]
		if t == nil {
			continue
		}
		mod := uint32(binary.BigEndian.Uint16(r[2:]))
		if o.Multicast {
			mod = mod&0x1ff | mod>>12<<28
		}
		t.blocks[mod] = append([]byte(nil), r[8:recLen]...)
	}
	return nil
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
		t = fmt.Sprintf(": (%s portguid 0x%016x: '%s')", string(appendNodeType(nil, uint8(p.Node.Type))), uint64(p.GUID),
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
func writeSwitchLFT(w *bufio.Writer, o *dumpFtsOptions, dests *lidDests, t *switchTable) {
	n := t.node
	start, end := o.lftRange(n, true)
	fmt.Fprintf(w, "Unicast lids [0x%x-0x%x] of switch %s guid 0x%016x (%s):\n", start, end, drPathString(n.Path),
		uint64(n.GUID), o.names.Name(uint64(n.GUID), n.Desc))
	w.WriteString("  Lid  Out   Destination\n       Port     Info \n")
	count := 0
	var paths lmcPaths
	var line []byte
	for block := start / lftBlockSize; block < (end+lftBlockSize-1)/lftBlockSize; block++ {
		data, ok := t.blocks[uint32(block)]
		if !ok {
			continue
		}
		for lid := max(block*lftBlockSize, start); lid < min(block*lftBlockSize+lftBlockSize, end+1); lid++ {
			port := int(data[lid%lftBlockSize])
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
func writeSwitchMFT(w *bufio.Writer, o *dumpFtsOptions, t *switchTable) {
	n := t.node
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
	chunks := (nports + 1 + mftPortsPerMask - 1) / mftPortsPerMask
	count := 0
	for block := start / mftBlockSize; block <= end/mftBlockSize; block++ {
		masks := make([]uint16, chunks)
		for mlid := max(block*mftBlockSize, start); mlid < min(block*mftBlockSize+mftBlockSize, end+1); mlid++ {
			nonzero := false
			for j := range chunks {
				masks[j] = 0
				if data, ok := t.blocks[uint32(block-minMulticastLID/mftBlockSize)|uint32(j)<<28]; ok {
					masks[j] = binary.BigEndian.Uint16(data[2*(mlid%mftBlockSize):])
				}
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
					if masks[i/16]&(1<<(i%16)) != 0 {
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
func ftsJSON(o *dumpFtsOptions, fab *subnet.Fabric, tables []*switchTable) any {
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
		n := t.node
		if n.SwitchInfo == nil {
			continue
		}
		sj := switchJSON{NodeGUID: n.GUID.String(), Description: o.names.Name(uint64(n.GUID), n.Desc), LID: int(n.SMALID),
			Path: subnet.FormatPath(n.Path), Entries: []entryJSON{}}
		if o.Multicast {
			start, end := o.mftRange(n, false)
			chunks := (n.NumPorts + 1 + mftPortsPerMask - 1) / mftPortsPerMask
			for mlid := start; mlid <= end; mlid++ {
				block := mlid / mftBlockSize
				var ports []int
				for j := range chunks {
					data, ok := t.blocks[uint32(block-minMulticastLID/mftBlockSize)|uint32(j)<<28]
					if !ok {
						continue
					}
					m := binary.BigEndian.Uint16(data[2*(mlid%mftBlockSize):])
					for bit := range 16 {
						if p := j*16 + bit; p <= n.NumPorts && m&(1<<bit) != 0 {
							ports = append(ports, p)
						}
					}
				}
				if len(ports) > 0 || o.All {
					sj.Entries = append(sj.Entries, entryJSON{LID: mlid, Ports: ports})
				}
			}
		} else {
			start, end := o.lftRange(n, false)
			for lid := start; lid <= end; lid++ {
				data, ok := t.blocks[uint32(lid/lftBlockSize)]
				if !ok {
					continue
				}
				port := int(data[lid%lftBlockSize])
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
