package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// useSim reports whether tools talk to the ibsim simulator instead of the
// kernel: --sim, IBTOOL_SIM=1, or IBSIM_SOCKNAME set (as for the C tools
// under the shim).
func (f *Factory) useSim(o *CommonOptions) bool {
	return o.Sim || f.Getenv("IBTOOL_SIM") == "1" || f.Getenv("IBSIM_SOCKNAME") != ""
}

// localSysfs returns the sysfs tree that local tools (ibstat, ibstatus,
// ibv_devices) read, and the path it stands for, used in messages. On the
// simulator it is the attach point presented as device ibsim0, exactly as
// libumad2sim presents it to the C tools; otherwise the directory named by
// --sysfs, $IBTOOL_SYSFS, or /sys. A directory named by the flag or the
// variable must be there: a mistyped one would otherwise read as a machine
// without RDMA devices.
func (f *Factory) localSysfs(o *CommonOptions) (fs.FS, string, error) {
	if f.useSim(o) {
		return f.simSysfs(o.context())
	}
	root, named := o.Sysfs, "--sysfs "
	if root == "" {
		root, named = f.Getenv("IBTOOL_SYSFS"), "IBTOOL_SYSFS="
	}
	if root == "" {
		return os.DirFS("/sys"), "/sys", nil
	}
	if err := checkSysfsRoot(named+root, root); err != nil {
		return nil, "", err
	}
	return os.DirFS(root), root, nil
}

// checkSysfsRoot checks that root is a directory (after symbolic links);
// what says where it came from, "--sysfs DIR" or "IBTOOL_SYSFS=DIR". One
// that is not there or not a directory is a usage error.
func checkSysfsRoot(what, root string) error {
	const want = "; want the sysfs mount point, such as /sys"
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return usageErrorf("%s: no such directory%s", what, want)
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case !fi.IsDir():
		return usageErrorf("%s: not a directory%s", what, want)
	}
	return nil
}

// openLocalSysfs opens the device tree the local tools read.
func openLocalSysfs(f *Factory, o *CommonOptions) (*rdma.FS, error) {
	fsys, root, err := f.localSysfs(o)
	if err != nil {
		return nil, err
	}
	return rdma.NewFS(fsys, root), nil
}
