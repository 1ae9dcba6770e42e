//go:build cgo && !noverbs

package verbs

import (
	"os"
	"testing"
)

// The TestIntegration* tests need a kernel RDMA device: make test-vm runs
// this package's test binary in the guest with IBTOOL_VERBS_DEVICE naming
// one (rxe or siw, scripts/vm/checks/80-verbs.sh). Elsewhere they skip.
const deviceEnv = "IBTOOL_VERBS_DEVICE"

// integrationContext opens the device IBTOOL_VERBS_DEVICE names, or skips
// the test when it names none; the context closes when the test ends.
func integrationContext(t *testing.T) *Context {
	t.Helper()
	name := os.Getenv(deviceEnv)
	if name == "" {
		t.Skipf("%s is not set: no kernel RDMA device to test on", deviceEnv)
	}
	ctx, err := Open(name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("closing %s: %v", name, err)
		}
	})
	return ctx
}

// TestIntegrationDevice checks that the device answers the queries every
// other test starts with: the device's attributes, port 1 up, GID 0 set.
func TestIntegrationDevice(t *testing.T) {
	ctx := integrationContext(t)
	devs, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	var dev *Device
	for i := range devs {
		if devs[i].Name == ctx.Name() {
			dev = &devs[i]
		}
	}
	if dev == nil {
		t.Fatalf("%s is open but not in the device list %v", ctx.Name(), devs)
	}
	if dev.Attr.MaxQP == 0 || dev.Attr.MaxCQE == 0 || dev.Attr.MaxMRSize == 0 {
		t.Errorf("%s: attributes look unset: %+v", ctx.Name(), dev.Attr)
	}
	p, err := ctx.QueryPort(1)
	if err != nil {
		t.Fatal(err)
	}
	if p.State != PortStateActive {
		t.Errorf("%s port 1 is %v, want %v", ctx.Name(), p.State, PortStateActive)
	}
	gid, err := ctx.QueryGID(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if gid == ([16]byte{}) {
		t.Errorf("%s port 1 GID 0 is all zeroes", ctx.Name())
	}
}
