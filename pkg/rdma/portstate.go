package rdma

import "strconv"

// PortState is the logical state of a port (IBA PortInfo:PortState), the
// number the kernel writes first in ports/N/state ("4: ACTIVE").
type PortState uint32

// Port states.
const (
	PortStateNoChange    PortState = 0
	PortStateDown        PortState = 1
	PortStateInit        PortState = 2
	PortStateArmed       PortState = 3
	PortStateActive      PortState = 4
	PortStateActiveDefer PortState = 5 // kernel-only: active, transition deferred
)

// String returns the name infiniband-diags uses ("Down", "Initializing",
// "Armed", "Active"), a descriptive name for 0 and 5, and PortState(N)
// otherwise.
func (s PortState) String() string {
	switch s {
	case PortStateNoChange:
		return "NoChange"
	case PortStateDown:
		return "Down"
	case PortStateInit:
		return "Initializing"
	case PortStateArmed:
		return "Armed"
	case PortStateActive:
		return "Active"
	case PortStateActiveDefer:
		return "ActiveDefer"
	}
	return "PortState(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// PhysPortState is the physical state of a port (IBA
// PortInfo:PortPhysicalState), the number the kernel writes first in
// ports/N/phys_state ("5: LinkUp").
type PhysPortState uint32

// Physical port states.
const (
	PhysPortStateNoChange                  PhysPortState = 0
	PhysPortStateSleep                     PhysPortState = 1
	PhysPortStatePolling                   PhysPortState = 2
	PhysPortStateDisabled                  PhysPortState = 3
	PhysPortStatePortConfigurationTraining PhysPortState = 4
	PhysPortStateLinkUp                    PhysPortState = 5
	PhysPortStateLinkErrorRecovery         PhysPortState = 6
	PhysPortStatePhyTest                   PhysPortState = 7
)

var physPortStateNames = [...]string{
	"No state change",
	"Sleep",
	"Polling",
	"Disabled",
	"PortConfigurationTraining",
	"LinkUp",
	"LinkErrorRecovery",
	"PhyTest",
}

// String returns the name infiniband-diags uses ("Polling", "LinkUp", ...)
// and PhysPortState(N) for numbers outside the IBA table.
func (s PhysPortState) String() string {
	if uint64(s) < uint64(len(physPortStateNames)) {
		return physPortStateNames[s]
	}
	return "PhysPortState(" + strconv.FormatUint(uint64(s), 10) + ")"
}
