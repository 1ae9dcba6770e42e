package rdma

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// RDMACharDevDir is where the kernel's RDMA character devices live
// (RDMA_CDEV_DIR in rdma-core).
const RDMACharDevDir = "/dev/infiniband"

// UmadDevice is one user MAD device, class/infiniband_mad/umadN: the
// kernel's MAD interface to one port of one RDMA device.
type UmadDevice struct {
	Index  int    // N: the device is umadN, its SM interface issmN
	Device string // ibdev: the RDMA device name
	Port   int    // port: the port number on that device
}

// Name returns the character device name, "umadN".
func (u UmadDevice) Name() string { return "umad" + strconv.Itoa(u.Index) }

// DevPath returns the character device to open, /dev/infiniband/umadN.
func (u UmadDevice) DevPath() string { return RDMACharDevDir + "/" + u.Name() }

// IssmPath returns the SM-capability device, /dev/infiniband/issmN.
func (u UmadDevice) IssmPath() string { return RDMACharDevDir + "/issm" + strconv.Itoa(u.Index) }

// UmadABIVersion returns class/infiniband_mad/abi_version, the user MAD
// ABI the kernel speaks (5 today). It fails when ib_umad is not loaded.
func (f *FS) UmadABIVersion() (int, error) {
	v, err := f.readUint(classMAD + "/abi_version")
	if err != nil {
		return 0, err
	}
	return int(uint32(v)), nil
}

// UmadDevices returns every umadN under class/infiniband_mad by increasing
// N. Entries whose ibdev or port do not read are left out, as libibumad
// skips them. A tree without class/infiniband_mad has none.
func (f *FS) UmadDevices() ([]UmadDevice, error) {
	out, _, err := f.umadDevices()
	return out, err
}

// umadDevices is UmadDevices with the errors of the entries it leaves out.
func (f *FS) umadDevices() ([]UmadDevice, []DeviceError, error) {
	entries, err := f.ReadDir(classMAD)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var out []UmadDevice
	var skipped []DeviceError
	for _, e := range entries {
		idx, ok := classIndex(e.Name(), "umad")
		if !ok {
			continue
		}
		dir := classMAD + "/" + e.Name()
		dev, err := f.readString(dir+"/ibdev", 0)
		if err != nil {
			skipped = append(skipped, DeviceError{Name: e.Name(), Err: err})
			continue
		}
		port, err := f.readUint(dir + "/port")
		if err != nil {
			skipped = append(skipped, DeviceError{Name: e.Name(), Err: err})
			continue
		}
		out = append(out, UmadDevice{Index: idx, Device: dev, Port: int(uint32(port))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, skipped, nil
}

// UmadDeviceFor returns the umad device of port on device dev, the one with
// the lowest N when several match (libibumad's dev_to_umad_id). The error
// for no match matches fs.ErrNotExist; when entries were left out because
// they did not read, it names them, since one of them may be the device.
func (f *FS) UmadDeviceFor(dev string, port int) (UmadDevice, error) {
	all, skipped, err := f.umadDevices()
	if err != nil {
		return UmadDevice{}, err
	}
	for _, u := range all {
		if u.Device == dev && u.Port == port {
			return u, nil
		}
	}
	var unread string
	if len(skipped) > 0 {
		msgs := make([]string, len(skipped))
		for i := range skipped {
			msgs[i] = skipped[i].Error()
		}
		unread = " (left out: " + strings.Join(msgs, "; ") + ")"
	}
	return UmadDevice{}, fmt.Errorf("no umad device for %s port %d under %s%s: %w", dev, port, f.Path(classMAD), unread, fs.ErrNotExist)
}

// classIndex parses "<prefix>N" with N decimal and returns N.
func classIndex(name, prefix string) (int, bool) {
	s, ok := strings.CutPrefix(name, prefix)
	if !ok || s == "" || len(s) > 9 || !isDecimal(s) || (s[0] == '0' && s != "0") {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
