package rdma

import (
	"sort"
	"strconv"
	"strings"
)

// Port is one port of a device, read from class/infiniband/<dev>/ports/<n>
// the way libibumad's umad_get_port reads it.
//
// Required files: lid_mask_count, sm_lid, sm_sl, lid, state, phys_state,
// rate, cap_mask, gids/0 and at least one readable pkeys/N. Optional:
// link_layer ("IB" when missing or unreadable, libibumad's default; an
// unreadable one leaves its error in Unread). Best effort, not read by
// libibumad: gids/N for N > 0 and gid_attrs/{types,ndevs}/N; an entry that
// does not read or parse is left out rather than failing the port (the
// kernel itself fails reads of gid_attrs for unused entries).
type Port struct {
	Number    int           // directory name under ports/
	State     PortState     // state, "4: ACTIVE"
	PhysState PhysPortState // phys_state, "5: LinkUp"
	// Rate is the rate file as written, e.g. "100 Gb/sec (4X EDR)" or
	// "2.5 Gb/sec (1X SDR)".
	Rate string
	// RateGbps is the leading integer of Rate as libibumad parses it
	// (strtoul): 100 for the first example above, 2 for the second.
	RateGbps  uint32
	LID       LID    // lid, "0x5"
	LMC       uint8  // lid_mask_count
	SMLID     LID    // sm_lid
	SMSL      uint8  // sm_sl
	CapMask   uint32 // cap_mask, IBA PortInfo:CapabilityMask
	LinkLayer string // link_layer: "InfiniBand", "Ethernet"; "IB" when missing
	GIDPrefix uint64 // upper 64 bits of gids/0
	GUID      GUID   // port GUID: lower 64 bits of gids/0
	// GIDs holds the GID table by increasing index, unused (all-zero)
	// entries included.
	GIDs []GIDEntry
	// PKeys is the P_Key table: PKeys[i] is pkeys/i (0 for an index the
	// directory lacks).
	PKeys []uint16
	// Unread holds the error of link_layer when it is there but did not
	// read (LinkLayer is then the default "IB"); see Device.Unread.
	Unread []error
}

// GIDType is the kind of a GID table entry as the kernel names it in
// gid_attrs/types/N.
type GIDType string

// GID types the kernel writes (ib_cache_gid_type_str).
const (
	GIDTypeIBRoCEv1 GIDType = "IB/RoCE v1"
	GIDTypeRoCEv2   GIDType = "RoCE v2"
)

// GIDEntry is one entry of a port's GID table.
type GIDEntry struct {
	Index int
	GID   GID
	// Type is gid_attrs/types/N; "" when the kernel gives none (an
	// unused entry, or an older kernel without gid_attrs).
	Type GIDType
	// NetDev is gid_attrs/ndevs/N, the network device a RoCE GID belongs
	// to; "" for InfiniBand ports and unused entries.
	NetDev string
}

// FDR10 reports whether the rate file says FDR10, as infiniband-diags'
// ibstat decides it: the five characters before the first ')' of the rate
// (as read into its 32-byte buffer) are "fdr10" in any case.
func (p *Port) FDR10() bool {
	r := CString([]byte(p.Rate), umadNumBuf)
	i := strings.IndexByte(r, ')')
	// ibstat reads before its buffer when ')' comes earlier; that is
	// undefined, and here simply not FDR10.
	return i >= 5 && strings.EqualFold(r[i-5:i], "fdr10")
}

// port reads port n under the ports directory dir.
func (f *FS) port(dir string, n int) (*Port, error) {
	pdir := dir + "/" + strconv.Itoa(n)
	p := &Port{Number: n}
	var err error
	read := func(name string, limit uint64) uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = f.readUint(pdir + "/" + name)
		if err == nil && limit != 0 && v > limit {
			err = f.parseError(pdir+"/"+name, &ParseError{Kind: name, Input: strconv.FormatUint(v, 10), Reason: "out of range 0 to " + strconv.FormatUint(limit, 10)})
		}
		return v
	}
	// libibumad's order, so the first bad file is the one it would name.
	p.LMC = uint8(read("lid_mask_count", 0xff))
	p.SMLID = LID(read("sm_lid", 0xffff))
	p.SMSL = uint8(read("sm_sl", 0xff))
	p.LID = LID(read("lid", 0xffff))
	p.State = PortState(uint32(read("state", 0)))
	p.PhysState = PhysPortState(uint32(read("phys_state", 0)))
	p.RateGbps = uint32(read("rate", 0))
	p.CapMask = uint32(read("cap_mask", 0))
	if err != nil {
		return nil, err
	}
	if p.Rate, err = f.readString(pdir+"/rate", 0); err != nil {
		return nil, err
	}
	p.LinkLayer = f.readOptional(pdir+"/link_layer", "IB", &p.Unread)
	gid0, err := f.readGID(pdir + "/gids/0")
	if err != nil {
		return nil, err
	}
	p.GIDPrefix, p.GUID = gid0.Prefix(), gid0.GUID()
	if p.PKeys, err = f.pkeys(pdir + "/pkeys"); err != nil {
		return nil, err
	}
	p.GIDs = f.gids(pdir)
	return p, nil
}

// pkeys reads the P_Key table. libibumad needs at least one entry whose
// name is all digits, and every such entry readable.
func (f *FS) pkeys(dir string) ([]uint16, error) {
	entries, err := f.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var tbl []uint16
	found := false
	for _, e := range entries {
		idx, ok := tableIndex(e.Name())
		if !ok {
			continue
		}
		v, err := f.readUint(dir + "/" + e.Name())
		if err != nil {
			return nil, err
		}
		if v > 0xffff {
			return nil, f.parseError(dir+"/"+e.Name(), &ParseError{Kind: "P_Key", Input: strconv.FormatUint(v, 10), Reason: "out of range 0 to 0xffff"})
		}
		for len(tbl) <= idx {
			tbl = append(tbl, 0)
		}
		tbl[idx] = uint16(v)
		found = true
	}
	if !found {
		return nil, f.parseError(dir, &ParseError{Kind: "P_Key table", Input: dir, Reason: "no pkeys found"})
	}
	return tbl, nil
}

// gids reads the GID table with its attributes, leaving out entries that
// do not read.
func (f *FS) gids(pdir string) []GIDEntry {
	entries, err := f.ReadDir(pdir + "/gids")
	if err != nil {
		return nil
	}
	var out []GIDEntry
	for _, e := range entries {
		idx, ok := tableIndex(e.Name())
		if !ok {
			continue
		}
		g, err := f.readGID(pdir + "/gids/" + e.Name())
		if err != nil {
			continue
		}
		out = append(out, GIDEntry{
			Index:  idx,
			GID:    g,
			Type:   GIDType(f.readOptional(pdir+"/gid_attrs/types/"+e.Name(), "", nil)),
			NetDev: f.readOptional(pdir+"/gid_attrs/ndevs/"+e.Name(), "", nil),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// tableIndex parses the name of a gids/ or pkeys/ entry: decimal digits,
// at most 65535 (both tables are indexed by 16 bits at most).
func tableIndex(s string) (int, bool) {
	if s == "" || len(s) > 5 || !isDecimal(s) {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n <= 0xffff
}
