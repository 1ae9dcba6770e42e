package mad

import "github.com/ibtool/ibtool/pkg/rdma"

// SMState is the state of a subnet manager, SMInfo's SMState (IBA
// 14.4.1).
type SMState uint8

// The SMState values.
const (
	// SMStateNotActive is an SM that does not take part in the subnet.
	SMStateNotActive SMState = 0
	// SMStateDiscovering is an SM sweeping the subnet to find the master.
	SMStateDiscovering SMState = 1
	// SMStateStandby is an SM ready to take over from the master.
	SMStateStandby SMState = 2
	// SMStateMaster is the subnet's master SM.
	SMStateMaster SMState = 3
)

// smStateNames are the states' names as infiniband-diags' sminfo prints
// them.
var smStateNames = [...]string{"SMINFO_NOTACT", "SMINFO_DISCOVER", "SMINFO_STANDBY", "SMINFO_MASTER"}

// String returns the state's name as infiniband-diags' sminfo prints it,
// "???" for a value the IBA does not define.
func (s SMState) String() string {
	if int(s) < len(smStateNames) {
		return smStateNames[s]
	}
	return "???"
}

// PermissiveLID is the LID every port accepts (IBA 4.1.3), used by
// directed-route SMPs.
const PermissiveLID rdma.LID = 0xffff

// IsUnicastLID reports whether lid is a unicast LID a port can be
// assigned: 1 to MaxUnicastLID.
func IsUnicastLID(lid rdma.LID) bool { return lid != 0 && lid <= MaxUnicastLID }

// IsMulticastLID reports whether lid is a multicast LID: MinMulticastLID
// to MaxMulticastLID.
func IsMulticastLID(lid rdma.LID) bool { return lid >= MinMulticastLID && lid <= MaxMulticastLID }
