package smp

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// smpquery's operations on the tables an SMA keeps in blocks: P_Keys,
// GUIDs, SL to VL mappings and VL arbitration.

// portNode returns the node's NodeInfo, once it has o's port.
func (o *smpqueryOptions) portNode(ctx context.Context, q *madrpc.Querier) (*mad.NodeInfo, error) {
	ni, err := q.NodeInfo(ctx)
	if err == nil && o.Port > int(ni.NumPorts) {
		err = fmt.Errorf("invalid port number %d: the node has %d ports", o.Port, ni.NumPorts)
	}
	return ni, err
}

func smpqueryPKeyTable(ctx context.Context, q *madrpc.Querier, o *smpqueryOptions) (smpqueryResult, error) {
	ni, err := o.portNode(ctx, q)
	if err != nil {
		return smpqueryResult{}, err
	}
	n := int(ni.PartitionCap)
	if ni.IsSwitch() && o.Port != 0 {
		var si mad.SwitchInfo
		if _, err := q.Get(ctx, &si, 0); err != nil {
			return smpqueryResult{}, err
		}
		n = int(si.PartitionEnforcementCap)
	}
	var text []byte
	pkeys := []uint16{}
	const per = mad.PKeysPerBlock
	blocks := (n + per - 1) / per
	for i := range blocks {
		var block mad.PKeyTable
		if _, err := q.Get(ctx, &block, uint32(i)|uint32(o.Port)<<16); err != nil {
			return smpqueryResult{}, err
		}
		k := per
		if i+1 == blocks {
			k = (n + 7 - i*per) / 8 * 8
		}
		for j := 0; j < k; j += 8 {
			text = fmt.Appendf(text, "%4d:", i*per+j)
			for e := j; e < j+8; e++ {
				v := block.PKey(e)
				text = fmt.Appendf(text, " 0x%04x", v)
				if i*per+e < n {
					pkeys = append(pkeys, v)
				}
			}
			text = append(text, '\n')
		}
	}
	text = fmt.Appendf(text, "%d pkeys capacity for this port\n", n)
	return smpqueryResult{Text: text, JSON: struct {
		Capacity int      `json:"capacity"`
		PKeys    []uint16 `json:"pkeys"`
		Port     int      `json:"port"`
		Target   string   `json:"target"`
	}{n, pkeys, o.Port, q.Path.String()}}, nil
}

func smpqueryGUIDInfo(ctx context.Context, q *madrpc.Querier, o *smpqueryOptions) (smpqueryResult, error) {
	var pi mad.PortInfo
	if _, err := q.Get(ctx, &pi, 0); err != nil {
		return smpqueryResult{}, err
	}
	n := int(pi.GUIDCap)
	var text []byte
	guids := []string{}
	const per = mad.GUIDsPerBlock
	blocks := (n + per - 1) / per
	for i := range blocks {
		var block mad.GUIDInfo
		if _, err := q.Get(ctx, &block, uint32(i)); err != nil {
			return smpqueryResult{}, err
		}
		all := block.GUIDs()
		k := per
		if i+1 == blocks {
			k = (n + 1 - i*per) / 2 * 2
		}
		for j := 0; j < k; j += 2 {
			text = fmt.Appendf(text, "%4d: 0x%016x 0x%016x\n", i*per+j, uint64(all[j]), uint64(all[j+1]))
			for e, g := range all[j : j+2] {
				if i*per+j+e < n {
					guids = append(guids, fmt.Sprintf("0x%016x", uint64(g)))
				}
			}
		}
	}
	text = fmt.Appendf(text, "%d guids capacity for this port\n", n)
	return smpqueryResult{Text: text, JSON: struct {
		Capacity int      `json:"capacity"`
		GUIDs    []string `json:"guids"`
		Target   string   `json:"target"`
	}{n, guids, q.Path.String()}}, nil
}

// sl2vlEntry is one SL to VL mapping table of smpquery's JSON: its input
// and output ports and the VL of each SL.
type sl2vlEntry struct {
	InPort  int `json:"inPort"`
	OutPort int `json:"outPort"`
	// VL is a []uint8, which encoding/json writes as base64: the
	// document has always carried it so.
	VL []uint8 `json:"vl"`
}

func smpquerySL2VL(ctx context.Context, q *madrpc.Querier, o *smpqueryOptions) (smpqueryResult, error) {
	ni, err := o.portNode(ctx, q)
	if err != nil {
		return smpqueryResult{}, err
	}
	text := fmt.Appendf(nil, "# SL2VL table: %s\n#                 SL: |", q.Path)
	for sl := range 16 {
		text = fmt.Appendf(text, "%2d|", sl)
	}
	text = append(text, '\n')
	var entries []sl2vlEntry
	pairs := [][2]int{{0, 0}}
	if ni.IsSwitch() {
		pairs = nil
		for in := 0; in <= int(ni.NumPorts); in++ {
			pairs = append(pairs, [2]int{in, o.Port})
		}
	}
	for _, pr := range pairs {
		var table mad.SLtoVLMappingTable
		if _, err := q.Get(ctx, &table, uint32(pr[0])<<8|uint32(pr[1])); err != nil {
			return smpqueryResult{}, err
		}
		e := sl2vlEntry{InPort: pr[0], OutPort: pr[1]}
		text = fmt.Appendf(text, "ports: in %2d, out %2d: |", pr[0], pr[1])
		for sl := range 16 {
			vl := table.VL(sl)
			e.VL = append(e.VL, vl)
			text = fmt.Appendf(text, "%2d|", vl)
		}
		text = append(text, '\n')
		entries = append(entries, e)
	}
	return smpqueryResult{Text: text, JSON: struct {
		SL2VL  []sl2vlEntry `json:"sl2vl"`
		Target string       `json:"target"`
	}{entries, q.Path.String()}}, nil
}

// vlArbDoc is smpquery's JSON of the VL arbitration tables; a priority's
// entries are left out where its capacity is 0.
type vlArbDoc struct {
	HighCap      int              `json:"highCap"`
	HighPriority []mad.VLArbEntry `json:"highPriority,omitempty"`
	LowCap       int              `json:"lowCap"`
	LowPriority  []mad.VLArbEntry `json:"lowPriority,omitempty"`
	Port         int              `json:"port"`
	Target       string           `json:"target"`
}

func smpqueryVLArb(ctx context.Context, q *madrpc.Querier, o *smpqueryOptions) (smpqueryResult, error) {
	// Port 0 could mean a switch's port 0 or the port the MAD arrives on.
	if o.Port == 0 {
		ni, err := q.NodeInfo(ctx)
		if err != nil {
			return smpqueryResult{}, err
		}
		if ni.IsSwitch() {
			var si mad.SwitchInfo
			if _, err := q.Get(ctx, &si, 0); err != nil {
				return smpqueryResult{}, err
			}
			if si.EnhancedPort0 == 0 {
				text := fmt.Appendf(nil, "# No VLArbitration tables (BSP0): %s port %d\n", q.Path, 0)
				return smpqueryResult{Text: text, JSON: struct {
					BaseSwitchPort0 bool   `json:"baseSwitchPort0"`
					Port            int    `json:"port"`
					Target          string `json:"target"`
				}{true, 0, q.Path.String()}}, nil
			}
		}
	}
	var pi mad.PortInfo
	if _, err := q.Get(ctx, &pi, uint32(o.Port)); err != nil {
		return smpqueryResult{}, err
	}
	doc := vlArbDoc{LowCap: int(pi.VLArbLowCap), HighCap: int(pi.VLArbHighCap), Port: o.Port, Target: q.Path.String()}
	text := fmt.Appendf(nil, "# VLArbitration tables: %s port %d LowCap %d HighCap %d\n", q.Path, o.Port, doc.LowCap, doc.HighCap)
	for _, t := range []struct {
		name  string
		block int
		cap   int
		dst   *[]mad.VLArbEntry
	}{{"Low", vlArbLowBlock, doc.LowCap, &doc.LowPriority}, {"High", vlArbHighBlock, doc.HighCap, &doc.HighPriority}} {
		if t.cap <= 0 {
			continue
		}
		text = fmt.Appendf(text, "# %s priority VL Arbitration Table:", t.name)
		entries := []mad.VLArbEntry{}
		for block, left := t.block, t.cap; left > 0; block, left = block+1, left-mad.VLArbEntriesPerBlock {
			var table mad.VLArbitrationTable
			if _, err := q.Get(ctx, &table, uint32(block)<<16|uint32(o.Port)); err != nil {
				return smpqueryResult{}, err
			}
			var part []mad.VLArbEntry
			for i := range min(left, mad.VLArbEntriesPerBlock) {
				part = append(part, table.Entry(i))
			}
			text = appendVLArb(text, part)
			entries = append(entries, part...)
			if block > t.block {
				break // two blocks at most, as infiniband-diags reads
			}
		}
		*t.dst = entries
	}
	return smpqueryResult{Text: text, JSON: doc}, nil
}

// appendVLArb is libibmad's mad_dump_vlarbitration: a VL row and a WEIGHT
// row, each entry as "0x%-2X|".
func appendVLArb(b []byte, entries []mad.VLArbEntry) []byte {
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
