package cmd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	register(Tool{
		Name:    "smpquery",
		Summary: "query SMP attributes (NodeInfo, NodeDesc, ...) of a port",
		New:     func(f *Factory) *cobra.Command { return newSmpqueryCmd(f, nil) },
	})
}

// smpqueryOp is one operation of smpquery, as infiniband-diags' match_tbl
// lists them.
type smpqueryOp struct {
	Name, Alias string
	PortArg     bool // takes an optional port number
	// run queries the attribute and renders it.
	run func(q *smpQuerier, o *smpqueryOptions) (smpqueryResult, error)
}

var smpqueryOps = []smpqueryOp{
	{"NodeInfo", "NI", false, smpqueryNodeInfo},
	{"NodeDesc", "ND", false, smpqueryNodeDesc},
	{"PortInfo", "PI", true, smpqueryPortInfo},
	{"PortInfoExtended", "PIE", true, smpqueryPortInfoExtended},
	{"SwitchInfo", "SI", false, smpquerySwitchInfo},
	{"PKeyTable", "PKeys", true, smpqueryPKeyTable},
	{"SL2VLTable", "SL2VL", true, smpquerySL2VL},
	{"VLArbitration", "VLArb", true, smpqueryVLArb},
	{"GUIDInfo", "GI", false, smpqueryGUIDInfo},
	{"MlnxExtPortInfo", "MEPI", true, smpqueryMlnxExtPortInfo},
}

// smpqueryOptions are smpquery's parsed flags and arguments.
type smpqueryOptions struct {
	IO     IOStreams
	Common CommonOptions
	Op     *smpqueryOp
	Target endport.Target
	Path   mad.Path
	// Port is the operation's port number, 0 when not given.
	Port int
	// Extended is -x: PortInfo with extended speeds (attribute modifier
	// bit 31).
	Extended bool
	// ShowKeys is -K: print the M_Key instead of "<not displayed>".
	ShowKeys bool
	// Names is the node name map (nil: none).
	Names *nodemap.Map
	// Combined is -c: the target is a LID and a DR path from that LID
	// (a combined route); CombinedLID is the LID.
	Combined    bool
	CombinedLID rdma.LID
	// LocalLID is the local port's LID, the DrSLID of a combined route;
	// Transactor sets it.
	LocalLID rdma.LID
	// Transactor opens the MAD transport.
	Transactor func() (*mad.Transactor, error)
}

// smpqueryResult is what one operation found: the text infiniband-diags
// prints and the JSON document.
type smpqueryResult struct {
	Text []byte
	JSON any
}

func newSmpqueryCmd(f *Factory, runF func(*smpqueryOptions) error) *cobra.Command {
	o := &smpqueryOptions{IO: f.IO}
	var ops strings.Builder
	for _, op := range smpqueryOps {
		port := ""
		if op.PortArg {
			port = " [<portnum>]"
		}
		fmt.Fprintf(&ops, "  %s (%s) <addr>%s\n", op.Name, op.Alias, port)
	}
	c := &cobra.Command{
		Use:   "smpquery [options] <op> <dest dr_path|lid|guid> [op params]",
		Short: "query SMP attributes (NodeInfo, NodeDesc, ...) of a port",
		Long: `smpquery sends a subnet management Get for one attribute to a port and
prints the reply as infiniband-diags' smpquery does.

Supported ops (and aliases, case insensitive):
` + ops.String() + `
The target is a LID (12, 0x1a) or a DR path (0,1,3); its format decides which,
-L and -D only assert it. A GUID or GID target needs the SA, which
ibtool does not query yet.`,
		Example: `  smpquery nodeinfo 3          # NodeInfo of LID 3
  smpquery -D nodedesc 0,1     # NodeDesc one hop away by direct route
  smpquery --json ni 0         # this port's NodeInfo as JSON`,
		Args: argsRange(2, 4),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.finish(c); err != nil {
				return err
			}
			if err := o.parseArgs(args); err != nil {
				return err
			}
			o.Transactor = func() (*mad.Transactor, error) {
				x, local, err := f.openTransactorAt(&o.Common)
				if local != nil {
					o.LocalLID = local.LID
				}
				return x, err
			}
			if runF != nil {
				return runF(o)
			}
			return smpqueryRun(o)
		},
	}
	addCommonFlags(c, &o.Common, flagsLocalPort|flagsMAD|flagsJSON|flagsTarget|flagsNodeMap|flagsSA)
	c.Flags().BoolVarP(&o.Extended, "extended", "x", false, "use extended speeds (PortInfo)")
	c.Flags().BoolVarP(&o.ShowKeys, "show_keys", "K", false, "display security keys in output")
	c.Flags().BoolVarP(&o.Combined, "combined", "c", false, "use Combined route address argument: <lid> <dr_path>")
	return c
}

// parseArgs picks the operation and parses the target.
func (o *smpqueryOptions) parseArgs(args []string) error {
	for i := range smpqueryOps {
		op := &smpqueryOps[i]
		if strings.EqualFold(args[0], op.Name) || strings.EqualFold(args[0], op.Alias) {
			o.Op = op
		}
	}
	if o.Op == nil {
		return usageErrorf("operation '%s' not supported", args[0])
	}
	if o.Combined {
		// <lid> <dr_path>, as infiniband-diags' -c takes them.
		if len(args) < 3 {
			return &UsageError{Err: errors.New("-c needs a LID and a DR path"), Syntax: true}
		}
		lid, err := rdma.ParseLID(args[1])
		if err != nil {
			return &UsageError{Err: err}
		}
		o.CombinedLID = lid
		args = append(args[:1:1], args[2:]...)
	} else if len(args) > 3 {
		return &UsageError{Err: fmt.Errorf("expected at most 3 argument(s), got %d: %q", len(args), args[3:]), Syntax: true}
	}
	if len(args) > 2 && !o.Op.PortArg {
		return &UsageError{Err: fmt.Errorf("operation %s takes no port number: %q", o.Op.Name, args[2]), Syntax: true}
	}
	if len(args) > 2 {
		n, err := parsePortArg(args[2])
		if err != nil {
			return err
		}
		o.Port = n
	}
	t, err := o.Common.parseTarget(args[1])
	if err != nil {
		return err
	}
	o.Target = t
	return nil
}

// smpqueryRun queries the attribute and prints it.
func smpqueryRun(o *smpqueryOptions) error {
	p, err := smpPath(o.Target)
	if err != nil {
		return err
	}
	if o.Combined && !p.IsDR() {
		return usageErrorf("-c: %s is not a DR path", o.Target)
	}
	if o.Names, err = o.Common.loadNodeMap("smpquery", o.IO.ErrOut); err != nil {
		return err
	}
	x, err := o.Transactor()
	if err != nil {
		return err
	}
	defer x.Close()
	if p, err = x.Resolve(o.Common.context(), p); err != nil {
		return err
	}
	if o.Combined {
		// LID-routed to CombinedLID, then by direct route from there;
		// responses come back to this port's LID.
		p = mad.Path{LID: o.CombinedLID, DR: p.DR, DrSLID: o.LocalLID}
	}
	o.Path = p
	res, err := o.Op.run(&smpQuerier{ctx: o.Common.context(), x: x, path: p}, o)
	if err != nil {
		return withContext(err, "operation %s", o.Op.Name)
	}
	if o.Common.JSON {
		return writeJSONDocument(o.IO.Out, res.JSON)
	}
	_, err = o.IO.Out.Write(res.Text)
	return err
}

// smpQuerier sends SubnGet requests to one path.
type smpQuerier struct {
	ctx  context.Context
	x    *mad.Transactor
	path mad.Path
}

// get sends a SubnGet of the attribute with the modifier and returns the
// reply's attribute data.
func (q *smpQuerier) get(l *mad.Layout, mod uint32) ([]byte, error) {
	r, err := q.x.Do(q.ctx, &mad.Request{Path: q.path, Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: l.ID, AttrMod: mod, Name: l.Name})
	if err != nil {
		return nil, err
	}
	return r.Data(), nil
}

// decode sends a SubnGet for a and decodes the reply into it; it returns
// the attribute data too, for the dump.
func (q *smpQuerier) decode(a mad.Attribute, mod uint32) ([]byte, error) {
	data, err := q.get(a.Layout(), mod)
	if err != nil {
		return nil, err
	}
	return data, a.UnmarshalBinary(data)
}

// nodeInfo returns the target's NodeInfo.
func (q *smpQuerier) nodeInfo() (*mad.NodeInfo, []byte, error) {
	var ni mad.NodeInfo
	data, err := q.decode(&ni, 0)
	return &ni, data, err
}

func smpqueryNodeInfo(q *smpQuerier, o *smpqueryOptions) (smpqueryResult, error) {
	ni, data, err := q.nodeInfo()
	if err != nil {
		return smpqueryResult{}, err
	}
	text := fmt.Appendf(nil, "# Node info: %s\n", q.path)
	text = ni.Layout().AppendDump(text, data)
	return smpqueryResult{Text: text, JSON: map[string]any{"target": q.path.String(), "nodeInfo": ni}}, nil
}

func smpqueryNodeDesc(q *smpQuerier, o *smpqueryOptions) (smpqueryResult, error) {
	// NodeInfo first, for the node name map's GUID.
	ni, _, err := q.nodeInfo()
	if err != nil {
		return smpqueryResult{}, err
	}
	var nd mad.NodeDescription
	if _, err := q.decode(&nd, 0); err != nil {
		return smpqueryResult{}, err
	}
	desc := o.Names.Name(uint64(ni.NodeGUID), nd.NodeDescription.String())
	// smpquery pads the name, not the label, to its column: 32 dots less
	// the name's length, at least one.
	dots := max(32-len(desc), 1)
	text := fmt.Appendf(nil, "Node Description:%s%s\n", strings.Repeat(".", dots), desc)
	return smpqueryResult{Text: text, JSON: map[string]any{
		"target":          q.path.String(),
		"nodeDescription": desc,
	}}, nil
}

func smpqueryPortInfo(q *smpQuerier, o *smpqueryOptions) (smpqueryResult, error) {
	mod := uint32(o.Port)
	if o.Extended {
		mod |= 1 << 31
	}
	var pi mad.PortInfo
	_, err := q.decode(&pi, mod)
	if err != nil {
		return smpqueryResult{}, err
	}
	text := fmt.Appendf(nil, "# Port info: %s port %d\n", q.path, o.Port)
	text = pi.AppendDump(text, "", o.ShowKeys)
	if !o.ShowKeys {
		pi.MKey = 0
	}
	return smpqueryResult{Text: text, JSON: map[string]any{"target": q.path.String(), "port": o.Port, "portInfo": &pi}}, nil
}

// notDisplayed stands in for a key when -K is not given.
const notDisplayed = mad.NotDisplayed

// Capability bits smpquery checks before PortInfoExtended.
const (
	capHasCapMask2       = 1 << 15 // PortInfo:CapabilityMask IsCapabilityMask2Supported
	cap2PortInfoExtended = 1 << 1  // CapabilityMask2 IsPortInfoExtendedSupported
)

// Table sizes and VL arbitration blocks (IBA 14.2.5).
const (
	pkeysPerBlock        = 32
	guidsPerBlock        = 8
	vlArbEntriesPerBlock = 32
	vlArbLowBlock        = 1 // attribute modifier bits 16-31: low priority, entries 0-31
	vlArbHighBlock       = 3 // high priority, entries 0-31
)

func smpqueryPortInfoExtended(q *smpQuerier, o *smpqueryOptions) (smpqueryResult, error) {
	ni, _, err := q.nodeInfo()
	if err != nil {
		return smpqueryResult{}, err
	}
	port := o.Port
	if ni.NodeType == mad.NodeTypeSwitch {
		port = 0
	}
	var pi mad.PortInfo
	if _, err := q.decode(&pi, uint32(port)); err != nil {
		return smpqueryResult{}, err
	}
	if pi.CapabilityMask&capHasCapMask2 == 0 {
		return smpqueryResult{}, errors.New("port info extended not supported: the port has no CapabilityMask2")
	}
	if pi.CapabilityMask2&cap2PortInfoExtended == 0 {
		return smpqueryResult{}, fmt.Errorf("port info extended not supported: CapabilityMask2 0x%x does not indicate PortInfoExtended", pi.CapabilityMask2)
	}
	var pie mad.PortInfoExtended
	data, err := q.decode(&pie, uint32(o.Port))
	if err != nil {
		return smpqueryResult{}, err
	}
	text := fmt.Appendf(nil, "# Port info Extended: %s port %d\n", q.path, o.Port)
	text = pie.Layout().AppendDump(text, data)
	return smpqueryResult{Text: text, JSON: map[string]any{"target": q.path.String(), "port": o.Port, "portInfoExtended": &pie}}, nil
}

func smpquerySwitchInfo(q *smpQuerier, o *smpqueryOptions) (smpqueryResult, error) {
	var si mad.SwitchInfo
	data, err := q.decode(&si, 0)
	if err != nil {
		return smpqueryResult{}, err
	}
	text := fmt.Appendf(nil, "# Switch info: %s\n", q.path)
	text = si.Layout().AppendDump(text, data)
	return smpqueryResult{Text: text, JSON: map[string]any{"target": q.path.String(), "switchInfo": &si}}, nil
}

func smpqueryMlnxExtPortInfo(q *smpQuerier, o *smpqueryOptions) (smpqueryResult, error) {
	var mepi mad.MlnxExtPortInfo
	data, err := q.decode(&mepi, uint32(o.Port))
	if err != nil {
		return smpqueryResult{}, err
	}
	text := fmt.Appendf(nil, "# MLNX ext Port info: %s port %d\n", q.path, o.Port)
	text = mepi.Layout().AppendDump(text, data)
	return smpqueryResult{Text: text, JSON: map[string]any{"target": q.path.String(), "port": o.Port, "mlnxExtPortInfo": &mepi}}, nil
}

func smpqueryPKeyTable(q *smpQuerier, o *smpqueryOptions) (smpqueryResult, error) {
	ni, _, err := q.nodeInfo()
	if err != nil {
		return smpqueryResult{}, err
	}
	if o.Port > int(ni.NumPorts) {
		return smpqueryResult{}, fmt.Errorf("invalid port number %d: the node has %d ports", o.Port, ni.NumPorts)
	}
	n := int(ni.PartitionCap)
	if ni.NodeType == mad.NodeTypeSwitch && o.Port != 0 {
		var si mad.SwitchInfo
		if _, err := q.decode(&si, 0); err != nil {
			return smpqueryResult{}, err
		}
		n = int(si.PartitionEnforcementCap)
	}
	var text []byte
	pkeys := []uint16{}
	blocks := (n + pkeysPerBlock - 1) / pkeysPerBlock
	for i := range blocks {
		data, err := q.get(mad.LayoutByName("PKeyTable"), uint32(i)|uint32(o.Port)<<16)
		if err != nil {
			return smpqueryResult{}, err
		}
		k := pkeysPerBlock
		if i+1 == blocks {
			k = (n + 7 - i*pkeysPerBlock) / 8 * 8
		}
		for j := 0; j < k; j += 8 {
			text = fmt.Appendf(text, "%4d:", i*pkeysPerBlock+j)
			for e := j; e < j+8; e++ {
				v := binary.BigEndian.Uint16(data[2*e:])
				text = fmt.Appendf(text, " 0x%04x", v)
				if i*pkeysPerBlock+e < n {
					pkeys = append(pkeys, v)
				}
			}
			text = append(text, '\n')
		}
	}
	text = fmt.Appendf(text, "%d pkeys capacity for this port\n", n)
	return smpqueryResult{Text: text, JSON: map[string]any{"target": q.path.String(), "port": o.Port, "capacity": n, "pkeys": pkeys}}, nil
}

func smpqueryGUIDInfo(q *smpQuerier, o *smpqueryOptions) (smpqueryResult, error) {
	var pi mad.PortInfo
	if _, err := q.decode(&pi, 0); err != nil {
		return smpqueryResult{}, err
	}
	n := int(pi.GUIDCap)
	var text []byte
	guids := []string{}
	blocks := (n + guidsPerBlock - 1) / guidsPerBlock
	for i := range blocks {
		data, err := q.get(mad.LayoutByName("GUIDInfo"), uint32(i))
		if err != nil {
			return smpqueryResult{}, err
		}
		k := guidsPerBlock
		if i+1 == blocks {
			k = (n + 1 - i*guidsPerBlock) / 2 * 2
		}
		for j := 0; j < k; j += 2 {
			a, b := binary.BigEndian.Uint64(data[8*j:]), binary.BigEndian.Uint64(data[8*j+8:])
			text = fmt.Appendf(text, "%4d: 0x%016x 0x%016x\n", i*guidsPerBlock+j, a, b)
			for e, g := range []uint64{a, b} {
				if i*guidsPerBlock+j+e < n {
					guids = append(guids, fmt.Sprintf("0x%016x", g))
				}
			}
		}
	}
	text = fmt.Appendf(text, "%d guids capacity for this port\n", n)
	return smpqueryResult{Text: text, JSON: map[string]any{"target": q.path.String(), "capacity": n, "guids": guids}}, nil
}

func smpquerySL2VL(q *smpQuerier, o *smpqueryOptions) (smpqueryResult, error) {
	ni, _, err := q.nodeInfo()
	if err != nil {
		return smpqueryResult{}, err
	}
	if o.Port > int(ni.NumPorts) {
		return smpqueryResult{}, fmt.Errorf("invalid port number %d: the node has %d ports", o.Port, ni.NumPorts)
	}
	text := fmt.Appendf(nil, "# SL2VL table: %s\n#                 SL: |", q.path)
	for sl := range 16 {
		text = fmt.Appendf(text, "%2d|", sl)
	}
	text = append(text, '\n')
	type entry struct {
		InPort  int     `json:"inPort"`
		OutPort int     `json:"outPort"`
		VL      []uint8 `json:"vl"`
	}
	var entries []entry
	pairs := [][2]int{{0, 0}}
	if ni.NodeType == mad.NodeTypeSwitch {
		pairs = nil
		for in := 0; in <= int(ni.NumPorts); in++ {
			pairs = append(pairs, [2]int{in, o.Port})
		}
	}
	for _, pr := range pairs {
		data, err := q.get(mad.LayoutByName("SLtoVLMappingTable"), uint32(pr[0])<<8|uint32(pr[1]))
		if err != nil {
			return smpqueryResult{}, err
		}
		e := entry{InPort: pr[0], OutPort: pr[1]}
		text = fmt.Appendf(text, "ports: in %2d, out %2d: |", pr[0], pr[1])
		for sl := range 16 {
			vl := data[sl/2] >> 4 & 0xf
			if sl%2 == 1 {
				vl = data[sl/2] & 0xf
			}
			e.VL = append(e.VL, vl)
			text = fmt.Appendf(text, "%2d|", vl)
		}
		text = append(text, '\n')
		entries = append(entries, e)
	}
	return smpqueryResult{Text: text, JSON: map[string]any{"target": q.path.String(), "sl2vl": entries}}, nil
}

// vlArbEntry is one VL arbitration table entry.
type vlArbEntry struct {
	VL     uint8 `json:"vl"`
	Weight uint8 `json:"weight"`
}

func smpqueryVLArb(q *smpQuerier, o *smpqueryOptions) (smpqueryResult, error) {
	// Port 0 could mean a switch's port 0 or the port the MAD arrives on.
	if o.Port == 0 {
		ni, _, err := q.nodeInfo()
		if err != nil {
			return smpqueryResult{}, err
		}
		if ni.NodeType == mad.NodeTypeSwitch {
			var si mad.SwitchInfo
			if _, err := q.decode(&si, 0); err != nil {
				return smpqueryResult{}, err
			}
			if si.EnhancedPort0 == 0 {
				text := fmt.Appendf(nil, "# No VLArbitration tables (BSP0): %s port %d\n", q.path, 0)
				return smpqueryResult{Text: text, JSON: map[string]any{"target": q.path.String(), "port": 0, "baseSwitchPort0": true}}, nil
			}
		}
	}
	var pi mad.PortInfo
	if _, err := q.decode(&pi, uint32(o.Port)); err != nil {
		return smpqueryResult{}, err
	}
	low, high := int(pi.VLArbLowCap), int(pi.VLArbHighCap)
	text := fmt.Appendf(nil, "# VLArbitration tables: %s port %d LowCap %d HighCap %d\n", q.path, o.Port, low, high)
	doc := map[string]any{"target": q.path.String(), "port": o.Port, "lowCap": low, "highCap": high}
	for _, t := range []struct {
		name  string
		block int
		cap   int
	}{{"Low", vlArbLowBlock, low}, {"High", vlArbHighBlock, high}} {
		if t.cap <= 0 {
			continue
		}
		text = fmt.Appendf(text, "# %s priority VL Arbitration Table:", t.name)
		entries := []vlArbEntry{}
		for block, left := t.block, t.cap; left > 0; block, left = block+1, left-vlArbEntriesPerBlock {
			data, err := q.get(mad.LayoutByName("VLArbitrationTable"), uint32(block)<<16|uint32(o.Port))
			if err != nil {
				return smpqueryResult{}, err
			}
			var part []vlArbEntry
			for i := range min(left, vlArbEntriesPerBlock) {
				part = append(part, vlArbEntry{VL: data[2*i] & 0xf, Weight: data[2*i+1]})
			}
			text = appendVLArb(text, part)
			entries = append(entries, part...)
			if block > t.block {
				break // two blocks at most, as infiniband-diags reads
			}
		}
		doc[strings.ToLower(t.name)+"Priority"] = entries
	}
	return smpqueryResult{Text: text, JSON: doc}, nil
}

// appendVLArb is libibmad's mad_dump_vlarbitration: a VL row and a WEIGHT
// row, each entry as "0x%-2X|".
func appendVLArb(b []byte, entries []vlArbEntry) []byte {
	b = append(b, "\nVL    : |"...)
	for _, e := range entries {
		b = fmt.Appendf(b, "0x%-2X|", e.VL)
	}
	b = append(b, "\nWEIGHT: |"...)
	for _, e := range entries {
		b = fmt.Appendf(b, "0x%-2X|", e.Weight)
	}
	return append(b, '\n')
}
