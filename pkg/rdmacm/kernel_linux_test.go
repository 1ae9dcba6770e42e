package rdmacm

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenKernelMissing: without the device (rdma_ucm not loaded) the
// error names the device, keeps ENOENT and says what to load.
func TestOpenKernelMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rdma_cm")
	k, err := openKernel(path)
	if err == nil {
		k.close()
		t.Fatal("opened a device that is not there")
	}
	if !errors.Is(err, unix.ENOENT) {
		t.Errorf("error %v is not ENOENT", err)
	}
	for _, want := range []string{"open " + path, "modprobe rdma_ucm"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
