// Package subnettest is an in-memory fabric for tests: nodes, ports and
// links that answer SubnGet SMPs (NodeInfo, NodeDescription, PortInfo,
// SwitchInfo) by directed route or LID, through a madtest.Transport.
// Faults are set on nodes and ports: a node that answers nothing, a link
// that is down, SMPs dropped.
package subnettest
