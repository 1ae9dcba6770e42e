package cmd

import (
	"io/fs"
	"os"
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
// --sysfs, $IBTOOL_SYSFS, or /sys.
func (f *Factory) localSysfs(o *CommonOptions) (fs.FS, string, error) {
	if f.useSim(o) {
		return f.simSysfs(o.context())
	}
	root := o.Sysfs
	if root == "" {
		root = f.Getenv("IBTOOL_SYSFS")
	}
	if root == "" {
		root = "/sys"
	}
	return os.DirFS(root), root, nil
}
