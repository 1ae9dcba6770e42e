package verbs

import "fmt"

// ForkStatus is whether a forked child may use the parent's registered
// memory safely (enum ibv_fork_status), what ForkInitialized reports.
type ForkStatus int

// Fork statuses: ForkInit was not called (or came too late), it was,
// or the kernel keeps registered pages safe across fork by itself
// (Linux 5.13 and later), so nothing is needed.
const (
	ForkDisabled ForkStatus = 0
	ForkEnabled  ForkStatus = 1
	ForkUnneeded ForkStatus = 2
)

// String names the status as verbs.h does, without the IBV_FORK_ prefix.
func (s ForkStatus) String() string {
	switch s {
	case ForkDisabled:
		return "DISABLED"
	case ForkEnabled:
		return "ENABLED"
	case ForkUnneeded:
		return "UNNEEDED"
	}
	return fmt.Sprintf("fork status %d", int(s))
}
