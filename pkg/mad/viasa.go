package mad

import (
	"context"
	"encoding/binary"
	"fmt"
)

// SMP Gets answered by the SA (python-rdma's --sa): instead of asking the
// node, the transactor asks the subnet administrator for the record that
// holds the attribute (NodeInfo from the NodeRecord, PortInfo from the
// PortInfoRecord, ...) and hands back a response shaped as the SMP's.

// saRecordFor says where an SMP attribute lives in an SA record: the record
// type, the template's length, the component mask and template the
// attribute modifier selects with, and the attribute's bytes in the record.
type saRecordFor struct {
	attr    AttrID // the SA record
	name    string
	tmplLen int
	// sel fills the template's selectors after the LID (bytes 0-1, bit 0)
	// from the SMP's attribute modifier and returns their mask bits.
	sel func(rec []byte, mod uint32) uint64
	// off and n are the attribute's place in the record.
	off, n int
	// pick, when set, prefers one of several records (otherwise the
	// first is taken).
	pick func(rec []byte, mod uint32) bool
}

func noSel([]byte, uint32) uint64 { return 0 }

// viaSA maps each SMP attribute the SA's records carry.
var viaSA = map[AttrID]saRecordFor{
	AttrNodeInfo:        {0x11, "NodeRecord", 112, noSel, 4, 40, nil},
	AttrNodeDescription: {0x11, "NodeRecord", 112, noSel, 44, 64, nil},
	AttrPortInfo: {0x12, "PortInfoRecord", 72, func(rec []byte, mod uint32) uint64 {
		if mod == 0 {
			// The port the SMP would enter: a CA's one record, or a
			// switch's port 0 (pick).
			return 0
		}
		rec[2] = byte(mod)
		return 1 << 1
	}, 4, 64, func(rec []byte, _ uint32) bool { return rec[2] == 0 }},
	AttrSwitchInfo: {0x14, "SwitchInfoRecord", 24, noSel, 4, 20, nil},
	AttrGUIDInfo: {0x30, "GUIDInfoRecord", 72, func(rec []byte, mod uint32) uint64 {
		rec[2] = byte(mod)
		return 1 << 1
	}, 8, 64, nil},
	AttrPKeyTable: {0x33, "PKeyTableRecord", 72, func(rec []byte, mod uint32) uint64 {
		binary.BigEndian.PutUint16(rec[2:], uint16(mod))
		mask := uint64(1 << 1)
		if port := byte(mod >> 16); port != 0 {
			rec[4] = port
			mask |= 1 << 2
		}
		return mask
	}, 8, 64, nil},
	AttrSLtoVLMappingTable: {0x13, "SLtoVLMappingTableRecord", 16, func(rec []byte, mod uint32) uint64 {
		rec[2], rec[3] = byte(mod>>8), byte(mod)
		return 1<<1 | 1<<2
	}, 8, 8, nil},
	AttrVLArbitrationTable: {0x36, "VLArbitrationTableRecord", 72, func(rec []byte, mod uint32) uint64 {
		rec[2], rec[3] = byte(mod), byte(mod>>16)
		return 1<<1 | 1<<2
	}, 8, 64, nil},
	AttrLinearForwardingTable: {0x15, "LFTRecord", 72, func(rec []byte, mod uint32) uint64 {
		binary.BigEndian.PutUint16(rec[2:], uint16(mod))
		return 1 << 1
	}, 8, 64, nil},
	AttrMulticastForwardingTable: {0x17, "MFTRecord", 72, func(rec []byte, mod uint32) uint64 {
		binary.BigEndian.PutUint16(rec[2:], uint16(mod>>28)<<12|uint16(mod&0x1ff))
		return 1<<1 | 1<<3
	}, 8, 64, nil},
	AttrSMInfo: {0x18, "SMInfoRecord", 32, noSel, 4, 21, nil},
}

// NoRecordError reports that the SA has no record for an SMP asked through
// it.
type NoRecordError struct {
	Request string // the SMP: "SubnGet(NodeInfo)"
	To      string // its target: "Lid 12"
	Record  string // the record asked for: "NodeRecord"
}

func (e *NoRecordError) Error() string {
	return fmt.Sprintf("%s to %s through the SA: no %s matches", e.Request, e.To, e.Record)
}

// doViaSA answers the SMP r from the SA's record for it.
func (t *Transactor) doViaSA(ctx context.Context, r *Request) (*Response, error) {
	m, ok := viaSA[r.AttrID]
	path := r.Path
	if sa := t.opts.SA; sa != nil && path.IsDR() && path.Hops() == 0 && path.LID == 0 {
		path = LIDPath(sa.LID) // the local port
	}
	switch {
	case !ok:
		return nil, fmt.Errorf("%v to %v: no SA record carries this attribute; drop --sa", r, r.Path)
	case r.Method != MethodGet:
		return nil, fmt.Errorf("%v to %v: the SA answers Gets only; drop --sa", r, r.Path)
	case path.IsDR() || path.LID == 0:
		return nil, fmt.Errorf("%v to %v: the SA's records are by LID; give a LID target with --sa", r, r.Path)
	}
	var smKey uint64
	if t.opts.SA != nil {
		smKey = t.opts.SA.SMKey
	}
	tmpl := make([]byte, m.tmplLen)
	binary.BigEndian.PutUint16(tmpl, uint16(path.LID))
	mask := 1 | m.sel(tmpl, r.AttrMod)
	res, err := t.QuerySA(ctx, &SAQuery{Method: MethodGetTable, AttrID: m.attr, Name: m.name,
		ComponentMask: mask, Record: tmpl, SMKey: smKey})
	if err != nil {
		return nil, fmt.Errorf("%v to %v through the SA: %w", r, r.Path, err)
	}
	var rec []byte
	for _, c := range res.Records {
		if len(c) < m.off+m.n {
			continue
		}
		if rec == nil {
			rec = c
		}
		if m.pick != nil && m.pick(c, r.AttrMod) {
			rec = c
			break
		}
	}
	if rec == nil {
		return nil, &NoRecordError{Request: r.String(), To: r.Path.String(), Record: m.name}
	}
	// The response an SMP would have brought: a LID-routed SubnGetResp
	// with the attribute in the SMP data area.
	out := make([]byte, Size)
	h := Header{BaseVersion: BaseVersion, MgmtClass: ClassSMI, ClassVersion: 1, Method: MethodGetResp,
		TID: res.Response.Header.TID, AttrID: r.AttrID, AttrMod: r.AttrMod}
	h.MarshalTo(out)
	copy(out[SMPDataOffset:], rec[m.off:m.off+m.n])
	return &Response{Header: h, MAD: out, Tries: res.Response.Tries, data: SMPDataOffset, end: SMPDataOffset + SMPDataLen}, nil
}
