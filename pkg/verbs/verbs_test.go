package verbs

import (
	"errors"
	"testing"
)

// TestDevices runs against whatever this machine has: a list, or on a
// machine without RDMA devices or built without verbs, a clear error or
// nothing.
func TestDevices(t *testing.T) {
	devs, err := Devices()
	if errors.Is(err, ErrNoVerbs) {
		t.Skip(err)
	}
	if err != nil {
		t.Logf("no device list here: %v", err)
		return
	}
	names, err := DeviceNames()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(devs) {
		t.Fatalf("%d names, %d devices", len(names), len(devs))
	}
	for i, d := range devs {
		if d.Name != names[i] || len(d.Ports) != d.PhysPortCnt {
			t.Errorf("device %d: %+v (name %q)", i, d, names[i])
		}
	}
}
