package mad

import (
	"context"
	"errors"
	"fmt"
)

// PortInfo capability bits that say a port has PortInfoExtended (IBA
// 14.2.5.6).
const (
	portCapHasCapMask2       = 1 << 15 // CapabilityMask: IsCapabilityMask2Supported
	portCap2PortInfoExtended = 1 << 1  // CapabilityMask2: IsPortInfoExtendedSupported
)

// ErrNoPortInfoExtended is wrapped by GetPortInfoExtended's error when the
// port says it has no PortInfoExtended.
var ErrNoPortInfoExtended = errors.New("port info extended not supported")

// GetPortInfoExtended reads port's PortInfoExtended from the node at q's
// path, as smpquery does: first the PortInfo (of port 0 on a switch, whose
// ports share its capabilities) must say the port has one. It returns the
// attribute and the reply's data, for dumps.
func GetPortInfoExtended(ctx context.Context, q *Querier, port int) (*PortInfoExtended, []byte, error) {
	var ni NodeInfo
	if _, err := q.Get(ctx, &ni, 0); err != nil {
		return nil, nil, err
	}
	infoPort := port
	if ni.NodeType == pmaSwitchNodeType {
		infoPort = 0
	}
	var pi PortInfo
	if _, err := q.Get(ctx, &pi, uint32(infoPort)); err != nil {
		return nil, nil, err
	}
	if pi.CapabilityMask&portCapHasCapMask2 == 0 {
		return nil, nil, fmt.Errorf("%w: the port has no CapabilityMask2", ErrNoPortInfoExtended)
	}
	if pi.CapabilityMask2&portCap2PortInfoExtended == 0 {
		return nil, nil, fmt.Errorf("%w: CapabilityMask2 0x%x does not indicate PortInfoExtended", ErrNoPortInfoExtended, pi.CapabilityMask2)
	}
	var pie PortInfoExtended
	data, err := q.Get(ctx, &pie, uint32(port))
	if err != nil {
		return nil, nil, err
	}
	return &pie, data, nil
}
