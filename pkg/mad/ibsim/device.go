package ibsim

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// Device returns the attach point as pkg/rdma reads it from SysFS (an
// rdma.FS over that tree), built from the attach info without writing and
// parsing the tree's text: Dial's callers resolve their local port in it
// on every start. ok is false for a node type other than CA, switch and
// router, which pkg/rdma leaves out of the device list (or, from 0xa on,
// reads otherwise: node_type is written in hex and read as strtoul reads
// it); the caller then reads SysFS.
func (a *AttachInfo) Device() (d *rdma.Device, ok bool) {
	ni, pi := &a.NodeInfo, &a.PortInfo
	if !rdma.NodeType(ni.NodeType).IsIB() {
		return nil, false
	}
	rate := shimRate(pi)
	gbps, err := rdma.ParseSysfsUint(rate)
	if err != nil {
		return nil, false // shimRate's text always starts with a number
	}
	gid := rdma.NewGID(pi.GIDPrefix, ni.NodeGUID+rdma.GUID(pi.LocalPort))
	pkeys := make([]uint16, len(a.PKeys))
	copy(pkeys, a.PKeys[:])
	p := &rdma.Port{
		Number:    int(pi.LocalPort),
		State:     rdma.PortState(pi.State),
		PhysState: rdma.PhysPortState(pi.PhysState),
		Rate:      rate,
		RateGbps:  uint32(gbps),
		LID:       pi.LID,
		LMC:       pi.LMC,
		SMLID:     pi.SMLID,
		SMSL:      pi.SMSL,
		CapMask:   pi.CapMask,
		LinkLayer: "IB", // the tree has no link_layer
		GIDPrefix: gid.Prefix(),
		GUID:      gid.GUID(),
		GIDs:      []rdma.GIDEntry{{Index: 0, GID: gid}},
		PKeys:     pkeys,
	}
	return &rdma.Device{
		Name:         DeviceName,
		NodeType:     rdma.NodeType(ni.NodeType),
		CAType:       "simulator",
		FWVersion:    fmt.Sprintf("%x", a.Vendor.FWVersion),
		HWRevision:   fmt.Sprintf("%x", a.Vendor.HWVersion),
		NodeGUID:     ni.NodeGUID,
		SysImageGUID: ni.SystemImageGUID,
		NumPorts:     int(pi.LocalPort),
		Ports:        []*rdma.Port{p},
	}, true
}
