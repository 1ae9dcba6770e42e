package madrpc

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
)

// NodeInfo returns the NodeInfo of q's node.
func (q *Querier) NodeInfo(ctx context.Context) (*mad.NodeInfo, error) {
	var ni mad.NodeInfo
	_, err := q.Get(ctx, &ni, 0)
	return &ni, err
}

// PortInfoExtended returns port's PortInfoExtended and its data, once the
// port's PortInfo (a switch's port 0's) says it has one, as
// infiniband-diags checks: CapabilityMask2 is there and has
// IsPortInfoExtendedSupported.
func (q *Querier) PortInfoExtended(ctx context.Context, port int) (*mad.PortInfoExtended, []byte, error) {
	ni, err := q.NodeInfo(ctx)
	if err != nil {
		return nil, nil, err
	}
	capPort := port
	if ni.IsSwitch() {
		capPort = 0
	}
	var pi mad.PortInfo
	if _, err := q.Get(ctx, &pi, uint32(capPort)); err != nil {
		return nil, nil, err
	}
	if pi.CapabilityMask&mad.PortCapIsCapabilityMask2Supported == 0 {
		return nil, nil, fmt.Errorf("%w: the port has no CapabilityMask2", mad.ErrNoPortInfoExtended)
	}
	if pi.CapabilityMask2&mad.PortCap2IsPortInfoExtendedSupported == 0 {
		return nil, nil, fmt.Errorf("%w: CapabilityMask2 0x%x does not indicate PortInfoExtended", mad.ErrNoPortInfoExtended, pi.CapabilityMask2)
	}
	var pie mad.PortInfoExtended
	data, err := q.Get(ctx, &pie, uint32(port))
	return &pie, data, err
}
