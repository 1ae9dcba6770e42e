package rdma

import (
	"sort"
	"strings"
)

// VerbsDevice is one user verbs device, class/infiniband_verbs/uverbsN:
// the kernel's verbs interface to one RDMA device.
type VerbsDevice struct {
	Index  int    // N: the device is /dev/infiniband/uverbsN
	Device string // ibdev: the RDMA device name
	// ABIVersion is uverbsN/abi_version, the driver's user ABI; 0 when
	// missing.
	ABIVersion int
}

// VerbsDevices returns the user verbs devices by increasing N: every
// uverbsN whose ibdev reads and names a directory under class/infiniband.
//
// libibverbs lists devices in the kernel's device index order when it
// gets them over netlink (its normal way), which is the order devices
// registered; uverbsN numbers are handed out in that same order, so
// increasing N is that order unless devices came and went. libibverbs
// also drops devices no user-space provider claims, which sysfs alone
// cannot tell.
//
// A tree without class/infiniband_verbs gives an error matching
// fs.ErrNotExist, as libibverbs fails (ENOSYS) without it.
//
// A uverbsN whose ibdev names a device no longer under class/infiniband is
// left out, as libibverbs leaves it out: the device went away. One whose
// ibdev does not read, or names nothing, is left out too, but the others
// come back with a *SkippedError naming it.
func (f *FS) VerbsDevices() ([]VerbsDevice, error) {
	entries, err := f.ReadDir(classVerbs)
	if err != nil {
		return nil, err
	}
	var out []VerbsDevice
	var skipped []DeviceError
	for _, e := range entries {
		idx, ok := classIndex(e.Name(), "uverbs")
		if !ok {
			continue
		}
		dir := classVerbs + "/" + e.Name()
		b, err := f.ReadFile(dir + "/ibdev")
		if err != nil {
			skipped = append(skipped, DeviceError{Name: e.Name(), Err: err})
			continue
		}
		dev := verbsString(b)
		if !validName(dev) {
			err := f.parseError(dir+"/ibdev", &ParseError{Kind: "device name", Input: dev, Reason: "want a directory name under " + f.Path(classInfiniBand)})
			skipped = append(skipped, DeviceError{Name: e.Name(), Err: err})
			continue
		}
		if !f.IsDir(classInfiniBand + "/" + dev) {
			continue
		}
		v := VerbsDevice{Index: idx, Device: dev}
		if abi, err := f.readUint(dir + "/abi_version"); err == nil {
			v.ABIVersion = int(uint32(abi))
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	if skipped != nil {
		return out, &SkippedError{Skipped: skipped}
	}
	return out, nil
}

// verbsString is what libibverbs' ibv_read_sysfs_file leaves of a file:
// one trailing newline dropped, cut at the first NUL.
func verbsString(b []byte) string {
	s := strings.TrimSuffix(string(b), "\n")
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return s
}
