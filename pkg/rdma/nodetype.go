package rdma

import "strconv"

// NodeType is what kind of RDMA node a device is: the number the kernel
// writes first in node_type ("1: CA"), from enum rdma_node_type.
type NodeType uint32

// Node types the kernel reports.
const (
	NodeTypeUnknown     NodeType = 0
	NodeTypeCA          NodeType = 1 // InfiniBand channel adapter (also RoCE and rxe)
	NodeTypeSwitch      NodeType = 2
	NodeTypeRouter      NodeType = 3
	NodeTypeRNIC        NodeType = 4 // iWARP
	NodeTypeUSNIC       NodeType = 5
	NodeTypeUSNICUDP    NodeType = 6
	NodeTypeUnspecified NodeType = 7
)

// String returns the name infiniband-diags prints for t ("CA", "Switch",
// "Router", "iWARP RNIC"), the kernel's name for the newer types, and
// NodeType(N) otherwise.
func (t NodeType) String() string {
	switch t {
	case NodeTypeCA:
		return "CA"
	case NodeTypeSwitch:
		return "Switch"
	case NodeTypeRouter:
		return "Router"
	case NodeTypeRNIC:
		return "iWARP RNIC"
	case NodeTypeUSNIC:
		return "usNIC"
	case NodeTypeUSNICUDP:
		return "usNIC UDP"
	case NodeTypeUnspecified:
		return "unspecified"
	}
	return "NodeType(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// IsIB reports whether t is an InfiniBand node type (CA, switch or router):
// the devices libibumad lists and infiniband-diags works with.
func (t NodeType) IsIB() bool { return t >= NodeTypeCA && t <= NodeTypeRouter }
