package rdma

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestUmadDevices(t *testing.T) {
	tests := []struct {
		fixture string
		want    []UmadDevice
	}{
		{"mlx5", []UmadDevice{{0, "mlx5_0", 1}, {1, "mlx5_0", 2}, {2, "mlx5_1", 1}}},
		{"rxe", []UmadDevice{{0, "rxe0", 1}}},
		// umadX is not a umad device; umad8 has no port file.
		{"edge", []UmadDevice{{0, "odd0", 1}, {1, "odd0", 3}, {2, "minimal0", 1}, {3, "sw0", 0}, {7, "odd0", 1}}},
		{"broken", nil},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := fixtureFS(tt.fixture).UmadDevices()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected umad devices (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUmadDeviceFor(t *testing.T) {
	fsys := fixtureFS("edge")
	u, err := fsys.UmadDeviceFor("odd0", 1)
	if err != nil {
		t.Fatal(err)
	}
	// The lowest N wins, as in libibumad's dev_to_umad_id.
	if u.Index != 0 || u.Name() != "umad0" || u.DevPath() != "/dev/infiniband/umad0" || u.IssmPath() != "/dev/infiniband/issm0" {
		t.Errorf("odd0 port 1 -> %+v (%s, %s, %s)", u, u.Name(), u.DevPath(), u.IssmPath())
	}
	if u, err := fsys.UmadDeviceFor("sw0", 0); err != nil || u.Index != 3 {
		t.Errorf("sw0 port 0 -> %+v, %v", u, err)
	}
	_, err = fsys.UmadDeviceFor("odd0", 2)
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != "no umad device for odd0 port 2 under /sys/class/infiniband_mad (left out: open /sys/class/infiniband_mad/umad8/port: no such file or directory): file does not exist" {
		t.Errorf("odd0 port 2: %v", err)
	}
	if v, err := fsys.UmadABIVersion(); err != nil || v != 5 {
		t.Errorf("UmadABIVersion = %d, %v", v, err)
	}
	if _, err := fixtureFS("broken").UmadABIVersion(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("UmadABIVersion without ib_umad: %v", err)
	}
	bad := fstest.MapFS{"class/infiniband_mad": &fstest.MapFile{Data: []byte("x")}}
	if _, err := NewFS(bad, "/sys").UmadDevices(); err == nil {
		t.Error("class/infiniband_mad as a file: no error")
	}
	if _, err := NewFS(bad, "/sys").UmadDeviceFor("x", 1); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("UmadDeviceFor on a broken tree: %v", err)
	}
}

func TestVerbsDevices(t *testing.T) {
	tests := []struct {
		fixture string
		want    []VerbsDevice
	}{
		{"mlx5", []VerbsDevice{{0, "mlx5_0", 1}, {1, "mlx5_1", 1}}},
		{"rxe", []VerbsDevice{{0, "rxe0", 2}}},
		// uverbs3 names a device that is gone; uverbs10 sorts after uverbs2.
		{"edge", []VerbsDevice{{0, "odd0", 0}, {1, "minimal0", 0}, {2, "iwarp0", 0}, {10, "sw0", 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := fixtureFS(tt.fixture).VerbsDevices()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected verbs devices (-want +got):\n%s", diff)
			}
		})
	}
	_, err := fixtureFS("broken").VerbsDevices()
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != "readdir /sys/class/infiniband_verbs: no such file or directory" {
		t.Errorf("no infiniband_verbs: %v", err)
	}
}

// TestVerbsDevicesSkipped checks that a uverbsN whose ibdev does not read
// or names nothing is left out and said, while one naming a device that is
// gone is left out as libibverbs leaves it.
func TestVerbsDevicesSkipped(t *testing.T) {
	m := fstest.MapFS{
		"class/infiniband/dev0/node_type":        {Data: []byte("1: CA\n")},
		"class/infiniband_verbs/uverbs0/ibdev":   {Data: []byte("dev0\n")},
		"class/infiniband_verbs/uverbs1/ibdev":   {Mode: fs.ModeDir},
		"class/infiniband_verbs/uverbs2/ibdev":   {Data: []byte("a/b\n")},
		"class/infiniband_verbs/uverbs3/ibdev":   {Data: []byte("gone0\n")},
		"class/infiniband_verbs/uverbs4/abi_ver": {Data: []byte("1\n")},
	}
	got, err := NewFS(m, "/sys").VerbsDevices()
	if diff := cmp.Diff([]VerbsDevice{{Index: 0, Device: "dev0"}}, got); diff != "" {
		t.Errorf("unexpected verbs devices (-want +got):\n%s", diff)
	}
	const want = "read /sys/class/infiniband_verbs/uverbs1/ibdev: invalid argument\n" +
		`parse /sys/class/infiniband_verbs/uverbs2/ibdev: invalid device name "a/b": want a directory name under /sys/class/infiniband` + "\n" +
		"open /sys/class/infiniband_verbs/uverbs4/ibdev: file does not exist"
	var skipped *SkippedError
	if !errors.As(err, &skipped) || err.Error() != want {
		t.Errorf("error %v, want a *SkippedError:\n%s", err, want)
	}
	if skipped != nil && (skipped.Lookup("uverbs2") == nil || skipped.Lookup("uverbs3") != nil) {
		t.Errorf("Lookup: %v, %v", skipped.Lookup("uverbs2"), skipped.Lookup("uverbs3"))
	}
}

func TestClassIndex(t *testing.T) {
	tests := []struct {
		name string
		want int
		ok   bool
	}{
		{"umad0", 0, true}, {"umad12", 12, true}, {"umad", 0, false}, {"umad01", 0, false},
		{"umadX", 0, false}, {"issm0", 0, false}, {"umad-1", 0, false}, {"umad9999999999", 0, false},
	}
	for _, tt := range tests {
		got, ok := classIndex(tt.name, "umad")
		if got != tt.want || ok != tt.ok {
			t.Errorf("classIndex(%q) = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
