package mad

import (
	"math/bits"
	"strings"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// The tables SA records carry, as lists of entries (IBA 14.2.5): what
// their generated structs hold as blocks of bytes.

// VLs returns the VL of each SL, 0 to 15.
func (r *SLtoVLMappingTableRecord) VLs() [16]uint8 {
	var vls [16]uint8
	for sl := range vls {
		vls[sl] = uint8(r.SLToVLMappingTable.SLToVLMap >> (60 - 4*sl) & 0xf)
	}
	return vls
}

// Entries returns the block's 32 VL/weight pairs: each pair's VL byte
// (the VL in its low 4 bits) and its weight.
func (r *VLArbitrationTableRecord) Entries() (vls, weights [32]uint8) {
	t := &r.VLArbitrationTable.VLArbTbl
	for i := range vls {
		vls[i], weights[i] = t[2*i], t[2*i+1]
	}
	return vls, weights
}

// PKeys returns the block's 32 P_Keys.
func (r *PKeyTableRecord) PKeys() [32]uint16 { return be16s(&r.PKeyTable.PKeys) }

// PortMasks returns the block's 32 port masks, one for each MLID.
func (r *MulticastForwardingTableRecord) PortMasks() [32]uint16 {
	return be16s(&r.MulticastForwardingTable.MulticastForwTbl)
}

// SwappedBlockNum is the block number with its two bytes swapped: what
// infiniband-diags' saquery prints, reading the field without be16toh.
func (r *PKeyTableRecord) SwappedBlockNum() uint16 { return bits.ReverseBytes16(r.BlockNum) }

// GUIDs returns the block's 8 GUIDs.
func (r *GUIDInfoRecord) GUIDs() [8]rdma.GUID {
	g := &r.GUIDInfo
	return [8]rdma.GUID{g.GUID0, g.GUID1, g.GUID2, g.GUID3, g.GUID4, g.GUID5, g.GUID6, g.GUID7}
}

// ServiceData returns the ServiceData fields of a width, 8, 16, 32 or
// 64 bits, in order: ServiceData8_0 to ServiceData8_15, ...
func (r *ServiceRecord) ServiceData(width int) []uint64 {
	var buf [176]byte
	data, _ := r.AppendBinary(buf[:0])
	var out []uint64
	for _, f := range layoutServiceRecord.Fields {
		if strings.HasPrefix(f.Name, "ServiceData") && f.Width == width {
			out = append(out, f.Value(data))
		}
	}
	return out
}

func be16s(b *[64]byte) [32]uint16 {
	var v [32]uint16
	for i := range v {
		v[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	return v
}
