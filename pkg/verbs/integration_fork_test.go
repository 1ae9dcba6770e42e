//go:build cgo && !noverbs

package verbs

import (
	"errors"
	"syscall"
	"testing"
)

// TestIntegrationIsForkInitialized is tests/test_fork.py's
// test_is_fork_initialized: after ForkInit, fork support is enabled or
// unneeded; a ForkInit that comes after an MR was registered (as in this
// test binary, whose earlier tests register many) fails with EINVAL and
// leaves it disabled or unneeded.
func TestIntegrationIsForkInitialized(t *testing.T) {
	integrationContext(t) // skips without a device
	want := []ForkStatus{ForkEnabled, ForkUnneeded}
	initErr := ForkInit()
	if errors.Is(initErr, syscall.EINVAL) {
		want = []ForkStatus{ForkDisabled, ForkUnneeded}
	} else if initErr != nil {
		t.Fatal(initErr)
	}
	got, err := ForkInitialized()
	if errors.Is(err, syscall.EOPNOTSUPP) {
		t.Skipf("libibverbs has no ibv_is_fork_initialized: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got != want[0] && got != want[1] {
		t.Errorf("ForkInitialized() = %s after ForkInit's %v, want %s or %s", got, initErr, want[0], want[1])
	}
	t.Logf("ForkInit: %v; ForkInitialized: %s", initErr, got)
}
